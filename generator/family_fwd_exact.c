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

/* = ex_pick_tn in templates/fwd_exact.cu (change both together): the lanes per row group for
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

static int check_fwd(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS], vec = vec_elems(p);
    const int threads = 32 * nw;
    if (!is_pow2(bm) || !is_pow2(bn)) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: fwd_exact needs powers of two", bm, bn);
        return -1;
    }
    if (bn % vec != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (P rows are read in 16-byte vectors)", bn, vec);
        return -1;
    }
    const int tn = pick_tn(p, bm, bn, p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], 0, 1);
    if (!tn) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d: no split of the rows over the threads (a lane "
                 "group of 2^k <= 32 lanes must divide BLOCK_N with BLOCK_M*2^k a multiple of %d threads); use a "
                 "larger BLOCK_M or fewer NUM_WARPS", bm, bn, nw, threads);
        return -1;
    }
    /* Per-thread register arrays, in 32-bit words: output rows x chunks and scores. Past these
     * limits ptxas spills (swept for sm_90 with CUDA 13.0: f32 from 144 words, f64 from 128; at
     * 512 threads each thread has only 128 registers). */
    const int rm = bm * tn / threads;
    const int words = rm * (chunks_per_lane(p, p[GEN_HEAD_DIM_V], tn) * vec + bn / tn) * (elem_bytes(p) / 4);
    const int f64 = p[GEN_DTYPE] == DTYPE_F64;
    const int limit = threads > 256 ? (f64 ? 40 : 56) : (f64 ? 112 : 128);
    if (words > limit) {
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM_V=%d, DTYPE=%d: %d accumulator "
                 "registers per thread would spill (limit %d)", bm, bn, nw, p[GEN_HEAD_DIM_V], p[GEN_DTYPE], words,
                 limit);
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
