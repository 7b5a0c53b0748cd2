/* Argument blocks passed by value to every generated kernel. Shared word for word by the host C
 * code (generator, tuner, runtime, tests) and the CUDA templates, so it uses only C types that
 * both sides lay out the same way (pointers, long long, int, double). */
#ifndef FT_KERNEL_ARGS_H
#define FT_KERNEL_ARGS_H

/* Forward: O = softmax(scale * Q K^T [masked]) V and L = logsumexp of each scaled row.
 * Strides are in elements, [0] batch, [1] head, [2] sequence; the head dim is contiguous. */
typedef struct ft_fwd_args {
    const void *q;              /* [B, H, seqlen_q, HEAD_DIM]   DTYPE */
    const void *k;              /* [B, H, seqlen_k, HEAD_DIM]   DTYPE */
    const void *v;              /* [B, H, seqlen_k, HEAD_DIM_V] DTYPE */
    void *o;                    /* [B, H, seqlen_q, HEAD_DIM_V] DTYPE */
    void *lse;                  /* [B, H, seqlen_q] contiguous; float, or double when DTYPE is f64 */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3];
    int batch, heads, seqlen_q, seqlen_k;
    double softmax_scale;       /* already resolved: never 0 here */
    int mask_lo, mask_hi;       /* with CAUSAL 1: key j visible to query i iff i+lo <= j <= i+hi (ft_mask.h) */
} ft_fwd_args;

/* Backward: given dO, computes dQ, dK, dV. delta and dq_accum are workspaces the caller owns:
 * delta [B, H, seqlen_q] (float, double for f64) holds rowsum(dO * O);
 * dq_accum [B, H, seqlen_q, HEAD_DIM] (float, double for f64) is used by DQ_MODE atomic and
 * must be zeroed before the launch of ft_bwd_dkdv. */
typedef struct ft_bwd_args {
    const void *q, *k, *v, *o, *dout;
    const void *lse;            /* as written by the forward */
    void *dq, *dk, *dv;         /* same shapes as q, k, v; DTYPE */
    void *delta;
    void *dq_accum;
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3], do_stride[3];
    long long dq_stride[3], dk_stride[3], dv_stride[3];
    int batch, heads, seqlen_q, seqlen_k;
    double softmax_scale;
    int mask_lo, mask_hi;       /* as in ft_fwd_args */
} ft_bwd_args;

#endif
