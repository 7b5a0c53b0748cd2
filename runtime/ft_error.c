/* Errors and versions: the per-thread last message, status names, the version string. */
#include <stdarg.h>
#include <stdio.h>

#include "rt_internal.h"

/* Per thread, so threads sharing a context never read each other's half-written message. */
static _Thread_local struct {
    const ft_context *ctx;
    char message[RT_ERR_LEN];
} last;

ft_status rt_fail(const ft_context *ctx, ft_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last.message, sizeof last.message, fmt, ap);
    va_end(ap);
    last.ctx = ctx;
    return status;
}

const char *ft_last_error(const ft_context *ctx)
{
    return last.ctx == ctx ? last.message : "";
}

const char *ft_status_str(ft_status status)
{
    switch (status) {
    case FT_OK: return "FT_OK: success";
    case FT_ERR_INVALID_ARGUMENT: return "FT_ERR_INVALID_ARGUMENT: an argument is invalid";
    case FT_ERR_UNSUPPORTED: return "FT_ERR_UNSUPPORTED: the kernels do not support this problem";
    case FT_ERR_NO_DEVICE: return "FT_ERR_NO_DEVICE: no usable GPU or CUDA driver";
    case FT_ERR_CUDA: return "FT_ERR_CUDA: a CUDA driver call failed";
    case FT_ERR_COMPILE: return "FT_ERR_COMPILE: NVRTC could not compile the kernel";
    case FT_ERR_DB: return "FT_ERR_DB: database error";
    case FT_ERR_OUT_OF_MEMORY: return "FT_ERR_OUT_OF_MEMORY: out of memory";
    case FT_ERR_INTERNAL: return "FT_ERR_INTERNAL: internal error";
    case FT_ERR_IO: return "FT_ERR_IO: a file could not be read or written";
    }
    return "unknown ft_status";
}

#define FT_STR2(x) #x
#define FT_STR(x) FT_STR2(x)

const char *ft_version(void)
{
    return FT_STR(FT_VERSION_MAJOR) "." FT_STR(FT_VERSION_MINOR) "." FT_STR(FT_VERSION_PATCH);
}
