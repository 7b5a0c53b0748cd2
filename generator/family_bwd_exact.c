/* The bwd_exact family: exact f32/f64 backward attention on CUDA cores (templates/families/bwd_exact.cu). */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/exact.h"

#define DTYPE_F64 3

static size_t smem_dkdv(const int *p)
{
    return (size_t)bwd_exact_dkdv_smem_bytes(p[GEN_DTYPE], p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM],
                                             p[GEN_HEAD_DIM_V], p[GEN_NUM_STAGES]);
}

static size_t smem_dq(const int *p)
{
    return (size_t)bwd_exact_dq_smem_bytes(p[GEN_DTYPE], p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM],
                                           p[GEN_HEAD_DIM_V], p[GEN_NUM_STAGES]);
}

static int used_dq(const int *p)
{
    return p[GEN_DQ_MODE] == FT_DQ_SEPARATE;
}
static int used_dq_convert(const int *p)
{
    return p[GEN_DQ_MODE] == FT_DQ_ATOMIC;
}

/* The rules are traits/exact.h's (the template static_asserts the same); here their messages. */
static int check_bwd(const int *p, char *why, size_t len)
{
    const int dt = p[GEN_DTYPE], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V], dq_mode = p[GEN_DQ_MODE], threads = 32 * nw;
    const int atomic = dq_mode == FT_DQ_ATOMIC;
    switch (bwd_exact_rule(dt, bm, bn, nw, p[GEN_NUM_STAGES], d, dv, dq_mode, p[GEN_CAUSAL])) {
    case EXACT_OK:
        return 0;
    case EXACT_BAD_DQ_MODE:
        snprintf(why, len, "DQ_MODE=%d: bwd_exact makes dQ with atomics (0) or in its own kernel (1, separate)",
                 dq_mode);
        break;
    case EXACT_BAD_TILES:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: bwd_exact needs powers of two", bm, bn);
        break;
    case EXACT_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: bwd_exact takes multiples of 8 (a smaller head dim runs "
                 "padded to one, DATA_DIM)", p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V]);
        break;
    case EXACT_BAD_VEC_M:
        snprintf(why, len, "BLOCK_M=%d is not a multiple of %d (P^T rows are read in 16-byte vectors)", bm,
                 exact_vec(dt));
        break;
    case EXACT_BAD_VEC_N:
        snprintf(why, len, "BLOCK_N=%d is not a multiple of %d (dS rows are read in 16-byte vectors)", bn,
                 exact_vec(dt));
        break;
    case EXACT_BAD_SPLIT:
        snprintf(why, len, "BLOCK_N=%d, BLOCK_M=%d, NUM_WARPS=%d: ft_bwd_dkdv has no split of the keys over the "
                 "threads (a lane group of 2^k <= 32 lanes must divide BLOCK_M with BLOCK_N*2^k a multiple of %d "
                 "threads); use a larger BLOCK_N or fewer NUM_WARPS", bn, bm, nw, threads);
        break;
    case EXACT_BAD_SPLIT_DQ:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d: %s has no split of the queries over the threads "
                 "(a lane group of 2^k <= 32 lanes%s with BLOCK_M*2^k a multiple of %d threads); use a larger "
                 "BLOCK_M or fewer NUM_WARPS", bm, bn, nw, atomic ? "the dQ product of ft_bwd_dkdv" : "ft_bwd_dq",
                 atomic ? "" : " must divide BLOCK_N", threads);
        break;
    case EXACT_BAD_SMEM: {
        const size_t smem = !atomic && smem_dq(p) > smem_dkdv(p) ? smem_dq(p) : smem_dkdv(p);
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d DTYPE=%d needs %zu "
                 "bytes of shared memory (at most %d)", bm, bn, p[GEN_NUM_STAGES], d, dv, dt, smem, FT_SMEM_MAX_BYTES);
        break;
    }
    case EXACT_BAD_REGISTERS:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, HEAD_DIM_V=%d, DTYPE=%d: ft_bwd_dkdv "
                 "would hold %d accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, dv, dt,
                 bwd_exact_dkdv_words(dt, bm, bn, nw, d, dv, dq_mode), bwd_exact_word_limit(dt, nw, p[GEN_CAUSAL]));
        break;
    default:
        snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d, NUM_WARPS=%d, HEAD_DIM=%d, DTYPE=%d: ft_bwd_dq would hold %d "
                 "accumulator registers per thread and spill (limit %d)", bm, bn, nw, d, dt,
                 bwd_exact_dq_words(dt, bm, bn, nw, d, dv), bwd_exact_word_limit(dt, nw, p[GEN_CAUSAL]));
        break;
    }
    return -1;
}

static const gen_entry entries[] = {
    { "ft_bwd_preprocess", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq", 0, smem_dq, used_dq, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq_convert", 0, NULL, used_dq_convert, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_bwd_exact = {
    .name = "bwd_exact",
    .file = "families/bwd_exact.cu",
    .parts = FT_PARTS("traits/exact.h", "arch/sm80.cuh", "common/ft_block.cuh", "exact/ft_exact.cuh",
                      "common/ft_bwd_steps.cuh"),
    .backward = 1,
    .dtypes = (1u << 0) | (1u << DTYPE_F64),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE) |
              GEN_FUSED_PROBLEM_PARAMS,
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 32, [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = entries,
    .entry_count = 4,
    .check = check_bwd,
    .features = GEN_FEATURES_ALL,
    .default_rank = 3,   /* f64's; f32's after bwd_mma (TF32), where its rows or head dims do not fit */
};
