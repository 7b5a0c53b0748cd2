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

/* 1 when a lane group of tn = 1, 2, ..., 32 splits rows x (w1, w2) as ex_pick_tn in the template
 * requires: tn divides cols and w1, w2 in 16-byte chunks, and every thread gets one of the rows. */
static int has_split(const int *p, int rows, int cols, int w1, int w2)
{
    const int threads = 32 * p[GEN_NUM_WARPS], vec = vec_elems(p);
    for (int tn = 1; tn <= 32; tn *= 2)
        if (rows * tn >= threads && (rows * tn) % threads == 0 && cols % tn == 0 && w1 % (vec * tn) == 0 &&
            w2 % (vec * tn) == 0)
            return 1;
    return 0;
}

/* Per-thread register arrays of the two big kernels, in 32-bit words: ft_bwd_dkdv holds dK and dV
 * (BLOCK_N*(HEAD_DIM+HEAD_DIM_V) over the threads) and either S^T and dP^T (2*BLOCK_N*BLOCK_M)
 * or, with DQ_MODE 0, the dQ tile (BLOCK_M*HEAD_DIM); ft_bwd_dq holds dQ (BLOCK_M*HEAD_DIM),
 * S and dP (2*BLOCK_M*BLOCK_N). */
static int dkdv_words(const int *p)
{
    const int threads = 32 * p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N];
    int scores = 2 * bn * bm;
    if (p[GEN_DQ_MODE] == DQ_ATOMIC && bm * p[GEN_HEAD_DIM] > scores)
        scores = bm * p[GEN_HEAD_DIM];
    return (bn * (p[GEN_HEAD_DIM] + p[GEN_HEAD_DIM_V]) + scores) / threads * (elem_bytes(p) / 4);
}
static int dq_words(const int *p)
{
    const int threads = 32 * p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N];
    return (bm * p[GEN_HEAD_DIM] + 2 * bm * bn) / threads * (elem_bytes(p) / 4);
}

static int check_bwd(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS], vec = vec_elems(p);
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V], threads = 32 * nw;
    if (!is_pow2(bm) || !is_pow2(bn)) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: bwd_exact needs powers of two", bm, bn);
        return -1;
    }
    if (bm % vec != 0) {
        snprintf(why, len, "BLOCK_M=%d is not a multiple of %d (P^T rows are read in 16-byte vectors)", bm, vec);
        return -1;
    }
    if (p[GEN_DQ_MODE] == DQ_SEPARATE && bn % vec != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (dS rows are read in 16-byte vectors)", bn, vec);
        return -1;
    }
    if (!has_split(p, bn, bm, d, dv)) {
        snprintf(why, len, "BLOCK_N=%d, BLOCK_M=%d, NUM_WARPS=%d, HEAD_DIM=%d, HEAD_DIM_V=%d: ft_bwd_dkdv has no "
                 "split of the keys over the threads (a lane group of 2^k <= 32 must divide BLOCK_M, HEAD_DIM/%d "
                 "and HEAD_DIM_V/%d and leave every thread a key); use a larger BLOCK_N or fewer NUM_WARPS",
                 bn, bm, nw, d, dv, vec, vec);
        return -1;
    }
    if (!has_split(p, bm, bn, d, 0)) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d: %s has no split of the queries "
                 "over the threads (a lane group of 2^k <= 32 must divide BLOCK_N and HEAD_DIM/%d and leave every "
                 "thread a query); use a larger BLOCK_M or fewer NUM_WARPS",
                 bm, bn, nw, d, p[GEN_DQ_MODE] == DQ_ATOMIC ? "the dQ product of ft_bwd_dkdv" : "ft_bwd_dq", vec);
        return -1;
    }
    /* Past these limits ptxas spills (swept over 145 configurations for sm_90 with CUDA 13.0:
     * spills from 160 words at up to 256 threads, from 64 at 512 threads, where each thread has
     * only 128 registers). */
    const int limit = threads > 256 ? 48 : 144;
    const int wk = dkdv_words(p);
    if (wk > limit) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, HEAD_DIM_V=%d, DTYPE=%d: ft_bwd_dkdv "
                 "would hold %d accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, dv,
                 p[GEN_DTYPE], wk, limit);
        return -1;
    }
    const int wq = dq_words(p);
    if (p[GEN_DQ_MODE] == DQ_SEPARATE && wq > limit) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, DTYPE=%d: ft_bwd_dq would hold %d "
                 "accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, p[GEN_DTYPE], wq, limit);
        return -1;
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
