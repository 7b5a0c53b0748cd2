/* The fwd_exact family: exact f32/f64 forward attention on CUDA cores (templates/families/fwd_exact.cu). */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/exact.h"

#define DTYPE_F64 3

static size_t smem_fwd(const int *p)
{
    return (size_t)fwd_exact_smem_bytes(p[GEN_DTYPE], p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM],
                                        p[GEN_HEAD_DIM_V], p[GEN_NUM_STAGES]);
}

/* The rules are traits/exact.h's (the template static_asserts the same); here their messages. */
static int check_fwd(const int *p, char *why, size_t len)
{
    const int dt = p[GEN_DTYPE], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    switch (fwd_exact_rule(dt, bm, bn, nw, p[GEN_NUM_STAGES], d, dv)) {
    case EXACT_OK:
        return 0;
    case EXACT_BAD_TILES:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: fwd_exact needs powers of two", bm, bn);
        break;
    case EXACT_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: fwd_exact takes multiples of 8 (a smaller head dim runs "
                 "padded to one, DATA_DIM)", p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V]);
        break;
    case EXACT_BAD_VEC_N:
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (P rows are read in 16-byte vectors)", bn,
                 exact_vec(dt));
        break;
    case EXACT_BAD_SPLIT:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d: no split of the rows over the threads (a lane "
                 "group of 2^k <= 32 lanes must divide BLOCK_N with BLOCK_M*2^k a multiple of %d threads); use a "
                 "larger BLOCK_M or fewer NUM_WARPS", bm, bn, nw, 32 * nw);
        break;
    case EXACT_BAD_SMEM:
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d DTYPE=%d needs %zu "
                 "bytes of shared memory (at most %d)", bm, bn, p[GEN_NUM_STAGES], d, dv, dt, smem_fwd(p),
                 FT_SMEM_MAX_BYTES);
        break;
    default:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM_V=%d, DTYPE=%d: %d accumulator "
                 "registers per thread would spill (limit %d)", bm, bn, nw, dv, dt,
                 fwd_exact_words(dt, bm, bn, nw, d, dv), fwd_exact_word_limit(dt, nw, dv));
        break;
    }
    return -1;
}

static const gen_entry entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_fwd_exact = {
    .name = "fwd_exact",
    .file = "families/fwd_exact.cu",
    .parts = FT_PARTS("traits/exact.h", "arch/sm80.cuh", "common/ft_block.cuh", "exact/ft_exact.cuh"),
    .backward = 0,
    .dtypes = (1u << 0) | (1u << DTYPE_F64),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) |
              GEN_FUSED_PROBLEM_PARAMS,
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 64, [GEN_BLOCK_N] = 32, [GEN_NUM_WARPS] = 4, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = entries,
    .entry_count = 1,
    .check = check_fwd,
    .features = GEN_FEATURES_ALL,
    .default_rank = 3,   /* f64's; f32's after fwd_mma (TF32), where its rows or head dims do not fit */
};
