/* GPU test support: the test-facing API of gpu_harness.h over the launch module. What is the
 * harness's own: the test layouts (transposed, padded rows) and the process-wide build cache. */
#include "gpu_harness.h"
#include "ft_mask.h"

#include <stdio.h>
#include <string.h>

/* Every kernel built in this process, so identical sources compile once. */
static ln_build_cache cache;

int gpu_open(gpu_session *s, char *why, size_t len)
{
    return ln_session_open(s, why, len);
}

void gpu_release_all(gpu_session *s)
{
    ln_build_cache_free(s, &cache);
}

void gpu_close(gpu_session *s)
{
    if (!s->cu)
        return;
    gpu_release_all(s);
    ln_session_close(s);
}

int gpu_build(gpu_session *s, const gen_config *configs, gpu_kernel **kernels, int count, int threads)
{
    return ln_build(s, &cache, configs, kernels, count, threads);
}

size_t gpu_dtype_bytes(int dtype)
{
    return ln_elem_bytes(dtype);
}

size_t gpu_acc_bytes(int dtype)
{
    return ln_acc_bytes(dtype);
}

/* Strides for one tensor of `heads` heads of head dim `dim` in the problem's layout. */
static void layout_strides(const gpu_problem *p, int heads, int seqlen, int dim, long long st[3])
{
    switch (p->layout) {
    case 1: /* [B, N, H, D] */
        st[2] = (long long)heads * dim;
        st[1] = dim;
        st[0] = (long long)seqlen * heads * dim;
        break;
    case 2: /* rows padded by 8 elements past a multiple of 8: the seq stride is not the head dim,
             * and a row of any head dim starts 16-byte aligned */
        st[2] = (dim + 7) / 8 * 8 + 8;
        st[1] = (long long)seqlen * st[2];
        st[0] = st[1] * heads;
        break;
    default:
        ln_contiguous_strides(heads, seqlen, dim, st);
    }
}

/* The kernels' CAUSAL flag for p: 1 when any mask applies. */
int gpu_problem_masked(const gpu_problem *g)
{
    return ft_mask_active(g->causal, g->window ? g->window_left : -1, g->window ? g->window_right : -1);
}

/* The launch module's view of p: its mask, the scale resolved. */
static void to_problem(const gpu_problem *g, ln_problem *p)
{
    *p = (ln_problem){
        .dtype = g->dtype, .batch = g->batch, .heads = g->heads, .seqlen_q = g->seqlen_q, .seqlen_k = g->seqlen_k,
        .head_dim = g->head_dim, .head_dim_v = g->head_dim_v,
        .softmax_scale = ln_softmax_scale(g->softmax_scale, g->head_dim),
        .q = g->q, .k = g->k, .v = g->v, .o = g->o, .lse = g->lse, .dout = g->dout, .dq = g->dq, .dk = g->dk,
        .dv = g->dv, .delta = g->delta, .dq_accum = g->dq_accum, .heads_k = g->heads_k, .softcap = g->softcap,
        .cu_seqlens_q = g->dev_cu_seqlens_q, .cu_seqlens_k = g->dev_cu_seqlens_k, .total_q = g->total_q,
        .total_k = g->total_k, .sinks = g->sinks, .dsinks = g->dsinks,
    };
    ln_problem_mask(p, g->causal, g->causal_align, g->window ? g->window_left : -1,
                    g->window ? g->window_right : -1);
    memcpy(p->q_stride, g->q_stride, sizeof p->q_stride);
    memcpy(p->k_stride, g->k_stride, sizeof p->k_stride);
    memcpy(p->v_stride, g->v_stride, sizeof p->v_stride);
    memcpy(p->o_stride, g->o_stride, sizeof p->o_stride);
}

static void take_pointers(gpu_problem *g, const ln_problem *p)
{
    g->q = p->q, g->k = p->k, g->v = p->v, g->o = p->o, g->lse = p->lse, g->dout = p->dout;
    g->dq = p->dq, g->dk = p->dk, g->dv = p->dv, g->delta = p->delta, g->dq_accum = p->dq_accum;
}

size_t gpu_lse_rows(const gpu_problem *p)
{
    return p->cu_seqlens_q ? (size_t)p->heads * p->total_q : (size_t)p->batch * p->heads * p->seqlen_q;
}

/* A variable-length batch's prefix sums on the device (batch + 1 ints each). */
static int upload_prefix_sums(gpu_session *s, gpu_problem *p, char *why, size_t len)
{
    const size_t bytes = ((size_t)p->batch + 1) * sizeof(int);
    const int *host[2] = { p->cu_seqlens_q, p->cu_seqlens_k };
    CUdeviceptr *dev[2] = { &p->dev_cu_seqlens_q, &p->dev_cu_seqlens_k };
    for (int i = 0; i < 2; i++) {
        CUresult rc = s->cu->MemAlloc(dev[i], bytes);
        if (rc == CUDA_SUCCESS)
            rc = s->cu->MemcpyHtoD(*dev[i], host[i], bytes);
        if (rc != CUDA_SUCCESS) {
            char buf[256];
            snprintf(why, len, "prefix sums to the device: %s", cu_result_str(rc, buf, sizeof buf));
            return -1;
        }
    }
    return 0;
}

int gpu_problem_alloc(gpu_session *s, gpu_problem *p, char *why, size_t len)
{
    const int heads_k = p->heads_k ? p->heads_k : p->heads;
    const int varlen = p->cu_seqlens_q != NULL;
    p->total_q = varlen ? p->cu_seqlens_q[p->batch] : 0;
    p->total_k = varlen ? p->cu_seqlens_k[p->batch] : 0;
    /* A variable-length batch is one packed sequence of all the rows. */
    const int rows_q = varlen ? p->total_q : p->seqlen_q, rows_k = varlen ? p->total_k : p->seqlen_k;
    layout_strides(p, p->heads, rows_q, p->head_dim, p->q_stride);
    layout_strides(p, heads_k, rows_k, p->head_dim, p->k_stride);
    layout_strides(p, heads_k, rows_k, p->head_dim_v, p->v_stride);
    layout_strides(p, p->heads, rows_q, p->head_dim_v, p->o_stride);
    p->dev_cu_seqlens_q = p->dev_cu_seqlens_k = p->split_ws = p->sinks = p->dsinks = 0;
    p->split_ws_bytes = 0;
    if (varlen && upload_prefix_sums(s, p, why, len) != 0) {
        gpu_problem_free(s, p);
        return -1;
    }
    if (p->with_sinks && (s->cu->MemAlloc(&p->sinks, (size_t)p->heads * gpu_acc_bytes(p->dtype)) != CUDA_SUCCESS ||
                          s->cu->MemAlloc(&p->dsinks, (size_t)p->heads * gpu_acc_bytes(p->dtype)) != CUDA_SUCCESS)) {
        snprintf(why, len, "cannot allocate the sinks of %d heads", p->heads);
        gpu_problem_free(s, p);
        return -1;
    }
    ln_problem lp;
    ln_extents x;
    to_problem(p, &lp);
    ln_problem_extents(&lp, &x);
    p->q_elems = x.q, p->k_elems = x.k, p->v_elems = x.v, p->o_elems = x.o;
    const int rc = ln_buffers_alloc(s->cu, &lp, why, len);
    take_pointers(p, &lp);
    return rc;
}

void gpu_problem_free(gpu_session *s, gpu_problem *p)
{
    ln_problem lp;
    to_problem(p, &lp);
    ln_buffers_free(s->cu, &lp);
    take_pointers(p, &lp);
    CUdeviceptr *owned[5] = { &p->dev_cu_seqlens_q, &p->dev_cu_seqlens_k, &p->split_ws, &p->sinks, &p->dsinks };
    p->split_ws_bytes = 0;
    for (int i = 0; i < 5; i++) {
        if (*owned[i])
            s->cu->MemFree(*owned[i]);
        *owned[i] = 0;
    }
}

double gpu_round_to_dtype(int dtype, double x)
{
    return ln_round_to_dtype(dtype, x);
}

int gpu_upload(gpu_session *s, const gpu_problem *p, CUdeviceptr dst, const double *host, size_t elems,
               double *rounded)
{
    return ln_upload(s->cu, p->dtype, dst, host, elems, rounded);
}

int gpu_upload_acc(gpu_session *s, const gpu_problem *p, CUdeviceptr dst, const double *host, size_t elems,
                   double *rounded)
{
    /* The accumulator type is the f32 element type, or f64's (DTYPE codes 0 and 3). */
    enum { F32 = 0, F64 = 3 };
    return ln_upload(s->cu, p->dtype == F64 ? F64 : F32, dst, host, elems, rounded);
}

int gpu_download(gpu_session *s, const gpu_problem *p, CUdeviceptr src, double *host, size_t elems, int acc)
{
    return ln_download(s->cu, p->dtype, src, host, elems, acc);
}

int gpu_poison(gpu_session *s, CUdeviceptr dst, size_t bytes)
{
    return ln_poison(s->cu, dst, bytes) == CUDA_SUCCESS ? 0 : -1;
}

/* p's split workspace grown to need bytes (as large already: nothing to do). */
static CUresult split_workspace(gpu_session *s, gpu_problem *p, size_t need)
{
    if (need <= p->split_ws_bytes)
        return CUDA_SUCCESS;
    CUresult rc = s->cu->StreamSynchronize(NULL);   /* launches in flight may use the old one */
    if (p->split_ws && rc == CUDA_SUCCESS)
        rc = s->cu->MemFree(p->split_ws);
    p->split_ws = 0;
    p->split_ws_bytes = 0;
    if (rc == CUDA_SUCCESS && (rc = s->cu->MemAlloc(&p->split_ws, need)) == CUDA_SUCCESS)
        p->split_ws_bytes = need;
    return rc;
}

static int persistent_cap;

void gpu_cap_persistent_blocks(int blocks)
{
    persistent_cap = blocks > 0 ? blocks : 0;
}

/* The family's steps for operation op, bound to k's module, launched for p with p's split
 * workspace, grown first to what the plan needs (none: nothing to do). */
static CUresult run(gpu_session *s, const gpu_kernel *k, gpu_problem *p, ln_op op, CUstream stream)
{
    ln_plan plan;
    char err[512];
    if (ln_plan_make(&k->config, op, p->seqlen_q, p->seqlen_k, &plan, err, sizeof err) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ln_plan_bind(s->cu, &plan, k->module, NULL);
    if (rc != CUDA_SUCCESS)
        return rc;
    for (int i = 0; i < plan.count; i++)
        if (op == LN_BACKWARD && persistent_cap && plan.steps[i].persistent &&
            plan.steps[i].resident > (unsigned)persistent_cap)
            plan.steps[i].resident = (unsigned)persistent_cap;
    ln_problem lp;
    to_problem(p, &lp);
    if ((rc = split_workspace(s, p, ln_split_workspace_bytes(&plan, &lp))) != CUDA_SUCCESS)
        return rc;
    lp.split_ws = p->split_ws;
    lp.split_ws_bytes = p->split_ws_bytes;
    /* The dQ accumulator poisoned: a kernel that stores each query tile's first share (DQ_INIT
     * store) must not read what was there; the launch zeroes it for the others. */
    if (plan.accum && (rc = ln_poison(s->cu, lp.dq_accum, ln_dq_order_offset(&lp))) != CUDA_SUCCESS)
        return rc;
    return ln_launch(s->cu, &plan, &lp, stream);
}
int gpu_forward_async(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream)
{
    return (int)run(s, k, p, LN_FORWARD, stream);
}

int gpu_backward_async(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream)
{
    return (int)run(s, k, p, LN_BACKWARD, stream);
}

static int finish(gpu_session *s, CUresult rc, CUstream stream, char *why, size_t len)
{
    char buf[256];
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "launch failed: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    rc = s->cu->StreamSynchronize(stream);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "kernel failed: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    return 0;
}

int gpu_forward(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream, char *why, size_t len)
{
    return finish(s, (CUresult)gpu_forward_async(s, k, p, stream), stream, why, len);
}

int gpu_backward(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream, char *why, size_t len)
{
    return finish(s, (CUresult)gpu_backward_async(s, k, p, stream), stream, why, len);
}
