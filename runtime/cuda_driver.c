/* The dlopen shim for libcuda: resolves every entry point flashtune uses, once per process. */
#include "cuda_driver_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cu_driver table;
static int open_status = -1;
static char open_error[512];
static pthread_once_t open_once = PTHREAD_ONCE_INIT;

/* Versioned names are the ones the toolkit's cuda.h maps the plain names to. */
#define RESOLVE(field, symbol)                                                          \
    do {                                                                                \
        *(void **)(&table.field) = dlsym(lib, symbol);                                  \
        if (!table.field) {                                                             \
            snprintf(open_error, sizeof open_error, "%s: entry point %s is missing", \
                     path, symbol);                                                     \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void open_driver(void)
{
    const char *path = getenv("FLASHTUNE_CUDA_DRIVER");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(open_error, sizeof open_error,
                 "no CUDA driver: cannot open %s (%s); a GPU and its driver are needed for this",
                 path, why ? why : "unknown reason");
        return;
    }
    RESOLVE(Init, "cuInit");
    RESOLVE(DriverGetVersion, "cuDriverGetVersion");
    RESOLVE(GetErrorName, "cuGetErrorName");
    RESOLVE(GetErrorString, "cuGetErrorString");
    RESOLVE(DeviceGetCount, "cuDeviceGetCount");
    RESOLVE(DeviceGet, "cuDeviceGet");
    RESOLVE(DeviceGetName, "cuDeviceGetName");
    RESOLVE(DeviceGetAttribute, "cuDeviceGetAttribute");
    RESOLVE(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    RESOLVE(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    RESOLVE(CtxGetCurrent, "cuCtxGetCurrent");
    RESOLVE(CtxSetCurrent, "cuCtxSetCurrent");
    RESOLVE(CtxPushCurrent, "cuCtxPushCurrent_v2");
    RESOLVE(CtxPopCurrent, "cuCtxPopCurrent_v2");
    RESOLVE(CtxGetDevice, "cuCtxGetDevice");
    RESOLVE(CtxSynchronize, "cuCtxSynchronize");
    RESOLVE(ModuleLoadData, "cuModuleLoadData");
    RESOLVE(ModuleUnload, "cuModuleUnload");
    RESOLVE(ModuleGetFunction, "cuModuleGetFunction");
    RESOLVE(FuncSetAttribute, "cuFuncSetAttribute");
    RESOLVE(FuncGetAttribute, "cuFuncGetAttribute");
    RESOLVE(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    RESOLVE(LaunchKernel, "cuLaunchKernel");
    RESOLVE(MemAlloc, "cuMemAlloc_v2");
    RESOLVE(MemFree, "cuMemFree_v2");
    RESOLVE(MemcpyHtoD, "cuMemcpyHtoD_v2");
    RESOLVE(MemcpyDtoH, "cuMemcpyDtoH_v2");
    RESOLVE(MemcpyDtoD, "cuMemcpyDtoD_v2");
    RESOLVE(MemsetD8, "cuMemsetD8_v2");
    RESOLVE(MemsetD32, "cuMemsetD32_v2");
    RESOLVE(MemsetD8Async, "cuMemsetD8Async");
    RESOLVE(StreamCreate, "cuStreamCreate");
    RESOLVE(StreamDestroy, "cuStreamDestroy_v2");
    RESOLVE(StreamSynchronize, "cuStreamSynchronize");
    RESOLVE(StreamIsCapturing, "cuStreamIsCapturing");
    RESOLVE(EventCreate, "cuEventCreate");
    RESOLVE(EventRecord, "cuEventRecord");
    RESOLVE(EventSynchronize, "cuEventSynchronize");
    RESOLVE(EventElapsedTime, "cuEventElapsedTime");
    RESOLVE(EventDestroy, "cuEventDestroy_v2");
    RESOLVE(TensorMapEncodeTiled, "cuTensorMapEncodeTiled");

    CUresult rc = table.Init(0);
    if (rc != CUDA_SUCCESS) {
        char buf[200];
        snprintf(open_error, sizeof open_error, "no usable GPU: cuInit failed (%s)",
                 cu_result_str(rc, buf, sizeof buf));
        return;
    }
    int count = 0;
    if (table.DeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
        snprintf(open_error, sizeof open_error, "no GPU: the CUDA driver reports %d devices", count);
        return;
    }
    open_status = 0;
}

int cu_driver_open(const cu_driver **driver, char *err, size_t err_len)
{
    pthread_once(&open_once, open_driver);
    if (open_status != 0) {
        if (driver)
            *driver = NULL;
        if (err && err_len)
            snprintf(err, err_len, "%s", open_error);
        return -1;
    }
    if (driver)
        *driver = &table;
    return 0;
}

const char *cu_result_str(CUresult result, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (open_status == 0 || table.GetErrorName) {
        table.GetErrorName(result, &name);
        table.GetErrorString(result, &text);
    }
    if (name)
        snprintf(buf, len, "%s: %s", name, text ? text : "");
    else
        snprintf(buf, len, "CUDA error %d", (int)result);
    return buf;
}
