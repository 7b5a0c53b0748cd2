/* The kernels' argument blocks (ft_kernel_args.h) from a problem, for one batch slice. */
#include <stdint.h>
#include <string.h>

#include "ln_internal.h"

/* ptr moved by elems elements of bytes each; a null pointer stays null. */
static void *at(CUdeviceptr ptr, long long elems, size_t bytes)
{
    return ptr ? (void *)(uintptr_t)(ptr + (CUdeviceptr)(elems * (long long)bytes)) : NULL;
}

/* The fields ft_fwd_args and ft_bwd_args share, by name: q, k, v, o and lse moved to batch b0,
 * their strides, the sizes (batch = nb), the scale and the band. */
#define FILL_SHARED(a, p, b0, nb)                                                              \
    do {                                                                                       \
        const size_t e_ = ln_elem_bytes((p)->dtype), acc_ = ln_acc_bytes((p)->dtype);          \
        (a)->q = at((p)->q, (b0) * (p)->q_stride[0], e_);                                      \
        (a)->k = at((p)->k, (b0) * (p)->k_stride[0], e_);                                      \
        (a)->v = at((p)->v, (b0) * (p)->v_stride[0], e_);                                      \
        (a)->o = at((p)->o, (b0) * (p)->o_stride[0], e_);                                      \
        (a)->lse = at((p)->lse, (b0) * (long long)(p)->heads * (p)->seqlen_q, acc_);           \
        memcpy((a)->q_stride, (p)->q_stride, sizeof (a)->q_stride);                            \
        memcpy((a)->k_stride, (p)->k_stride, sizeof (a)->k_stride);                            \
        memcpy((a)->v_stride, (p)->v_stride, sizeof (a)->v_stride);                            \
        memcpy((a)->o_stride, (p)->o_stride, sizeof (a)->o_stride);                            \
        (a)->batch = (nb);                                                                     \
        (a)->heads = (p)->heads;                                                               \
        (a)->seqlen_q = (p)->seqlen_q;                                                         \
        (a)->seqlen_k = (p)->seqlen_k;                                                         \
        (a)->softmax_scale = (p)->softmax_scale;                                               \
        (a)->mask_lo = (p)->mask_lo;                                                           \
        (a)->mask_hi = (p)->mask_hi;                                                           \
    } while (0)

void ln_fwd_args(const ln_problem *p, int b0, int nb, ft_fwd_args *a)
{
    memset(a, 0, sizeof *a);
    FILL_SHARED(a, p, b0, nb);
}

void ln_bwd_args(const ln_problem *p, int accum, int b0, int nb, ft_bwd_args *a)
{
    const size_t e = ln_elem_bytes(p->dtype), acc = ln_acc_bytes(p->dtype);
    const long long rows = (long long)p->heads * p->seqlen_q;
    memset(a, 0, sizeof *a);
    FILL_SHARED(a, p, b0, nb);
    a->dout = at(p->dout, b0 * p->o_stride[0], e);
    a->dq = at(p->dq, b0 * p->q_stride[0], e);
    a->dk = at(p->dk, b0 * p->k_stride[0], e);
    a->dv = at(p->dv, b0 * p->v_stride[0], e);
    a->delta = at(p->delta, b0 * rows, acc);
    a->dq_accum = accum ? at(p->dq_accum, b0 * rows * p->head_dim, acc) : NULL;
    memcpy(a->do_stride, p->o_stride, sizeof a->do_stride);
    memcpy(a->dq_stride, p->q_stride, sizeof a->dq_stride);
    memcpy(a->dk_stride, p->k_stride, sizeof a->dk_stride);
    memcpy(a->dv_stride, p->v_stride, sizeof a->dv_stride);
}
