/* Backward workspaces (delta and the dQ accumulator), one per CUDA context and stream: kernels
 * on one stream run in order, so calls on that stream can share it. Growing replaces the
 * buffer; the old one is freed by its last user once its stream has finished with it. */
#include <stdlib.h>

#include "rt_internal.h"

static void destroy(const cu_driver *cu, rt_workspace *ws)
{
    /* Launches still queued may read it: wait for them first. The whole context, not the
     * stream: the caller may have destroyed the stream since (synchronizing a destroyed stream
     * crashed inside the driver at ft_close, found by test_runtime_gpu on the H100). */
    CUcontext popped;
    if (cu->CtxPushCurrent(ws->context) == CUDA_SUCCESS) {
        cu->CtxSynchronize();
        cu->MemFree(ws->ptr);
        cu->CtxPopCurrent(&popped);
    }
    free(ws);
}

ft_status rt_workspace_acquire(ft_context *ctx, const char *func, const cu_driver *cu, CUcontext context,
                               CUstream stream, size_t bytes, rt_workspace **out)
{
    pthread_mutex_lock(&ctx->lock);
    rt_workspace **link = &ctx->workspaces, *ws = NULL;
    for (; *link; link = &(*link)->next)
        if ((*link)->context == context && (*link)->stream == stream) {
            ws = *link;
            break;
        }
    if (ws && ws->bytes >= bytes) {
        ws->users++;
        pthread_mutex_unlock(&ctx->lock);
        *out = ws;
        return FT_OK;
    }
    if (rt_stream_capturing(cu, stream)) {   /* growing would allocate, and free what the graph may use */
        pthread_mutex_unlock(&ctx->lock);
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT,
                       "%s: stream is capturing a CUDA graph and the library's workspace for it must grow to %zu "
                       "bytes, which would allocate: pass a workspace (the _ws calls), or make one call before "
                       "the capture", func, bytes);
    }
    rt_workspace *old = ws;
    if (old) {   /* out of the list; freed below or by its last user */
        *link = old->next;
        old->retired = 1;
        if (old->users > 0)
            old = NULL;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (old)
        destroy(cu, old);

    ws = calloc(1, sizeof *ws);
    if (!ws)
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    /* Grow by half again, so a slowly rising size does not reallocate every call. */
    const size_t want = bytes + bytes / 2;
    CUresult rc = cu->MemAlloc(&ws->ptr, want);
    if (rc != CUDA_SUCCESS) {
        free(ws);
        return rt_fail_cuda(ctx, func, "cuMemAlloc of the workspace", rc);
    }
    ws->context = context;
    ws->stream = stream;
    ws->bytes = want;
    ws->users = 1;
    pthread_mutex_lock(&ctx->lock);
    ws->next = ctx->workspaces;
    ctx->workspaces = ws;
    pthread_mutex_unlock(&ctx->lock);
    *out = ws;
    return FT_OK;
}

void rt_workspace_release(ft_context *ctx, const cu_driver *cu, rt_workspace *ws)
{
    pthread_mutex_lock(&ctx->lock);
    const int last = --ws->users == 0 && ws->retired;
    pthread_mutex_unlock(&ctx->lock);
    if (last)
        destroy(cu, ws);
}

void rt_workspaces_free(ft_context *ctx, const cu_driver *cu)
{
    for (rt_workspace *ws = ctx->workspaces; ws;) {
        rt_workspace *next = ws->next;
        destroy(cu, ws);
        ws = next;
    }
    ctx->workspaces = NULL;
}
