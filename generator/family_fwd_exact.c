/* The fwd_exact family: exact f32/f64 forward attention on CUDA cores (templates/fwd_exact.cu). */
#include <stdio.h>

#include "gen_family_internal.h"

#define DTYPE_F64 3

/* Bytes of one element and elements in a 16-byte vector (kVec in the template). */
static int elem_bytes(const int *p)
{
    return p[GEN_DTYPE] == DTYPE_F64 ? 8 : 4;
}
static int vec_elems(const int *p)
{
    return 16 / elem_bytes(p);
}

/* = kSmemBytes in fwd_exact.cu (change both together): Q [BLOCK_M], NUM_STAGES K and V tiles
 * [BLOCK_N], P [BLOCK_M][BLOCK_N]; every row padded by one 16-byte vector. */
static size_t smem_fwd(const int *p)
{
    const size_t vec = (size_t)vec_elems(p);
    const size_t qk_ld = (size_t)p[GEN_HEAD_DIM] + vec, v_ld = (size_t)p[GEN_HEAD_DIM_V] + vec;
    const size_t p_ld = (size_t)p[GEN_BLOCK_N] + vec;
    const size_t elems = (size_t)p[GEN_BLOCK_M] * qk_ld +
                         (size_t)p[GEN_NUM_STAGES] * p[GEN_BLOCK_N] * (qk_ld + v_ld) +
                         (size_t)p[GEN_BLOCK_M] * p_ld;
    return elems * (size_t)elem_bytes(p);
}

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* 1 when some group of tn = 1, 2, ..., 32 lanes splits the work as ex_pick_tn in the template
 * requires: tn divides BLOCK_N and HEAD_DIM_V in 16-byte chunks, and every thread gets at least
 * one of the BLOCK_M rows. */
static int has_thread_split(const int *p)
{
    const int threads = 32 * p[GEN_NUM_WARPS], vec = vec_elems(p);
    for (int tn = 1; tn <= 32; tn *= 2)
        if (p[GEN_BLOCK_M] * tn >= threads && (p[GEN_BLOCK_M] * tn) % threads == 0 &&
            p[GEN_BLOCK_N] % tn == 0 && p[GEN_HEAD_DIM_V] % (vec * tn) == 0)
            return 1;
    return 0;
}

static int check_fwd(const int *p, char *why, size_t len)
{
    const int threads = 32 * p[GEN_NUM_WARPS], vec = vec_elems(p);
    if (!is_pow2(p[GEN_BLOCK_M]) || !is_pow2(p[GEN_BLOCK_N])) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: fwd_exact needs powers of two", p[GEN_BLOCK_M], p[GEN_BLOCK_N]);
        return -1;
    }
    if (p[GEN_BLOCK_N] % vec != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (P rows are read in 16-byte vectors)",
                 p[GEN_BLOCK_N], vec);
        return -1;
    }
    if (p[GEN_BLOCK_M] * 32 < threads) {
        snprintf(why, len, "BLOCK_M=%d is smaller than NUM_WARPS=%d: every warp needs a row",
                 p[GEN_BLOCK_M], p[GEN_NUM_WARPS]);
        return -1;
    }
    if (!has_thread_split(p)) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM_V=%d: no split of the rows over "
                 "the threads (a lane group of 2^k <= 32 must divide BLOCK_N and HEAD_DIM_V/%d and leave "
                 "every thread a row); use a larger BLOCK_M or fewer NUM_WARPS",
                 p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM_V], vec);
        return -1;
    }
    /* Per-thread register arrays: output BLOCK_M*HEAD_DIM_V and scores BLOCK_M*BLOCK_N over the
     * threads, in 32-bit words. Past these limits ptxas spills (swept for sm_90 with CUDA 13.0:
     * f32 spills from 144 words, f64 from 128; at 512 threads each has 128 registers). */
    const int words = (p[GEN_BLOCK_M] * (p[GEN_HEAD_DIM_V] + p[GEN_BLOCK_N]) / threads) * (elem_bytes(p) / 4);
    const int f64 = p[GEN_DTYPE] == DTYPE_F64;
    const int limit = threads > 256 ? (f64 ? 40 : 56) : (f64 ? 112 : 128);
    if (words > limit) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM_V=%d, DTYPE=%d: %d accumulator "
                 "registers per thread would spill (limit %d)", p[GEN_BLOCK_M], p[GEN_BLOCK_N],
                 p[GEN_NUM_WARPS], p[GEN_HEAD_DIM_V], p[GEN_DTYPE], words, limit);
        return -1;
    }
    return 0;
}

static const gen_entry entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL },
};

const gen_family gen_family_fwd_exact = {
    .name = "fwd_exact",
    .file = "fwd_exact.cu",
    .backward = 0,
    .dtypes = (1u << 0) | (1u << DTYPE_F64),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N),
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 64, [GEN_BLOCK_N] = 32, [GEN_NUM_WARPS] = 4, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
    },
    .entries = entries,
    .entry_count = 1,
    .check = check_fwd,
};
