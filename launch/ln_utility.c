/* The tuner's utility kernels of the ref module (templates/families/ref.cu): random inputs and the
 * comparison with the reference, on the device. Grid-stride loops: any grid works, this one
 * fills the GPU a few times over. */
#include "ln_internal.h"

#define UTILITY_THREADS 256

CUresult ln_utilities_load(const cu_driver *cu, CUmodule ref_module, int sm_count, ln_utilities *out)
{
    CUresult rc;
    out->sm_count = sm_count;
    if ((rc = cu->ModuleGetFunction(&out->fill_normal, ref_module, "ft_ref_fill_normal")) != CUDA_SUCCESS)
        return rc;
    return cu->ModuleGetFunction(&out->compare, ref_module, "ft_ref_compare");
}

static unsigned blocks(const ln_utilities *u)
{
    return (unsigned)(u->sm_count > 0 ? u->sm_count * 8 : 1024);
}

CUresult ln_fill_normal(const cu_driver *cu, const ln_utilities *u, CUdeviceptr dst, size_t n,
                        unsigned long long seed, CUstream stream)
{
    long long count = (long long)n;
    void *params[] = { &dst, &count, &seed };
    return ln_launch_one(cu, u->fill_normal, blocks(u), 1, UTILITY_THREADS, 0, stream, params);
}

CUresult ln_compare(const cu_driver *cu, const ln_utilities *u, CUdeviceptr got, CUdeviceptr want, size_t n, int acc,
                    CUdeviceptr stats, CUstream stream)
{
    long long count = (long long)n;
    void *params[] = { &got, &want, &count, &acc, &stats };
    return ln_launch_one(cu, u->compare, blocks(u), 1, UTILITY_THREADS, 0, stream, params);
}
