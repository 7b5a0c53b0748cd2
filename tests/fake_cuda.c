/* A stand-in libcuda for CPU tests of device selection (FLASHTUNE_CUDA_DRIVER=libft_fake_cuda.so):
 * it reports $FAKE_CUDA_DEVICES GPUs (default 2) named "Fake GPU <n>", sm_90, and refuses to make
 * a context, so whatever opens a device stops right after choosing it. Each cuDeviceGet and
 * cuDevicePrimaryCtxRetain appends "name ordinal" to the file $FAKE_CUDA_LOG, when set, which
 * is how a test sees which device a child process opened. Every other entry point answers
 * CUDA_ERROR_NOT_SUPPORTED. cuda.h is not included: its prototypes would have to be matched for
 * every stub; the few enum values used are copied from it (they are ABI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SUCCESS = 0,
    ERROR_INVALID_DEVICE = 101,
    ERROR_NOT_SUPPORTED = 801,
    ATTR_MULTIPROCESSOR_COUNT = 16,
    ATTR_L2_CACHE_SIZE = 38,
    ATTR_CC_MAJOR = 75,
    ATTR_CC_MINOR = 76,
    ATTR_SMEM_OPTIN = 97,
};

static int device_count(void)
{
    const char *n = getenv("FAKE_CUDA_DEVICES");
    return n && *n ? atoi(n) : 2;
}

static void note(const char *call, int ordinal)
{
    const char *path = getenv("FAKE_CUDA_LOG");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s %d\n", call, ordinal);
        fclose(f);
    }
}

int cuInit(unsigned flags)
{
    (void)flags;
    return SUCCESS;
}

int cuDriverGetVersion(int *version)
{
    *version = 13000;
    return SUCCESS;
}

int cuGetErrorName(int error, const char **name)
{
    *name = error == ERROR_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE"
            : error == ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
    return SUCCESS;
}

int cuGetErrorString(int error, const char **text)
{
    *text = error == ERROR_NOT_SUPPORTED ? "the fake driver makes no context" : "fake driver error";
    return SUCCESS;
}

int cuDeviceGetCount(int *count)
{
    *count = device_count();
    return SUCCESS;
}

int cuDeviceGet(int *device, int ordinal)
{
    note("cuDeviceGet", ordinal);
    if (ordinal < 0 || ordinal >= device_count())
        return ERROR_INVALID_DEVICE;
    *device = ordinal;
    return SUCCESS;
}

int cuDeviceGetName(char *name, int len, int device)
{
    snprintf(name, (size_t)len, "Fake GPU %d", device);
    return SUCCESS;
}

int cuDeviceGetAttribute(int *value, int attribute, int device)
{
    (void)device;
    switch (attribute) {
    case ATTR_MULTIPROCESSOR_COUNT: *value = 132; break;
    case ATTR_L2_CACHE_SIZE: *value = 50 << 20; break;
    case ATTR_CC_MAJOR: *value = 9; break;
    case ATTR_CC_MINOR: *value = 0; break;
    case ATTR_SMEM_OPTIN: *value = 227 << 10; break;
    default: *value = 0;
    }
    return SUCCESS;
}

int cuDevicePrimaryCtxRetain(void **context, int device)
{
    note("cuDevicePrimaryCtxRetain", device);
    *context = NULL;
    return ERROR_NOT_SUPPORTED;
}

#define UNSUPPORTED(symbol) \
    int symbol(void)        \
    {                       \
        return ERROR_NOT_SUPPORTED; \
    }
UNSUPPORTED(cuDevicePrimaryCtxRelease_v2)
UNSUPPORTED(cuCtxGetCurrent)
UNSUPPORTED(cuCtxSetCurrent)
UNSUPPORTED(cuCtxPushCurrent_v2)
UNSUPPORTED(cuCtxPopCurrent_v2)
UNSUPPORTED(cuCtxGetDevice)
UNSUPPORTED(cuCtxSynchronize)
UNSUPPORTED(cuModuleLoadData)
UNSUPPORTED(cuModuleUnload)
UNSUPPORTED(cuModuleGetFunction)
UNSUPPORTED(cuFuncSetAttribute)
UNSUPPORTED(cuFuncGetAttribute)
UNSUPPORTED(cuOccupancyMaxActiveBlocksPerMultiprocessor)
UNSUPPORTED(cuLaunchKernel)
UNSUPPORTED(cuMemAlloc_v2)
UNSUPPORTED(cuMemFree_v2)
UNSUPPORTED(cuMemcpyHtoD_v2)
UNSUPPORTED(cuMemcpyDtoH_v2)
UNSUPPORTED(cuMemcpyDtoD_v2)
UNSUPPORTED(cuMemsetD8_v2)
UNSUPPORTED(cuMemsetD32_v2)
UNSUPPORTED(cuMemsetD8Async)
UNSUPPORTED(cuStreamCreate)
UNSUPPORTED(cuStreamDestroy_v2)
UNSUPPORTED(cuStreamSynchronize)
UNSUPPORTED(cuStreamIsCapturing)
UNSUPPORTED(cuEventCreate)
UNSUPPORTED(cuEventRecord)
UNSUPPORTED(cuEventSynchronize)
UNSUPPORTED(cuEventElapsedTime)
UNSUPPORTED(cuEventDestroy_v2)
UNSUPPORTED(cuTensorMapEncodeTiled)
