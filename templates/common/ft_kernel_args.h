/* Argument blocks passed by value to every generated kernel. Shared word for word by the host C
 * code (generator, tuner, runtime, tests) and the CUDA templates, so it uses only C types that
 * both sides lay out the same way (pointers, long long, int, double, and the 64-byte aligned
 * ft_tensor_map, aligned by FT_ALIGNAS on both sides). */
#ifndef FT_KERNEL_ARGS_H
#define FT_KERNEL_ARGS_H

#ifdef __cplusplus
#define FT_ALIGNAS(n) alignas(n)
#else
#define FT_ALIGNAS(n) _Alignas(n)
#endif

/* A tensor map: the copy engine's (TMA) descriptor of a tile of a tensor in global memory, as
 * cuTensorMapEncodeTiled writes it (CUtensorMap: 128 bytes, 64-byte aligned). */
typedef struct ft_tensor_map {
    FT_ALIGNAS(64) unsigned long long opaque[16];
} ft_tensor_map;

/* Forward: O = softmax(scale * Q K^T [masked]) V and L = logsumexp of each scaled row.
 * Strides are in elements, [0] batch, [1] head, [2] sequence; the head dim is contiguous. */
typedef struct ft_fwd_args {
    const void *q;              /* [B, H, seqlen_q, HEAD_DIM]   DTYPE */
    const void *k;              /* [B, heads_k, seqlen_k, HEAD_DIM]   DTYPE */
    const void *v;              /* [B, heads_k, seqlen_k, HEAD_DIM_V] DTYPE */
    void *o;                    /* [B, H, seqlen_q, HEAD_DIM_V] DTYPE */
    void *lse;                  /* [B, H, seqlen_q] contiguous; float, or double when DTYPE is f64 */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3];
    int batch, heads, seqlen_q, seqlen_k;
    double softmax_scale;       /* already resolved: never 0 here */
    int mask_lo, mask_hi;       /* with CAUSAL 1: key j visible to query i iff i+lo <= j <= i+hi (ft_mask.h) */
    int heads_k;                /* heads of K and V: heads, or fewer dividing it (grouped-query attention:
                                 * query head h reads K/V head h / (heads / heads_k)) where the family
                                 * takes it (gen_family.features) */
    double softcap;             /* 0 none; c > 0: scores become c * tanh(S / c) where the family takes it */
    /* For the configurations that load K and V with the copy engine (gen_family.map_rows): their
     * maps over [batch][heads][seqlen_k][head dim], boxes of 64 columns by BLOCK_N rows in the
     * 128-byte swizzle, keys past seqlen_k read as zeros; and where Q comes the same way
     * (gen_family.q_map_rows), its map, boxes of BLOCK_M rows, rows past seqlen_q as zeros; and
     * where O leaves the same way (gen_family.o_map_rows), O's map, rows past seqlen_q left out.
     * The launcher encodes them; else zero. */
    ft_tensor_map k_map, v_map, q_map, o_map;
    /* Variable-length batches (VARLEN 1; else NULL and 0): batch + 1 prefix sums each (device
     * ints, from 0, never decreasing), sequence b's queries rows cu_seqlens_q[b] ..
     * cu_seqlens_q[b + 1] - 1 of packed tensors (strides [1] head and [2] row; [0] unused), its
     * keys those rows of cu_seqlens_k in K and V; seqlen_q and seqlen_k are the longest lengths
     * (the grid's), each sequence's mask band placed by its own lengths. lse is [heads, total_q]
     * (total_q = cu_seqlens_q[batch of the whole problem]), row cu_seqlens_q[b] + i of head h.
     * The copy engine's maps are over [1][heads][total rows][head dim]. With CAUSAL the band is
     * each sequence's own (ft_mask_band of its lengths): mask_left, mask_right keys visible left
     * and right of its diagonal (-1: no limit; a causal mask's right is 0), mask_bottom_right 1
     * where the diagonal ends at its last query and key; mask_lo and mask_hi are then unused. */
    const int *cu_seqlens_q, *cu_seqlens_k;
    int total_q;
    int mask_left, mask_right, mask_bottom_right;
    /* A forward whose keys SPLITS blocks share (SPLITS > 1; else NULL and 0): each split's rows'
     * O / rowsum (fp32, HEAD_DIM_V columns a row) and log2 of their L (-inf where the split saw
     * no key), row r of split s at o_part[(s * part_rows + r) * HEAD_DIM_V] and lse_part[s *
     * part_rows + r], r an lse row; part_rows the lse rows of the whole problem. The combine
     * kernel writes O and lse from them. */
    float *o_part, *lse_part;
    long long part_rows;
    /* Attention sinks, NULL for none: head h's logit sinks[h] (float, double for f64; [heads])
     * joins every row's softmax as a score with no value, so L includes it and a row that sees
     * no key has O = 0, L = sinks[h]. A family that takes them says so (GEN_FEATURE_SINKS). */
    const void *sinks;
} ft_fwd_args;

/* Backward: given dO, computes dQ, dK, dV. delta and dq_accum are workspaces the caller owns:
 * delta [B, H, seqlen_q] (float, double for f64) holds rowsum(dO * O);
 * dq_accum [B, H, seqlen_q, HEAD_DIM] (float, double for f64) is used by DQ_MODE atomic and
 * ordered and must be zeroed before the launch of ft_bwd_dkdv (DQ_INIT store: need not be); the
 * order of the elements inside each head's block is the family's own (its ft_bwd_dq_convert reads
 * what its ft_bwd_dkdv wrote). Both modes take dq_ticket, one int the launch's blocks count off
 * (DQ_MODE ordered: their order of start; bwd_wgmma's PERSISTENT, DQ_MODE atomic: their next
 * units), and dq_sems [B, H, ceil(seqlen_q / FT_DQ_SEM_ROWS)] ints, the turn of each query tile
 * (DQ_INIT store, atomic: the count of its key tiles); both zeroed with dq_accum, and always. */
#define FT_DQ_SEM_ROWS 16
typedef struct ft_bwd_args {
    const void *q, *k, *v, *o, *dout;
    const void *lse;            /* as written by the forward */
    void *dq, *dk, *dv;         /* same shapes as q, k, v; DTYPE */
    void *delta;
    void *dq_accum;
    int *dq_ticket, *dq_sems;   /* with dq_accum (DQ_MODE atomic and ordered); else NULL */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3], do_stride[3];
    long long dq_stride[3], dk_stride[3], dv_stride[3];
    int batch, heads, seqlen_q, seqlen_k;
    double softmax_scale;
    int mask_lo, mask_hi;       /* as in ft_fwd_args */
    int heads_k;                /* as in ft_fwd_args; dk, dv are [B, heads_k, seqlen_k, .], each the sum
                                 * over the query heads that read that K/V head */
    double softcap;             /* as in ft_fwd_args */
    /* For the families that load Q and dO with the copy engine (gen_family.tensor_maps): their
     * maps over [batch][heads][seqlen_q][head dim], boxes of 64 columns by BLOCK_M rows in the
     * 128-byte swizzle, rows past seqlen_q read as zeros. The launcher encodes them; else zero. */
    ft_tensor_map q_map, do_map;
    /* For the families that read K and V and write dK and dV with the copy engine
     * (gen_family.o_map_rows): their maps over [batch][heads_k][seqlen_k][head dim], boxes of 64
     * columns by BLOCK_N rows in the 128-byte swizzle, rows past seqlen_k read as zeros and not
     * written. The launcher encodes them; else zero. */
    ft_tensor_map k_map, v_map, dk_map, dv_map;
    /* Variable-length batches: as in ft_fwd_args. delta is [heads, total_q] like lse, dq_accum
     * [heads, total_q, HEAD_DIM] (the rows of a sequence's head contiguous, as a dense head's);
     * dq_sems stays [B, H, ceil(seqlen_q / FT_DQ_SEM_ROWS)] over the longest length. */
    const int *cu_seqlens_q, *cu_seqlens_k;
    int total_q;
    int mask_left, mask_right, mask_bottom_right;
    /* A backward whose K/V heads' query heads SPLITS blocks share (SPLITS > 1; else NULL and 0):
     * each share's fp32 partial dK (times the scale) and dV, row n of K/V head bh (of batch *
     * heads_k) of share s at dk_part[((s * part_rows) + bh * seqlen_k + n) * HEAD_DIM] and the
     * same of dv_part by HEAD_DIM_V; part_rows = batch * heads_k * seqlen_k of the whole problem.
     * The reduce kernel writes dK and dV from them. */
    float *dk_part, *dv_part;
    long long part_rows;
    /* Attention sinks as in ft_fwd_args (NULL: none; lse already includes them, so P, dS and
     * the gradients of Q, K, V are as without), and their gradient: dsinks[h] (the same type,
     * [heads], zeroed by the launcher) gets -sum of exp(sinks[h] - L) * delta over the rows of
     * query head h, every batch. */
    const void *sinks;
    void *dsinks;
} ft_bwd_args;

#endif
