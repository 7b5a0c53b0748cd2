/* The bwd_wgmma_f32 family: the float32 backward on Hopper's warpgroup tensor cores, three TF32
 * products a product (one with ALLOW_TF32), or six bfloat16 part products (BF16_PARTS)
 * (templates/families/bwd_wgmma_f32.cu); its shared memory and rules are traits/bwd_wgmma_f32.h.
 * Head dim 64, and 128 with one TF32 product or the parts; bwd_mma stays the float32 backward
 * everywhere else. */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/bwd_wgmma_f32.h"

static size_t smem_dkdv(const int *p)
{
    return (size_t)bwd_wgmma_f32_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V],
                                            p[GEN_NUM_STAGES], p[GEN_ALLOW_TF32], p[GEN_DQ_BULK], p[GEN_BF16_PARTS]);
}

/* The rules are traits/bwd_wgmma_f32.h's (the template static_asserts the same); here their messages. */
static int check_bwd_wgmma_f32(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS], stages = p[GEN_NUM_STAGES];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    const int rule = bwd_wgmma_f32_rule(bm, bn, nw, stages, d, dv, p[GEN_DQ_MODE], p[GEN_ALLOW_TF32], p[GEN_DQ_BULK],
                                        p[GEN_BF16_PARTS]);
    switch (rule) {
    case BWD_WGMMA_F32_OK:
        return 0;
    case BWD_WGMMA_F32_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d with ALLOW_TF32=%d BF16_PARTS=%d: bwd_wgmma_f32 takes head dims "
                 "of 64, or of 128 with ALLOW_TF32=1 or BF16_PARTS=1 (three TF32 products at 128 do not fit shared "
                 "memory)", d, dv, p[GEN_ALLOW_TF32], p[GEN_BF16_PARTS]);
        break;
    case BWD_WGMMA_F32_BAD_PARTS:
        snprintf(why, len, "BF16_PARTS=1 with HEAD_DIM=%d HEAD_DIM_V=%d: bwd_wgmma_f32 takes the bfloat16 parts at head "
                 "dims of 128 (two consumer warpgroups)", d, dv);
        break;
    case BWD_WGMMA_F32_BAD_BLOCK_M:
        snprintf(why, len, "BLOCK_M=%d: bwd_wgmma_f32 takes query tiles of 32 or 64 rows at head dim 64, of 32 at "
                 "128 (HEAD_DIM=%d)", bm, d);
        break;
    case BWD_WGMMA_F32_BAD_BLOCK_N:
        snprintf(why, len, "BLOCK_N=%d: bwd_wgmma_f32 takes key tiles of 64 (a consumer warpgroup's M)", bn);
        break;
    case BWD_WGMMA_F32_BAD_WARPS:
        snprintf(why, len, "NUM_WARPS=%d: bwd_wgmma_f32 runs 8 warps at head dim 64, 12 at 128 (a producer warpgroup "
                 "and a consumer for each 64 of HEAD_DIM=%d)", nw, d);
        break;
    case BWD_WGMMA_F32_BAD_STAGES:
        snprintf(why, len, "NUM_STAGES=%d is out of range for bwd_wgmma_f32 (1..3)", stages);
        break;
    case BWD_WGMMA_F32_BAD_DQ_MODE:
        snprintf(why, len, "DQ_MODE=%s with DQ_BULK=%d: bwd_wgmma_f32 adds dQ by atomics, into dq_accum "
                 "(DQ_MODE=atomic, either DQ_BULK) or straight into dQ (DQ_MODE=direct, DQ_BULK=0)",
                 gen_param_value_name(GEN_DQ_MODE, p[GEN_DQ_MODE]), p[GEN_DQ_BULK]);
        break;
    case BWD_WGMMA_F32_BAD_SMEM:
        snprintf(why, len,
                 "BLOCK_M=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d, ALLOW_TF32=%d, BF16_PARTS=%d and DQ_BULK=%d "
                 "needs %zu bytes of shared memory (at most %d)", bm, stages, d, dv, p[GEN_ALLOW_TF32],
                 p[GEN_BF16_PARTS], p[GEN_DQ_BULK], smem_dkdv(p), FT_SMEM_MAX_BYTES);
        break;
    default:
        snprintf(why, len, "bwd_wgmma_f32 refuses this configuration (rule %d of traits/bwd_wgmma_f32.h)", rule);
        break;
    }
    return -1;
}

/* The built-in default's tiles for the problem (traits/bwd_wgmma_f32.h): the warps for the head
 * dim; one TF32 product takes 64-row tiles at head dim 64; three at 128 the bfloat16 parts. */
static void default_tiles_bwd_wgmma_f32(int *p)
{
    bwd_wgmma_f32_default_tiles(p[GEN_HEAD_DIM], p[GEN_ALLOW_TF32], &p[GEN_BLOCK_M], &p[GEN_NUM_WARPS],
                                &p[GEN_NUM_STAGES], &p[GEN_BF16_PARTS]);
}

/* DQ_MODE direct adds dQ scaled into dQ itself (zeroed by ft_bwd_preprocess): nothing to convert. */
static int used_dq_convert(const int *p)
{
    return p[GEN_DQ_MODE] == FT_DQ_ATOMIC;
}

static const gen_entry bwd_wgmma_f32_entries[] = {
    { "ft_bwd_preprocess", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq_convert", 0, NULL, used_dq_convert, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_bwd_wgmma_f32 = {
    .name = "bwd_wgmma_f32",
    .file = "families/bwd_wgmma_f32.cu",
    .parts = FT_PARTS("traits/bwd_wgmma_f32.h", "arch/sm80.cuh", "arch/sm90.cuh", "common/ft_block.cuh",
                      "common/ft_softcap.cuh", "common/ft_bwd_steps.cuh"),
    .backward = 1,
    .dtypes = 1u << 0,
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE) |
              GEN_BIT(GEN_ALLOW_TF32) | GEN_BIT(GEN_DQ_BULK) | GEN_BIT(GEN_BF16_PARTS) | GEN_FUSED_PROBLEM_PARAMS,
    /* 32-query tiles in two slots: the most three products fit (211 KB of shared memory). */
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 64, [GEN_HEAD_DIM_V] = 64,
        [GEN_BLOCK_M] = 32, [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0,
        [GEN_DQ_MODE] = FT_DQ_DIRECT, [GEN_SPLITS] = 1,
    },
    .entries = bwd_wgmma_f32_entries,
    .entry_count = 3,
    .check = check_bwd_wgmma_f32,
    .head_dim_tiles = default_tiles_bwd_wgmma_f32,
    .target_arch = "sm_90a",
    .min_head_dim = 64,
    /* Head dims below 64 stay on bwd_mma's built-in default: padded here they were not measured. */
    .pad_from = 64,
    .features = GEN_FEATURES_ALL,
    .default_rank = 1,   /* before mma.sync where it runs (Hopper, head dim 64): 1.09-1.17x bwd_mma's best on the H200 */
};
