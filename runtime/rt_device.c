/* The driver, the CUDA context a call works in, and what the library knows of each context's
 * GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

ft_status rt_driver(ft_context *ctx, const char *func, const cu_driver **cu)
{
    char why[512];
    if (cu_driver_open(cu, why, sizeof why) != 0)
        return rt_fail(ctx, FT_ERR_NO_DEVICE, "%s: %s", func, why);
    return FT_OK;
}

ft_status rt_fail_cuda(const ft_context *ctx, const char *func, const char *what, CUresult rc)
{
    char buf[256];
    ft_status s = rc == CUDA_ERROR_OUT_OF_MEMORY ? FT_ERR_OUT_OF_MEMORY : FT_ERR_CUDA;
    return rt_fail(ctx, s, "%s: %s failed: %s", func, what, cu_result_str(rc, buf, sizeof buf));
}

static rt_cuctx *find(ft_context *ctx, CUcontext context)
{
    for (rt_cuctx *c = atomic_load_explicit(&ctx->contexts, memory_order_acquire); c;
         c = atomic_load_explicit(&c->next, memory_order_acquire))
        if (c->context == context)
            return c;
    return NULL;
}

/* A record for context (current on this thread): its device and limits. */
static ft_status describe_context(ft_context *ctx, const char *func, const cu_driver *cu, CUcontext context,
                                  rt_cuctx **out)
{
    rt_cuctx *c = calloc(1, sizeof *c);
    if (!c)
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    c->context = context;
    CUresult rc = cu->CtxGetDevice(&c->device);
    int major = 0, minor = 0;
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->device);
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->device);
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetAttribute(&c->info.smem_limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                    c->device);
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetAttribute(&c->info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->device);
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetName(c->info.name, sizeof c->info.name, c->device);
    if (rc != CUDA_SUCCESS) {
        free(c);
        return rt_fail_cuda(ctx, func, "querying the current context's device", rc);
    }
    snprintf(c->info.arch, sizeof c->info.arch, "sm_%d%d", major, minor);
    if (!gen_arch_supported(c->info.arch)) {
        char archs[128];
        gen_arch_names(1, archs, sizeof archs);
        ft_status s = rt_fail(ctx, FT_ERR_NO_DEVICE, "%s: no usable GPU: %s is %s, which flashtune does not target (%s)",
                              func, c->info.name, c->info.arch, archs);
        free(c);
        return s;
    }
    pthread_mutex_lock(&ctx->lock);
    rt_cuctx *again = find(ctx, context);
    if (again) {
        free(c);
        c = again;
    } else {
        atomic_store_explicit(&c->next, atomic_load_explicit(&ctx->contexts, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&ctx->contexts, c, memory_order_release);
    }
    pthread_mutex_unlock(&ctx->lock);
    *out = c;
    return FT_OK;
}

ft_status rt_current(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx **out)
{
    CUcontext context = NULL;
    CUresult rc = cu->CtxGetCurrent(&context);
    if (rc != CUDA_SUCCESS)
        return rt_fail_cuda(ctx, func, "cuCtxGetCurrent", rc);
    if (!context) {
        /* No context on this thread: device 0's primary context, retained once. */
        pthread_mutex_lock(&ctx->lock);
        if (!ctx->primary) {
            rc = cu->DeviceGet(&ctx->primary_device, 0);
            if (rc == CUDA_SUCCESS)
                rc = cu->DevicePrimaryCtxRetain(&ctx->primary, ctx->primary_device);
        }
        context = ctx->primary;
        pthread_mutex_unlock(&ctx->lock);
        if (rc != CUDA_SUCCESS)
            return rt_fail_cuda(ctx, func, "retaining device 0's primary context", rc);
        if ((rc = cu->CtxSetCurrent(context)) != CUDA_SUCCESS)
            return rt_fail_cuda(ctx, func, "cuCtxSetCurrent", rc);
    }
    rt_cuctx *c = find(ctx, context);
    if (c) {
        *out = c;
        return FT_OK;
    }
    return describe_context(ctx, func, cu, context, out);
}
