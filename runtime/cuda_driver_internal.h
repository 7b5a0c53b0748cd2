/* The CUDA driver, opened with dlopen at run time: the one table of driver entry points.
 * Nothing in flashtune links libcuda, so every binary starts on a machine without a GPU;
 * callers get a clear message instead. Types come from the toolkit's cuda.h (header only). */
#ifndef FT_CUDA_DRIVER_INTERNAL_H
#define FT_CUDA_DRIVER_INTERNAL_H

#include <stddef.h>
#include <cuda.h>

typedef struct cu_driver {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorName)(CUresult error, const char **name);
    CUresult (*GetErrorString)(CUresult error, const char **text);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice device);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attrib, CUdevice device);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice device);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice device);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxPushCurrent)(CUcontext ctx);
    CUresult (*CtxPopCurrent)(CUcontext *ctx);
    CUresult (*CtxGetDevice)(CUdevice *device);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *module, const void *image);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction fn, CUfunction_attribute attrib, int value);
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attrib, CUfunction fn);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction fn, int block_size,
                                                          size_t smem_bytes);
    CUresult (*LaunchKernel)(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int smem_bytes, CUstream stream, void **params, void **extra);
    CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr ptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);
    CUresult (*MemsetD32)(CUdeviceptr dst, unsigned int value, size_t count);
    CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
    CUresult (*StreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (*StreamDestroy)(CUstream stream);
    CUresult (*StreamSynchronize)(CUstream stream);
    CUresult (*StreamIsCapturing)(CUstream stream, CUstreamCaptureStatus *status);
    CUresult (*EventCreate)(CUevent *event, unsigned int flags);
    CUresult (*EventRecord)(CUevent event, CUstream stream);
    CUresult (*EventSynchronize)(CUevent event);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*EventDestroy)(CUevent event);
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                     const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                     const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
                                     CUtensorMapFloatOOBfill fill);
} cu_driver;

/* Opens the driver once per process (thread-safe) and calls cuInit(0).
 * OUT driver: the table, valid for the life of the process, or NULL on failure.
 * Returns 0 on success; otherwise -1 and a message in err naming the library and the reason.
 * The library path is libcuda.so.1 unless FLASHTUNE_CUDA_DRIVER names another file
 * (the tests point it at a missing file to exercise the no-driver path). */
int cu_driver_open(const cu_driver **driver, char *err, size_t err_len);

/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered", or a fallback
 * naming the number when the driver cannot say. Writes into buf and returns it. */
const char *cu_result_str(CUresult result, char *buf, size_t len);

#endif
