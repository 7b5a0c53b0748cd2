/* The public entry points: open/close, the attention calls (check everything, then a plan
 * lookup and the launches), the workspace size and ft_describe_choice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

/* 1 when path and its folder are writable (WAL mode creates files beside it). */
static int writable(const char *path)
{
    if (access(path, W_OK) != 0)
        return 0;
    const char *slash = strrchr(path, '/');
    if (!slash)
        return access(".", W_OK) == 0;
    char dir[4096];
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir)
        return 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return access(dir, W_OK) == 0;
}

ft_status ft_open(const char *db_path, ft_context **out)
{
    if (!out)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "ft_open: ctx is NULL");
    *out = NULL;
    if (db_path && !*db_path)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "ft_open: db_path is empty (NULL opens no database)");
    struct stat sb;
    if (db_path && stat(db_path, &sb) != 0)
        return rt_fail(NULL, FT_ERR_DB, "ft_open: database %s: %s (ft_open never creates one; `flashtune tune` "
                       "does, or pass NULL for none)", db_path, strerror(errno));
    ft_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return rt_fail(NULL, FT_ERR_OUT_OF_MEMORY, "ft_open: out of memory");
    pthread_mutex_init(&ctx->lock, NULL);
    rt_disk_cache_dir(ctx->cache_dir, sizeof ctx->cache_dir);
    const char *capture = getenv("FLASHTUNE_CAPTURE");
    if (capture && strlen(capture) >= sizeof ctx->capture) {
        ft_close(ctx);
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "ft_open: FLASHTUNE_CAPTURE is longer than %zu characters",
                       sizeof ctx->capture - 1);
    }
    snprintf(ctx->capture, sizeof ctx->capture, "%s", capture ? capture : "");
    char err[RT_ERR_LEN];
    if (db_path) {
        ctx->user_writable = writable(db_path);
        if (db_open(db_path, ctx->user_writable ? 0 : DB_OPEN_READONLY, &ctx->user, err, sizeof err) != 0) {
            ft_close(ctx);
            return rt_fail(NULL, FT_ERR_DB, "ft_open: %s", err);
        }
    }
    if (rt_shipped_open(&ctx->shipped, err, sizeof err) != 0) {
        ft_close(ctx);
        return rt_fail(NULL, FT_ERR_INTERNAL, "ft_open: the shipped winners do not load: %s", err);
    }
    *out = ctx;
    return FT_OK;
}

void ft_close(ft_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->capture[0] && rt_capture_flush(ctx, "ft_close") != FT_OK)
        fprintf(stderr, "flashtune: %s\n", ft_last_error(ctx));
    const cu_driver *cu = NULL;
    if (atomic_load(&ctx->contexts) || ctx->workspaces || ctx->primary)
        cu_driver_open(&cu, NULL, 0);
    rt_plans_free(ctx);
    if (cu)
        rt_workspaces_free(ctx, cu);
    rt_modules_free(ctx, cu);
    if (cu && ctx->primary)
        cu->DevicePrimaryCtxRelease(ctx->primary_device);
    db_close(ctx->user);
    db_close(ctx->shipped);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* The caller's desc copied (the ABI rule) and checked: every entry point reads *d, never user.
 * OUT: *d, *w. */
static ft_status take_desc(const char *func, const ft_attention_desc *user, int backward, ft_attention_desc *d,
                           db_workload *w, char *err, size_t len)
{
    ft_status s = rt_desc_copy(func, user, d, err, len);
    return s != FT_OK ? s : rt_check_desc(func, d, backward, w, err, len);
}

/* The tensors of a call of desc d (checked) with its pointers p: the forward's five or the
 * backward's nine, into t. Returns their count. */
static int call_tensors(const ft_attention_desc *d, const db_workload *w, const rt_data *p, int backward,
                        rt_tensor t[9])
{
    const int dv = w->head_dim_v, h = d->heads, hk = d->heads_k ? d->heads_k : d->heads;
    /* A variable-length batch's tensors are one packed sequence of all its rows. */
    const int nq = w->varlen ? d->total_q : w->seqlen_q, nk = w->varlen ? d->total_k : w->seqlen_k;
    const rt_tensor fwd[] = {
        { "q", "q_stride", p->q, d->q_stride, h, nq, w->head_dim },
        { "k", "k_stride", p->k, d->k_stride, hk, nk, w->head_dim },
        { "v", "v_stride", p->v, d->v_stride, hk, nk, dv },
        { "o", "o_stride", p->o_out, d->o_stride, h, nq, dv },
        { "lse", NULL, p->lse_out, NULL, h, 0, 0 },
    };
    const rt_tensor bwd[] = {
        { "q", "q_stride", p->q, d->q_stride, h, nq, w->head_dim },
        { "k", "k_stride", p->k, d->k_stride, hk, nk, w->head_dim },
        { "v", "v_stride", p->v, d->v_stride, hk, nk, dv },
        { "o", "o_stride", p->o, d->o_stride, h, nq, dv },
        { "lse", NULL, p->lse, NULL, h, 0, 0 },
        { "dout", "o_stride", p->dout, d->o_stride, h, nq, dv },
        { "dq", "q_stride", p->dq, d->q_stride, h, nq, w->head_dim },
        { "dk", "k_stride", p->dk, d->k_stride, hk, nk, w->head_dim },
        { "dv", "v_stride", p->dv, d->v_stride, hk, nk, dv },
    };
    const int n = backward ? 9 : 5;
    memcpy(t, backward ? bwd : fwd, (size_t)n * sizeof *t);
    return n;
}

/* Checks the call's descriptor (copied into *d) and tensors. OUT: *d, *w, and *rows16 (may be
 * NULL): whether every row starts 16-byte aligned (rt_rows16), which only f32 asks (variant_of). */
static ft_status check_call(ft_context *ctx, const char *func, const ft_attention_desc *user, int backward,
                            int reference, const rt_data *p, ft_attention_desc *d, db_workload *w, int *rows16)
{
    char err[RT_ERR_LEN];
    if (!ctx)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", func);
    ft_status s = take_desc(func, user, backward, d, w, err, sizeof err);
    if (s != FT_OK)
        return rt_fail(ctx, s, "%s", err);
    rt_tensor t[9];
    const int n = call_tensors(d, w, p, backward, t);
    const int tensor_cores = !reference && (w->dtype == FT_F16 || w->dtype == FT_BF16);
    s = rt_check_tensors(func, w, t, n, tensor_cores, err, sizeof err);
    if (rows16)
        *rows16 = w->dtype != FT_F32 || rt_rows16(w, t, n);
    return s == FT_OK ? FT_OK : rt_fail(ctx, s, "%s", err);
}

/* The kernel a call of desc d (checked) wants; the forward is deterministic as it is. Rows not
 * all 16-byte aligned (rows16 0) matter to f32 alone: the 16-bit types refuse them (check_call),
 * f64 runs on CUDA cores anyway; f32 then runs there too, a deterministic backward's as well. */
static rt_variant variant_of(const ft_attention_desc *d, const db_workload *w, int backward, int reference, int rows16)
{
    const int deterministic = backward && d->deterministic, any_rows = !rows16 && w->dtype == FT_F32;
    return reference                    ? RT_REFERENCE
           : deterministic && any_rows ? RT_DETERMINISTIC_ANY_ROWS
           : deterministic             ? RT_DETERMINISTIC
           : any_rows                  ? RT_ANY_ROWS
                                       : RT_TUNED;
}

/* Every attention call: checks, plan, workspace, launches. ws: the caller's workspace or NULL. */
static ft_status run(ft_context *ctx, const char *func, const ft_attention_desc *user, int backward,
                     int reference, const rt_data *p, void *ws, size_t ws_bytes, int caller_ws, void *stream)
{
    ft_attention_desc d;
    db_workload w;
    int rows16 = 1;
    ft_status s = check_call(ctx, func, user, backward, reference, p, &d, &w, &rows16);
    if (s != FT_OK)
        return s;
    size_t accum_offset = 0, split_offset = 0;
    const size_t need = backward ? rt_workspace_bytes(&w, d.total_q, &accum_offset, &split_offset) : 0;
    if (caller_ws) {
        if (!ws && (backward || ws_bytes))   /* a forward's may be NULL: its size may be 0 */
            return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: workspace is NULL", func);
        if ((uintptr_t)ws % 256)
            return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: workspace=%p is not 256-byte aligned", func, ws);
        if (ws_bytes < need)
            return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT,
                           "%s: workspace_bytes=%zu is less than the %zu this problem needs "
                           "(ft_attention_backward_workspace_size)", func, ws_bytes, need);
    }
    const cu_driver *cu;
    rt_cuctx *cc;
    const rt_plan *plan;
    if ((s = rt_driver(ctx, func, &cu)) != FT_OK || (s = rt_current(ctx, func, cu, &cc)) != FT_OK ||
        (s = rt_plan_get(ctx, func, cu, cc, &w, variant_of(&d, &w, backward, reference, rows16), &plan)) != FT_OK)
        return s;
    char err[RT_ERR_LEN];
    if ((s = rt_check_prefix_sums(func, cu, &d, (CUstream)stream, err, sizeof err)) != FT_OK)
        return rt_fail(ctx, s, "%s", err);
    /* A plan that splits a tile's work over blocks (a decode forward's keys, a grouped backward's
     * query heads) keeps their partial results in the workspace too: a forward's from its start,
     * a backward's past delta and the dQ accumulator (rt_workspace_bytes counted them). */
    const size_t split = rt_split_workspace_bytes(plan, &d);
    rt_workspace *cached = NULL;
    CUdeviceptr base = (CUdeviceptr)(uintptr_t)ws;
    if (!caller_ws && (backward || split)) {
        const size_t bytes = backward ? (need > split_offset + split ? need : split_offset + split) : split;
        if ((s = rt_workspace_acquire(ctx, func, cu, cc->context, (CUstream)stream, bytes, &cached)) != FT_OK)
            return s;
        base = cached->ptr;
    } else if (split && ws_bytes < split_offset + split) {   /* the caller's: sized by the problem alone */
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: workspace_bytes=%zu cannot hold the kernel's %zu bytes of "
                       "partial sums past %zu (ft_attention_%s_workspace_size)", func, ws_bytes, split, split_offset,
                       backward ? "backward" : "forward");
    }
    const rt_workspace_ptrs wp = { .delta = backward ? base : 0, .accum = backward && base ? base + accum_offset : 0,
                                   .split = split ? base + split_offset : 0, .split_bytes = split };
    CUresult rc = rt_launch(cu, plan, &d, p, &wp, (CUstream)stream);
    if (cached)
        rt_workspace_release(ctx, cu, cached);
    if (rc != CUDA_SUCCESS)
        return rt_fail_cuda(ctx, func, "cuLaunchKernel", rc);
    rt_capture_count(ctx, plan);
    return FT_OK;
}

ft_status ft_capture_to(ft_context *ctx, const char *path)
{
    if (!ctx)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "ft_capture_to: ctx is NULL");
    if (path && strlen(path) >= sizeof ctx->capture)
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "ft_capture_to: path is longer than %zu characters",
                       sizeof ctx->capture - 1);
    pthread_mutex_lock(&ctx->lock);
    snprintf(ctx->capture, sizeof ctx->capture, "%s", path ? path : "");
    pthread_mutex_unlock(&ctx->lock);
    return FT_OK;
}

ft_status ft_capture_flush(ft_context *ctx)
{
    if (!ctx)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "ft_capture_flush: ctx is NULL");
    return rt_capture_flush(ctx, "ft_capture_flush");
}

ft_status ft_attention_forward(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                               const void *v, void *o, void *lse, void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o_out = o, .lse_out = lse };
    return run(ctx, "ft_attention_forward", d, 0, 0, &p, NULL, 0, 0, stream);
}

ft_status ft_attention_forward_ws(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                                  const void *v, void *o, void *lse, void *workspace, size_t workspace_bytes,
                                  void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o_out = o, .lse_out = lse };
    return run(ctx, "ft_attention_forward_ws", d, 0, 0, &p, workspace, workspace_bytes, 1, stream);
}

ft_status ft_attention_forward_reference(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                                         const void *v, void *o, void *lse, void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o_out = o, .lse_out = lse };
    return run(ctx, "ft_attention_forward_reference", d, 0, 1, &p, NULL, 0, 0, stream);
}

ft_status ft_attention_backward(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                                const void *v, const void *o, const void *lse, const void *dout, void *dq, void *dk,
                                void *dv, void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o = o, .lse = lse, .dout = dout, .dq = dq, .dk = dk, .dv = dv };
    return run(ctx, "ft_attention_backward", d, 1, 0, &p, NULL, 0, 0, stream);
}

ft_status ft_attention_backward_ws(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                                   const void *v, const void *o, const void *lse, const void *dout, void *dq,
                                   void *dk, void *dv, void *workspace, size_t workspace_bytes, void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o = o, .lse = lse, .dout = dout, .dq = dq, .dk = dk, .dv = dv };
    return run(ctx, "ft_attention_backward_ws", d, 1, 0, &p, workspace, workspace_bytes, 1, stream);
}

ft_status ft_attention_backward_reference(ft_context *ctx, const ft_attention_desc *d, const void *q, const void *k,
                                          const void *v, const void *o, const void *lse, const void *dout, void *dq,
                                          void *dk, void *dv, void *stream)
{
    const rt_data p = { .q = q, .k = k, .v = v, .o = o, .lse = lse, .dout = dout, .dq = dq, .dk = dk, .dv = dv };
    return run(ctx, "ft_attention_backward_reference", d, 1, 1, &p, NULL, 0, 0, stream);
}

/* The workspace-size calls' own arguments: ctx and the OUT pointer (then set to 0). */
static ft_status size_call_args(ft_context *ctx, const char *func, size_t *bytes)
{
    if (!ctx)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", func);
    if (!bytes)
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", func);
    *bytes = 0;
    return FT_OK;
}

ft_status ft_attention_backward_workspace_size(ft_context *ctx, const ft_attention_desc *d, size_t *bytes)
{
    const char *func = "ft_attention_backward_workspace_size";
    char err[RT_ERR_LEN];
    ft_attention_desc copy;
    db_workload w;
    ft_status s = size_call_args(ctx, func, bytes);
    if (s != FT_OK)
        return s;
    s = take_desc(func, d, 1, &copy, &w, err, sizeof err);
    if (s != FT_OK)
        return rt_fail(ctx, s, "%s", err);
    *bytes = rt_workspace_bytes(&w, copy.total_q, NULL, NULL);
    return FT_OK;
}

/* A call's pointers where only its desc is known: 256-byte aligned, as every kernel accepts. */
static const rt_data placeholder_data = { .q = (const void *)(uintptr_t)256, .k = (const void *)(uintptr_t)256,
                                          .v = (const void *)(uintptr_t)256, .o_out = (void *)(uintptr_t)256,
                                          .lse_out = (void *)(uintptr_t)256 };

ft_status ft_attention_forward_workspace_size(ft_context *ctx, const ft_attention_desc *d, size_t *bytes)
{
    const char *func = "ft_attention_forward_workspace_size";
    ft_attention_desc copy;
    db_workload w;
    ft_status s = size_call_args(ctx, func, bytes);
    if (s != FT_OK)
        return s;
    /* The forward's checks of the desc and its tensors' layouts, at the placeholder pointers: so a
     * layout the forward refuses is refused here, before any GPU work. */
    int rows16 = 1;
    s = check_call(ctx, func, d, 0, 0, &placeholder_data, &copy, &w, &rows16);
    if (s != FT_OK)
        return s;
    /* Only the kernel knows (a split forward's partial sums): the plan the forward will run. */
    const cu_driver *cu;
    rt_cuctx *cc;
    const rt_plan *plan;
    if ((s = rt_driver(ctx, func, &cu)) != FT_OK || (s = rt_current(ctx, func, cu, &cc)) != FT_OK ||
        (s = rt_plan_get(ctx, func, cu, cc, &w, variant_of(&copy, &w, 0, 0, rows16), &plan)) != FT_OK)
        return s;
    *bytes = rt_split_workspace_bytes(plan, &copy);
    return FT_OK;
}

/* rt_rows16 of d's (checked) strides, its tensors' pointers taken to be aligned (the backward's
 * tensors share these strides). */
static int desc_rows16(const ft_attention_desc *d, const db_workload *w)
{
    rt_tensor t[9];
    return rt_rows16(w, t, call_tensors(d, w, &placeholder_data, 0, t));
}

/* "fwd_mma BLOCK_M=128 BLOCK_N=64 ...": the parameters c's family uses. */
static void format_config(const gen_config *c, char *buf, size_t len)
{
    gen_config_format(c, GEN_FORMAT_FAMILY, buf, len);
}

ft_status ft_describe_choice(ft_context *ctx, const ft_attention_desc *d, int backward, char *buf, size_t len)
{
    const char *func = "ft_describe_choice";
    char err[RT_ERR_LEN];
    ft_attention_desc copy;
    db_workload w;
    if (!ctx)
        return rt_fail(NULL, FT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", func);
    if (!buf || !len)
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: buf is %s", func, buf ? "0 bytes long" : "NULL");
    buf[0] = '\0';
    if (backward != 0 && backward != 1)
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: backward=%d must be 0 (forward) or 1 (backward)", func,
                       backward);
    ft_status s = take_desc(func, d, backward, &copy, &w, err, sizeof err);
    if (s != FT_OK)
        return rt_fail(ctx, s, "%s", err);
    const cu_driver *cu;
    rt_cuctx *cc;
    if ((s = rt_driver(ctx, func, &cu)) != FT_OK || (s = rt_current(ctx, func, cu, &cc)) != FT_OK)
        return s;
    /* The strides decide whether rows are 16-byte aligned here; the pointers are taken to be. */
    const rt_variant variant = variant_of(&copy, &w, backward, 0, desc_rows16(&copy, &w));
    const rt_plan *plan = rt_plan_find(ctx, cc->context, &w, variant);
    rt_choice choice;
    if (plan) {
        choice = plan->choice;
    } else {
        int db_error;
        if (rt_choose(ctx->user, ctx->shipped, &cc->info, &w, rt_choose_flags(variant), &choice, &db_error, err,
                      sizeof err) != 0)
            return rt_fail(ctx, db_error ? FT_ERR_DB : FT_ERR_UNSUPPORTED, "%s: %s", func, err);
    }
    char config[GEN_CONFIG_TEXT];
    format_config(&choice.config, config, sizeof config);
    snprintf(buf, len, "%s; rule: %s; device: %s (%s); cubin: %s", config, choice.why, cc->info.name,
             cc->info.arch, plan ? plan->module->origin : "not loaded yet");
    return FT_OK;
}
