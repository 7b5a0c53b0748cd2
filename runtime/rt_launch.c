/* The launches of a call: the public descriptor and data pointers as the launch module's
 * problem, then the plan's launches (ln_launch splits batches so grid.y stays within 65535 and
 * zeroes the dQ accumulator where the atomic backward needs it). The hot path: no locks, no
 * allocation. */
#include <stdint.h>

#include "rt_internal.h"

static CUdeviceptr dev(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static void copy_strides(long long dst[3], const int64_t src[3])
{
    for (int i = 0; i < 3; i++)
        dst[i] = (long long)src[i];
}

size_t rt_split_workspace_bytes(const rt_plan *plan, const ft_attention_desc *d)
{
    const ln_problem p = { .batch = d->batch, .heads = d->heads, .heads_k = d->heads_k, .seqlen_q = d->seqlen_q,
                           .seqlen_k = d->seqlen_k, .total_q = d->total_q,
                           .cu_seqlens_q = (CUdeviceptr)(uintptr_t)d->cu_seqlens_q };
    return ln_split_workspace_bytes(&plan->launches, &p);
}

CUresult rt_launch(const cu_driver *cu, const rt_plan *plan, const ft_attention_desc *d, const rt_data *p,
                   const rt_workspace_ptrs *ws, CUstream stream)
{
    const int backward = plan->w.op == DB_OP_BWD;
    ln_problem lp = {
        .dtype = d->dtype, .batch = d->batch, .heads = d->heads, .heads_k = d->heads_k, .seqlen_q = d->seqlen_q,
        .seqlen_k = d->seqlen_k,
        .head_dim = d->head_dim, .head_dim_v = plan->w.head_dim_v,
        .softmax_scale = ln_softmax_scale((double)d->softmax_scale, d->head_dim),
        .softcap = (double)d->softcap,
        .q = dev(p->q), .k = dev(p->k), .v = dev(p->v),
        .o = backward ? dev(p->o) : dev(p->o_out), .lse = backward ? dev(p->lse) : dev(p->lse_out),
        .dout = dev(p->dout), .dq = dev(p->dq), .dk = dev(p->dk), .dv = dev(p->dv), .delta = ws->delta, .dq_accum = ws->accum,
        .cu_seqlens_q = dev(d->cu_seqlens_q), .cu_seqlens_k = dev(d->cu_seqlens_k), .total_q = d->total_q,
        .total_k = d->total_k, .split_ws = ws->split, .split_ws_bytes = ws->split_bytes, .sinks = dev(d->sinks),
        .dsinks = backward ? dev(d->dsinks) : 0,
    };
    rt_problem_mask(d, &lp);
    copy_strides(lp.q_stride, d->q_stride);
    copy_strides(lp.k_stride, d->k_stride);
    copy_strides(lp.v_stride, d->v_stride);
    copy_strides(lp.o_stride, d->o_stride);
    return ln_launch(cu, &plan->launches, &lp, stream);
}
