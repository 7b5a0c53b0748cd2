/* The bwd_exact family: exact f32/f64 backward attention on CUDA cores (templates/bwd_exact.cu). */
#include <stdio.h>

#include "gen_family_internal.h"

#define DTYPE_F64 3
#define DQ_ATOMIC 0
#define DQ_SEPARATE 1

/* Bytes of one element and elements in a 16-byte vector (kVec in the template). */
static int elem_bytes(const int *p)
{
    return p[GEN_DTYPE] == DTYPE_F64 ? 8 : 4;
}
static int vec_elems(const int *p)
{
    return 16 / elem_bytes(p);
}

/* = kDkdvSmemBytes in bwd_exact.cu (change both together): K and V [BLOCK_N], P^T and dS^T
 * [BLOCK_N][BLOCK_M], and per stage Q and dO [BLOCK_M] plus L and delta; rows padded by one
 * 16-byte vector. */
static size_t smem_dkdv(const int *p)
{
    const size_t vec = (size_t)vec_elems(p);
    const size_t qk_ld = (size_t)p[GEN_HEAD_DIM] + vec, v_ld = (size_t)p[GEN_HEAD_DIM_V] + vec;
    const size_t pt_ld = (size_t)p[GEN_BLOCK_M] + vec;
    const size_t elems = (size_t)p[GEN_BLOCK_N] * (qk_ld + v_ld + 2 * pt_ld) +
                         (size_t)p[GEN_NUM_STAGES] * p[GEN_BLOCK_M] * (qk_ld + v_ld + 2);
    return elems * (size_t)elem_bytes(p);
}

/* = kDqSmemBytes in bwd_exact.cu: Q, dO and dS [BLOCK_M], per stage K and V [BLOCK_N]. */
static size_t smem_dq(const int *p)
{
    const size_t vec = (size_t)vec_elems(p);
    const size_t qk_ld = (size_t)p[GEN_HEAD_DIM] + vec, v_ld = (size_t)p[GEN_HEAD_DIM_V] + vec;
    const size_t ds_ld = (size_t)p[GEN_BLOCK_N] + vec;
    const size_t elems = (size_t)p[GEN_BLOCK_M] * (qk_ld + v_ld + ds_ld) +
                         (size_t)p[GEN_NUM_STAGES] * p[GEN_BLOCK_N] * (qk_ld + v_ld);
    return elems * (size_t)elem_bytes(p);
}

static int used_dq(const int *p)
{
    return p[GEN_DQ_MODE] == DQ_SEPARATE;
}
static int used_dq_convert(const int *p)
{
    return p[GEN_DQ_MODE] == DQ_ATOMIC;
}

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* 16-byte chunks of a w-wide row that each of tn lanes owns (ex_chunks_per_lane). */
static int chunks_per_lane(const int *p, int w, int tn)
{
    return (w / vec_elems(p) + tn - 1) / tn;
}

/* Shared-memory wavefronts of a warp-wide 16-byte load of n distinct addresses (ex_wavefronts). */
static int wavefronts(int n)
{
    return n > 8 ? n / 8 : 1;
}

/* = ex_pick_tn in templates/bwd_exact.cu (change both together): the lanes per row group for
 * rows x cols scores over inner dims summing to ksum, then nout products of widths w1, w2, with
 * the fewest shared-memory wavefronts; 0 when no group divides cols and leaves every thread a row. */
static int pick_tn(const int *p, int rows, int cols, int ksum, int w1, int w2, int nout)
{
    const int threads = 32 * p[GEN_NUM_WARPS], vec = vec_elems(p);
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (rows * tn < threads || (rows * tn) % threads != 0 || cols % tn != 0)
            continue;
        const int rr = rows * tn / threads, wf_row = wavefronts(32 / tn), wf_col = wavefronts(tn);
        const int chunks = chunks_per_lane(p, w1, tn) + chunks_per_lane(p, w2, tn);
        const long long cost = (long long)(ksum / vec) * (rr * wf_row + (cols / tn) * wf_col) +
                               (long long)(cols / vec) * (rr * nout * wf_row + vec * chunks * wf_col);
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

/* = ex_pick_tn_scalar_rows in templates/bwd_exact.cu: the split of ft_bwd_dkdv's dQ += dS K
 * (rows x w over an inner dim k, the row operand read one scalar at a time). */
static int pick_tn_scalar_rows(const int *p, int rows, int k, int w)
{
    const int threads = 32 * p[GEN_NUM_WARPS];
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (rows * tn < threads || (rows * tn) % threads != 0)
            continue;
        const int rr = rows * tn / threads;
        const long long cost = (long long)k * (rr + chunks_per_lane(p, w, tn) * wavefronts(tn));
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

static int check_bwd(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS], vec = vec_elems(p);
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V], threads = 32 * nw, words_per = elem_bytes(p) / 4;
    const int atomic = p[GEN_DQ_MODE] == DQ_ATOMIC;
    if (!is_pow2(bm) || !is_pow2(bn)) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: bwd_exact needs powers of two", bm, bn);
        return -1;
    }
    if (bm % vec != 0) {
        snprintf(why, len, "BLOCK_M=%d is not a multiple of %d (P^T rows are read in 16-byte vectors)", bm, vec);
        return -1;
    }
    if (!atomic && bn % vec != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (dS rows are read in 16-byte vectors)", bn, vec);
        return -1;
    }
    /* The splits of the template: kTN1 (ft_bwd_dkdv, keys x queries), kTN3 (its dQ product,
     * DQ_MODE 0) or kTNq (ft_bwd_dq, DQ_MODE 1). */
    const int tn1 = pick_tn(p, bn, bm, d + dv, d, dv, 2);
    const int tnq = atomic ? pick_tn_scalar_rows(p, bm, bn, d) : pick_tn(p, bm, bn, d + dv, d, 0, 1);
    if (!tn1) {
        snprintf(why, len, "BLOCK_N=%d, BLOCK_M=%d, NUM_WARPS=%d: ft_bwd_dkdv has no split of the keys over the "
                 "threads (a lane group of 2^k <= 32 lanes must divide BLOCK_M with BLOCK_N*2^k a multiple of %d "
                 "threads); use a larger BLOCK_N or fewer NUM_WARPS", bn, bm, nw, threads);
        return -1;
    }
    if (!tnq) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d: %s has no split of the queries over the threads "
                 "(a lane group of 2^k <= 32 lanes%s with BLOCK_M*2^k a multiple of %d threads); use a larger "
                 "BLOCK_M or fewer NUM_WARPS", bm, bn, nw, atomic ? "the dQ product of ft_bwd_dkdv" : "ft_bwd_dq",
                 atomic ? "" : " must divide BLOCK_N", threads);
        return -1;
    }
    /* Per-thread register arrays, in 32-bit words. ft_bwd_dkdv: dK and dV, plus S^T and dP^T or
     * (DQ_MODE 0, not at the same time) the dQ tile; ft_bwd_dq: dQ, S and dP. Past these limits
     * ptxas spills (swept over 145 configurations for sm_90 with CUDA 13.0: from 160 words at up
     * to 256 threads, from 64 at 512 threads, where each thread has only 128 registers). */
    const int limit = threads > 256 ? 48 : 144;
    const int rk = bn * tn1 / threads, rq = bm / tn1;
    int scores = 2 * rk * rq;
    if (atomic) {
        const int dq_tile = (bm * tnq / threads) * chunks_per_lane(p, d, tnq) * vec;
        if (dq_tile > scores)
            scores = dq_tile;
    }
    const int wk = (rk * (chunks_per_lane(p, d, tn1) + chunks_per_lane(p, dv, tn1)) * vec + scores) * words_per;
    if (wk > limit) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, HEAD_DIM_V=%d, DTYPE=%d: ft_bwd_dkdv "
                 "would hold %d accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, dv,
                 p[GEN_DTYPE], wk, limit);
        return -1;
    }
    if (!atomic) {
        const int rm = bm * tnq / threads;
        const int wq = rm * (chunks_per_lane(p, d, tnq) * vec + 2 * (bn / tnq)) * words_per;
        if (wq > limit) {
            snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, DTYPE=%d: ft_bwd_dq would hold %d "
                     "accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, p[GEN_DTYPE], wq, limit);
            return -1;
        }
    }
    return 0;
}

static const gen_entry entries[] = {
    { "ft_bwd_preprocess", 0, NULL, NULL },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL },
    { "ft_bwd_dq", 0, smem_dq, used_dq },
    { "ft_bwd_dq_convert", 0, NULL, used_dq_convert },
};

const gen_family gen_family_bwd_exact = {
    .name = "bwd_exact",
    .file = "bwd_exact.cu",
    .backward = 1,
    .dtypes = (1u << 0) | (1u << DTYPE_F64),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE),
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 32, [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
    },
    .entries = entries,
    .entry_count = 4,
    .check = check_bwd,
};
