/* Traits of the exact families (templates/families/fwd_exact.cu, bwd_exact.cu;
 * generator/family_fwd_exact.c, family_bwd_exact.c): the split of a block's rows over row
 * groups of TN lanes, shared memory with rows padded by one 16-byte vector, and the register
 * limits past which ptxas spills. `vec` is the elements in 16 bytes (4 for f32, 2 for f64). */
#ifndef FT_TRAITS_EXACT_H
#define FT_TRAITS_EXACT_H

enum exact_rule {
    EXACT_OK,
    EXACT_BAD_TILES,        /* BLOCK_M or BLOCK_N not a power of two */
    EXACT_BAD_HEAD_DIM,     /* HEAD_DIM or HEAD_DIM_V not a multiple of 8 (other dims run padded: DATA_DIM) */
    EXACT_BAD_VEC_M,        /* BLOCK_M not a multiple of vec (bwd: P^T rows are 16-byte vectors) */
    EXACT_BAD_VEC_N,        /* BLOCK_N not a multiple of vec (P / dS rows are 16-byte vectors) */
    EXACT_BAD_SPLIT,        /* no split of the rows over the threads (fwd, ft_bwd_dkdv) */
    EXACT_BAD_SPLIT_DQ,     /* no split for the dQ product (bwd) */
    EXACT_BAD_SMEM,         /* over FT_SMEM_MAX_BYTES */
    EXACT_BAD_REGISTERS,    /* accumulators would spill */
    EXACT_BAD_REGISTERS_DQ, /* ft_bwd_dq's accumulators would spill */
    EXACT_BAD_DQ_MODE,      /* bwd: DQ_MODE ordered (bwd_exact is atomic or separate) */
};

FT_TRAIT int exact_vec(int dtype)
{
    return dtype == 3 ? 2 : 4;   /* f64 : f32 */
}

/* 16-byte chunks of a w-wide row that each of tn lanes owns (lane c: chunks c, c + tn, ...);
 * when tn does not divide the row's chunks, the last one of some lanes falls past the row. */
FT_TRAIT int exact_chunks_per_lane(int w, int tn, int vec)
{
    return (w / vec + tn - 1) / tn;
}

/* Shared-memory wavefronts (128 bytes each) of one warp-wide 16-byte load that reads n distinct
 * addresses without bank conflicts (the padded rows see to that). */
FT_TRAIT int exact_wavefronts(int n)
{
    return n > 8 ? n / 8 : 1;
}

/* Lanes per row group for a block of R rows that computes R x C scores (inner dims summing to
 * ksum) and then nout products of widths w1, w2 (0: none) over those C columns. Valid when the
 * group divides C and every thread gets at least one row; among those, the one whose loads cost
 * the fewest shared-memory wavefronts per warp and tile (row data is read once per row group,
 * 32/tn addresses; column data once per lane, tn addresses). 0 when none is valid. */
FT_TRAIT int exact_pick_tn(int threads, int vec, int R, int C, int ksum, int w1, int w2, int nout)
{
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (R * tn < threads || (R * tn) % threads != 0 || C % tn != 0)
            continue;
        const int rr = R * tn / threads, wf_row = exact_wavefronts(32 / tn), wf_col = exact_wavefronts(tn);
        const int chunks = exact_chunks_per_lane(w1, tn, vec) + exact_chunks_per_lane(w2, tn, vec);
        const long long cost = (long long)(ksum / vec) * (rr * wf_row + (C / tn) * wf_col) +
                               (long long)(C / vec) * (rr * nout * wf_row + vec * chunks * wf_col);
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

/* The same for one product of R rows x w columns over an inner dim k whose row operand is read
 * one scalar at a time (ft_bwd_dkdv's dQ += dS K, dS^T being stored key-major). */
FT_TRAIT int exact_pick_tn_scalar_rows(int threads, int vec, int R, int k, int w)
{
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (R * tn < threads || (R * tn) % threads != 0)
            continue;
        const int rr = R * tn / threads;
        const long long cost = (long long)k * (rr + exact_chunks_per_lane(w, tn, vec) * exact_wavefronts(tn));
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

/* ---- fwd_exact --------------------------------------------------------------------------- */

/* Q [BLOCK_M], NUM_STAGES K and V tiles [BLOCK_N], P [BLOCK_M][BLOCK_N]; rows padded. */
FT_TRAIT long long fwd_exact_smem_bytes(int dtype, int block_m, int block_n, int head_dim, int head_dim_v,
                                        int num_stages)
{
    const int vec = exact_vec(dtype);
    const long long qk_ld = head_dim + vec, v_ld = head_dim_v + vec, p_ld = block_n + vec;
    return ((long long)block_m * qk_ld + (long long)num_stages * block_n * (qk_ld + v_ld) + (long long)block_m * p_ld) *
           (16 / vec);
}

FT_TRAIT int fwd_exact_tn(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    return exact_pick_tn(32 * num_warps, exact_vec(dtype), block_m, block_n, head_dim, head_dim_v, 0, 1);
}

/* Per-thread register arrays in 32-bit words (output rows x chunks, and scores), and the limit
 * past which ptxas spills (swept for sm_90 with CUDA 13.0: f32 from 144 words, f64 from 128;
 * at 512 threads each thread has only 128 registers). */
FT_TRAIT int fwd_exact_words(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    const int threads = 32 * num_warps, vec = exact_vec(dtype);
    const int tn = fwd_exact_tn(dtype, block_m, block_n, num_warps, head_dim, head_dim_v);
    return tn ? block_m * tn / threads * (exact_chunks_per_lane(head_dim_v, tn, vec) * vec + block_n / tn) * (4 / vec)
              : 0;
}
FT_TRAIT int fwd_exact_word_limit(int dtype, int num_warps, int head_dim_v)
{
    /* f64 at head dim 256 spills earlier: its operand loads are as wide as the accumulators
     * (test_gen_full, sm_90, 4 warps: 72 words at 16x32 tiles spilled 16 bytes; 68 at 16x16
     * spilled 8 with two stages; 66 at 16x8 did not, in any flag variant on sm_80 and sm_90). */
    if (dtype == 3 && head_dim_v >= 256 && 32 * num_warps <= 256)
        return 67;
    return 32 * num_warps > 256 ? (dtype == 3 ? 40 : 56) : (dtype == 3 ? 112 : 128);
}

FT_TRAIT int fwd_exact_rule(int dtype, int block_m, int block_n, int num_warps, int num_stages, int head_dim,
                            int head_dim_v)
{
    if (!ft_is_pow2(block_m) || !ft_is_pow2(block_n))
        return EXACT_BAD_TILES;
    if (head_dim % 8 != 0 || head_dim_v % 8 != 0)
        return EXACT_BAD_HEAD_DIM;
    if (block_n % exact_vec(dtype) != 0)
        return EXACT_BAD_VEC_N;
    if (!fwd_exact_tn(dtype, block_m, block_n, num_warps, head_dim, head_dim_v))
        return EXACT_BAD_SPLIT;
    if (fwd_exact_smem_bytes(dtype, block_m, block_n, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES)
        return EXACT_BAD_SMEM;
    if (fwd_exact_words(dtype, block_m, block_n, num_warps, head_dim, head_dim_v) >
        fwd_exact_word_limit(dtype, num_warps, head_dim_v))
        return EXACT_BAD_REGISTERS;
    return EXACT_OK;
}

/* ---- bwd_exact --------------------------------------------------------------------------- */

/* ft_bwd_dkdv: K and V [BLOCK_N], P^T and dS^T [BLOCK_N][BLOCK_M], and per stage Q and dO
 * [BLOCK_M] plus L and delta. */
FT_TRAIT long long bwd_exact_dkdv_smem_bytes(int dtype, int block_m, int block_n, int head_dim, int head_dim_v,
                                             int num_stages)
{
    const int vec = exact_vec(dtype);
    const long long qk_ld = head_dim + vec, v_ld = head_dim_v + vec, pt_ld = block_m + vec;
    return ((long long)block_n * (qk_ld + v_ld + 2 * pt_ld) + (long long)num_stages * block_m * (qk_ld + v_ld + 2)) *
           (16 / vec);
}
/* ft_bwd_dq (DQ_MODE 1): Q, dO and dS [BLOCK_M], per stage K and V [BLOCK_N]. */
FT_TRAIT long long bwd_exact_dq_smem_bytes(int dtype, int block_m, int block_n, int head_dim, int head_dim_v,
                                           int num_stages)
{
    const int vec = exact_vec(dtype);
    const long long qk_ld = head_dim + vec, v_ld = head_dim_v + vec, ds_ld = block_n + vec;
    return ((long long)block_m * (qk_ld + v_ld + ds_ld) + (long long)num_stages * block_n * (qk_ld + v_ld)) *
           (16 / vec);
}

/* The splits: TN1 of ft_bwd_dkdv (keys x queries); TN3 of its dQ product (DQ_MODE 0) or TNq of
 * ft_bwd_dq (DQ_MODE 1). */
FT_TRAIT int bwd_exact_tn1(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    return exact_pick_tn(32 * num_warps, exact_vec(dtype), block_n, block_m, head_dim + head_dim_v, head_dim,
                         head_dim_v, 2);
}
FT_TRAIT int bwd_exact_tn_dq(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                             int dq_mode)
{
    return dq_mode == 0 ? exact_pick_tn_scalar_rows(32 * num_warps, exact_vec(dtype), block_m, block_n, head_dim)
                        : exact_pick_tn(32 * num_warps, exact_vec(dtype), block_m, block_n, head_dim + head_dim_v,
                                        head_dim, 0, 1);
}

/* Per-thread register arrays in 32-bit words. ft_bwd_dkdv: dK and dV, plus S^T and dP^T or
 * (DQ_MODE 0, not at the same time) the dQ tile; ft_bwd_dq: dQ, S and dP. Past the limit ptxas
 * spills (swept over 145 configurations for sm_90 with CUDA 13.0: from 160 words at up to 256
 * threads, from 64 at 512 threads, where each thread has only 128 registers). */
FT_TRAIT int bwd_exact_word_limit(int dtype, int num_warps, int causal)
{
    /* The band mask's bounds stay live in ft_bwd_dkdv: f64 spilled 12 bytes at 128 words with it
     * (test_gen_full, sm_90: head dim 96, 32x64 tiles, 8 warps). */
    if (dtype == 3 && causal && 32 * num_warps <= 256)
        return 120;
    /* The walk over a K/V head's group of query heads keeps a little more live: f64 spilled 28
     * bytes at 144 words (test_gen_full, sm_90: head dim 192, 32x32 tiles, 8 warps, DQ_MODE 0). */
    if (dtype == 3 && 32 * num_warps <= 256)
        return 136;
    return 32 * num_warps > 256 ? 48 : 144;
}
FT_TRAIT int bwd_exact_dkdv_words(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                  int dq_mode)
{
    const int threads = 32 * num_warps, vec = exact_vec(dtype);
    const int tn1 = bwd_exact_tn1(dtype, block_m, block_n, num_warps, head_dim, head_dim_v);
    const int tnq = bwd_exact_tn_dq(dtype, block_m, block_n, num_warps, head_dim, head_dim_v, dq_mode);
    if (!tn1 || !tnq)
        return 0;
    const int rk = block_n * tn1 / threads, rq = block_m / tn1;
    int scores = 2 * rk * rq;
    if (dq_mode == 0) {
        const int dq_tile = (block_m * tnq / threads) * exact_chunks_per_lane(head_dim, tnq, vec) * vec;
        if (dq_tile > scores)
            scores = dq_tile;
    }
    return (rk * (exact_chunks_per_lane(head_dim, tn1, vec) + exact_chunks_per_lane(head_dim_v, tn1, vec)) * vec +
            scores) * (4 / vec);
}
FT_TRAIT int bwd_exact_dq_words(int dtype, int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    const int threads = 32 * num_warps, vec = exact_vec(dtype);
    const int tnq = bwd_exact_tn_dq(dtype, block_m, block_n, num_warps, head_dim, head_dim_v, 1);
    return tnq ? block_m * tnq / threads * (exact_chunks_per_lane(head_dim, tnq, vec) * vec + 2 * (block_n / tnq)) *
                     (4 / vec)
               : 0;
}

FT_TRAIT int bwd_exact_rule(int dtype, int block_m, int block_n, int num_warps, int num_stages, int head_dim,
                            int head_dim_v, int dq_mode, int causal)
{
    const int vec = exact_vec(dtype);
    if (dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_SEPARATE)
        return EXACT_BAD_DQ_MODE;
    if (!ft_is_pow2(block_m) || !ft_is_pow2(block_n))
        return EXACT_BAD_TILES;
    if (head_dim % 8 != 0 || head_dim_v % 8 != 0)
        return EXACT_BAD_HEAD_DIM;
    if (block_m % vec != 0)
        return EXACT_BAD_VEC_M;
    if (dq_mode == 1 && block_n % vec != 0)
        return EXACT_BAD_VEC_N;
    if (!bwd_exact_tn1(dtype, block_m, block_n, num_warps, head_dim, head_dim_v))
        return EXACT_BAD_SPLIT;
    if (!bwd_exact_tn_dq(dtype, block_m, block_n, num_warps, head_dim, head_dim_v, dq_mode))
        return EXACT_BAD_SPLIT_DQ;
    if (bwd_exact_dkdv_smem_bytes(dtype, block_m, block_n, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES ||
        (dq_mode == 1 &&
         bwd_exact_dq_smem_bytes(dtype, block_m, block_n, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES))
        return EXACT_BAD_SMEM;
    if (bwd_exact_dkdv_words(dtype, block_m, block_n, num_warps, head_dim, head_dim_v, dq_mode) >
        bwd_exact_word_limit(dtype, num_warps, causal))
        return EXACT_BAD_REGISTERS;
    if (dq_mode == 1 &&
        bwd_exact_dq_words(dtype, block_m, block_n, num_warps, head_dim, head_dim_v) >
            bwd_exact_word_limit(dtype, num_warps, causal))
        return EXACT_BAD_REGISTERS_DQ;
    return EXACT_OK;
}

#endif
