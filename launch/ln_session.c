/* A session on one device for the tuner's worker (tune --device N), the GPU tests and the
 * benchmarks (device 0): the driver, the device's primary context (made current) and what the
 * generator needs to know of it. */
#include <stdio.h>
#include <string.h>

#include "ln_internal.h"

int ln_session_open(ln_session *s, char *why, size_t len)
{
    return ln_session_open_device(s, 0, why, len);
}

int ln_session_open_device(ln_session *s, int ordinal, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    if (cu_driver_open(&s->cu, why, len) != 0)
        return -1;
    const cu_driver *cu = s->cu;
    char buf[256];
    CUresult rc;
    if ((rc = cu->DeviceGet(&s->device, ordinal)) != CUDA_SUCCESS) {
        snprintf(why, len, "device %d: cuDeviceGet failed: %s", ordinal, cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    if ((rc = cu->DevicePrimaryCtxRetain(&s->context, s->device)) != CUDA_SUCCESS) {
        s->context = NULL;
        snprintf(why, len, "device %d: cuDevicePrimaryCtxRetain failed: %s", ordinal,
                 cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    if ((rc = cu->CtxSetCurrent(s->context)) != CUDA_SUCCESS) {
        snprintf(why, len, "device %d: cuCtxSetCurrent failed: %s", ordinal, cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    int major = 0, minor = 0;
    cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->device);
    cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->device);
    cu->DeviceGetAttribute(&s->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->device);
    cu->DeviceGetAttribute(&s->smem_limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, s->device);
    cu->DeviceGetName(s->name, sizeof s->name, s->device);
    snprintf(s->arch, sizeof s->arch, "sm_%d%d", major, minor);
    if (!gen_arch_supported(s->arch)) {
        snprintf(why, len, "device %d (%s) is %s, which the generator does not target", ordinal, s->name,
                 s->arch);
        return -1;
    }
    return 0;
}

void ln_session_close(ln_session *s)
{
    if (s->cu && s->context)
        s->cu->DevicePrimaryCtxRelease(s->device);
    memset(s, 0, sizeof *s);
}
