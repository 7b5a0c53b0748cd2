/* The bwd_mma family: tensor-core backward for f16/bf16, and f32 as TF32 (ALLOW_TF32: each
 * product three TF32 products or one) (templates/families/bwd_mma.cu); its
 * warp layouts, shared-memory sizes and rules are traits/bwd_mma.h. */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/bwd_mma.h"

static size_t smem_dkdv(const int *p)
{
    return (size_t)bwd_mma_dkdv_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V],
                                           p[GEN_NUM_STAGES], p[GEN_DQ_MODE], p[GEN_DTYPE], p[GEN_SPLIT_QUERIES],
                                           p[GEN_SPLIT_SMEM], p[GEN_ALLOW_TF32]);
}

static size_t smem_dq(const int *p)
{
    return (size_t)bwd_mma_dq_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V],
                                         p[GEN_NUM_STAGES], p[GEN_DTYPE]);
}

static int used_dq(const int *p)
{
    return p[GEN_DQ_MODE] == 1;
}

static int used_dq_convert(const int *p)
{
    return p[GEN_DQ_MODE] == 0;
}

/* The rules are traits/bwd_mma.h's (the template static_asserts the same); here their messages. */
static int check_bwd_mma(const int *p, char *why, size_t len)
{
    const int nw = p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], stages = p[GEN_NUM_STAGES];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V], dq_mode = p[GEN_DQ_MODE], dtype = p[GEN_DTYPE];
    const int kvn = bwd_mma_kv_warps_n(nw, bn), qm = bwd_mma_q_warps_m(nw, bm), unit = bwd_mma_col_unit(dtype);
    switch (bwd_mma_rule(bm, bn, nw, stages, d, dv, dq_mode, dtype, p[GEN_ALLOW_TF32], p[GEN_SPLIT_QUERIES],
                         p[GEN_SPLIT_SMEM])) {
    case BWD_MMA_OK:
        return 0;
    case BWD_MMA_BAD_BLOCK_M:
        snprintf(why, len, "BLOCK_M=%d is not a multiple of 16 (mma tiles)", bm);
        break;
    case BWD_MMA_BAD_BLOCK_N:
        snprintf(why, len, "BLOCK_N=%d is not a multiple of 16 (mma tiles)", bn);
        break;
    case BWD_MMA_BAD_STAGES:
        snprintf(why, len, "NUM_STAGES=%d is out of range for bwd_mma (1..3)", stages);
        break;
    case BWD_MMA_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: bwd_mma needs multiples of 32", d, dv);
        break;
    case BWD_MMA_BAD_KV_WARPS:
        snprintf(why, len, "NUM_WARPS=%d must divide BLOCK_N/16=%d or be a multiple of it", nw, bn / 16);
        break;
    case BWD_MMA_BAD_KV_SPLIT:
        snprintf(why, len, "NUM_WARPS=%d > BLOCK_N/16=%d splits the head dims %d ways: HEAD_DIM=%d and "
                 "HEAD_DIM_V=%d must be multiples of %d in %s", nw, bn / 16, nw / kvn, d, dv, unit * (nw / kvn),
                 gen_dtype_name(dtype));
        break;
    case BWD_MMA_BAD_Q_WARPS:
        snprintf(why, len, "NUM_WARPS=%d must divide BLOCK_M/16=%d or be a multiple of it", nw, bm / 16);
        break;
    case BWD_MMA_BAD_DQ_SPLIT:
        snprintf(why, len, "DQ_MODE=1 with NUM_WARPS=%d > BLOCK_M/16=%d splits each key tile %d ways: "
                 "BLOCK_N=%d must be a multiple of %d", nw, bm / 16, nw / qm, bn, 16 * (nw / qm));
        break;
    case BWD_MMA_BAD_DQ_MODE:
        snprintf(why, len, "DQ_MODE=%d: bwd_mma makes dQ with atomics (0) or in its own kernel (1, separate)",
                 dq_mode);
        break;
    case BWD_MMA_BAD_SMEM: {
        const int dq_kernel = dq_mode == 1 && smem_dq(p) > smem_dkdv(p);   /* ft_bwd_dq's is the larger */
        const size_t smem = dq_kernel ? smem_dq(p) : smem_dkdv(p);
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d%s needs %zu bytes "
                 "of shared memory (at most %d)", bm, bn, stages, d, dv,
                 !dq_kernel && bwd_mma_split_planes(p[GEN_SPLIT_SMEM], p[GEN_ALLOW_TF32]) ? " and SPLIT_SMEM=1" : "",
                 smem, FT_SMEM_MAX_BYTES);
        break;
    }
    case BWD_MMA_BAD_TF32:
        snprintf(why, len, "ALLOW_TF32=1 with DTYPE=%s: TF32 products are for f32", gen_dtype_name(dtype));
        break;
    case BWD_MMA_BAD_SPLIT_SMEM:
        snprintf(why, len, "SPLIT_SMEM=1 with DTYPE=%s: bwd_mma splits Q and dO into TF32 parts in f32 only",
                 gen_dtype_name(dtype));
        break;
    case BWD_MMA_BAD_SPLIT_QUERIES:
        snprintf(why, len, "SPLIT_QUERIES=1 with DTYPE=%s NUM_WARPS=%d BLOCK_N=%d BLOCK_M=%d DQ_MODE=%d: bwd_mma splits "
                 "the queries between a key slab's warps in f32 only, where two warps share each 16-key slab "
                 "(NUM_WARPS = BLOCK_N/8), dQ is added by atomics (DQ_MODE=0) and each half is whole 16-query tiles",
                 gen_dtype_name(dtype), nw, bn, bm, dq_mode);
        break;
    default:
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d with HEAD_DIM=%d HEAD_DIM_V=%d in %s: about %d "
                 "registers per thread would spill (at most %d for %d threads)", bm, bn, nw, d, dv,
                 gen_dtype_name(dtype), bwd_mma_regs(bm, bn, nw, d, dv, dq_mode, dtype, p[GEN_ALLOW_TF32]),
                 ft_register_cap(nw * 32),
                 nw * 32);
        break;
    }
    return -1;
}

static const gen_entry bwd_mma_entries[] = {
    { "ft_bwd_preprocess", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq", 0, smem_dq, used_dq, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq_convert", 0, NULL, used_dq_convert, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_bwd_mma = {
    .name = "bwd_mma",
    .file = "families/bwd_mma.cu",
    .parts = FT_PARTS("traits/bwd_mma.h", "arch/sm80.cuh", "common/ft_block.cuh", "common/ft_softcap.cuh", "common/ft_bwd_steps.cuh"),
    .backward = 1,
    .dtypes = (1u << 0) | (1u << 1) | (1u << 2),   /* f32 as TF32 (ALLOW_TF32: three products or one) */
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE) |
              GEN_BIT(GEN_ALLOW_TF32) | GEN_BIT(GEN_SPLIT_QUERIES) | GEN_BIT(GEN_SPLIT_SMEM) | GEN_FUSED_PROBLEM_PARAMS,
    /* 32 x 128 tiles, 8 warps, 2 stages: no spills for head dims 32-128 on sm_80 and sm_90 in
     * every CAUSAL/CAUSAL_SKIP/EVEN/DQ_MODE variant (ptxas, CUDA 13.0); BLOCK_M 64 spills a
     * few bytes at head dim 128. Head dim 256 needs BLOCK_N 64 (warp pairs split dK/dV). */
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 32, [GEN_BLOCK_N] = 128, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = bwd_mma_entries,
    .entry_count = 4,
    .check = check_bwd_mma,
    .features = GEN_FEATURES_ALL,
    .default_rank = 2,   /* every head dim and GPU: after the Hopper family */
};
