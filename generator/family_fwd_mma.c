/* The fwd_mma family: tensor-core forward for f16/bf16, and f32 as TF32 (templates/fwd_mma.cu). */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/fwd_mma.h"

static size_t smem_fwd(const int *p)
{
    return (size_t)fwd_mma_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V],
                                      p[GEN_NUM_STAGES], p[GEN_DTYPE], p[GEN_SPLIT_SMEM], p[GEN_ALLOW_TF32]);
}

/* The rules are traits/fwd_mma.h's (the template static_asserts the same); here their messages. */
static int check_fwd(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    switch (fwd_mma_rule(bm, bn, nw, d, dv, p[GEN_CAUSAL], p[GEN_DTYPE], p[GEN_ALLOW_TF32], p[GEN_SPLIT_SMEM])) {
    case FWD_MMA_OK:
        return 0;
    case FWD_MMA_BAD_BLOCK_M:
        snprintf(why, len, "BLOCK_M=%d is not a multiple of 16*NUM_WARPS=%d (each warp owns whole 16-row mma tiles)",
                 bm, 16 * nw);
        break;
    case FWD_MMA_BAD_BLOCK_N:
        snprintf(why, len, "BLOCK_N=%d is not a multiple of 16", bn);
        break;
    case FWD_MMA_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: fwd_mma needs multiples of 32", d, dv);
        break;
    case FWD_MMA_BAD_TF32:
        snprintf(why, len, "%s=1 with DTYPE=%s: TF32 products are for f32 (0 in f16 and bf16)",
                 p[GEN_ALLOW_TF32] ? "ALLOW_TF32" : "SPLIT_SMEM", gen_dtype_name(p[GEN_DTYPE]));
        break;
    default:
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d: %d fragment registers per thread would spill (limit %d)",
                 bm, bn, nw, fwd_mma_fragment_regs(bm, bn, nw, d, dv, p[GEN_CAUSAL], p[GEN_DTYPE]),
                 fwd_mma_register_limit(p[GEN_DTYPE]));
        break;
    }
    return -1;
}

/* The combine step of a forward whose keys several blocks share. */
static int splits_keys(const int *p)
{
    return p[GEN_SPLITS] > 1;
}

static const gen_entry fwd_entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL, GEN_OP_FAMILY, 1, 0 },
    { "ft_fwd_combine", 0, NULL, splits_keys, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_fwd_mma = {
    .name = "fwd_mma",
    .file = "families/fwd_mma.cu",
    .parts = FT_PARTS("traits/fwd_mma.h", "arch/sm80.cuh", "common/ft_block.cuh", "common/ft_softcap.cuh", "common/ft_softmax.cuh",
                      "common/ft_combine.cuh"),
    .backward = 0,
    .dtypes = (1u << 0) | (1u << 1) | (1u << 2),   /* f32 as TF32 (ALLOW_TF32: three products or one) */
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) |
              GEN_FUSED_PROBLEM_PARAMS |
              GEN_BIT(GEN_SPLITS) | GEN_BIT(GEN_PACK_GQA) | GEN_BIT(GEN_ALLOW_TF32) | GEN_BIT(GEN_SPLIT_SMEM),
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 128, [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = fwd_entries,
    .entry_count = 2,
    .check = check_fwd,
    .features = GEN_FEATURES_ALL,
    .default_rank = 2,   /* every head dim and GPU: after the Hopper family */
};
