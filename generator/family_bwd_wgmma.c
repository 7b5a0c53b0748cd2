/* The bwd_wgmma family: Hopper warpgroup backward for f16/bf16 (templates/families/bwd_wgmma.cu);
 * its layout, shared-memory size and rules are traits/bwd_wgmma.h. */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/bwd_wgmma.h"

static size_t smem_dkdv(const int *p)
{
    return (size_t)bwd_wgmma_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM],
                                        p[GEN_HEAD_DIM_V], p[GEN_NUM_STAGES]);
}

/* Whether p's persistent blocks walk a packed batch's own key tiles (traits/bwd_wgmma.h). */
static int packed_walk_bwd(const int *p)
{
    return bwd_wgmma_packed_walk(p[GEN_BLOCK_M]);
}

/* The rules are traits/bwd_wgmma.h's (the template static_asserts the same); here their messages. */
static int check_bwd_wgmma(const int *p, char *why, size_t len)
{
    const int nw = p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], stages = p[GEN_NUM_STAGES];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    if (p[GEN_PERSISTENT] && p[GEN_VARLEN] && !packed_walk_bwd(p)) {
        snprintf(why, len, "PERSISTENT=%d with VARLEN=1 and BLOCK_M=%d: bwd_wgmma walks a packed batch's key tiles "
                 "with 64-row query tiles only (with more rows the consumers' registers spill)", p[GEN_PERSISTENT],
                 p[GEN_BLOCK_M]);
        return -1;
    }
    if (p[GEN_SPLITS] > 1 && p[GEN_VARLEN]) {
        snprintf(why, len, "SPLITS=%d with VARLEN=1: bwd_wgmma shares a group's query heads over blocks in a dense "
                 "batch only", p[GEN_SPLITS]);
        return -1;
    }
    switch (bwd_wgmma_rule(bm, bn, nw, stages, d, dv, p[GEN_DQ_MODE], p[GEN_DQ_FIRST], p[GEN_DK_SS], p[GEN_DV_EARLY],
                           p[GEN_PERSISTENT], p[GEN_L_EARLY], p[GEN_DQ_INIT], p[GEN_PRODUCER_REGS],
                           p[GEN_STAGGER])) {
    case BWD_WGMMA_OK:
        return 0;
    case BWD_WGMMA_BAD_WARPS:
        if (bwd_wgmma_split_cols(d, bn) || bwd_wgmma_wide_keys(d, bn))
            snprintf(why, len, "NUM_WARPS=%d with HEAD_DIM=%d BLOCK_N=%d: bwd_wgmma runs two consumer warpgroups "
                     "beside a producer there (12 warps)", nw, d, bn);
        else
            snprintf(why, len, "NUM_WARPS=%d with BLOCK_N=%d: bwd_wgmma runs a consumer warpgroup per 64 keys (%d "
                     "warps), and may add a producer warpgroup (%d)", nw, bn, bn / 16, bn / 16 + 4);
        break;
    case BWD_WGMMA_BAD_BLOCK_M:
        snprintf(why, len, "BLOCK_M=%d with BLOCK_N=%d NUM_WARPS=%d HEAD_DIM=%d HEAD_DIM_V=%d DQ_MODE=%d L_EARLY=%d "
                 "DK_SS=%d: bwd_wgmma streams query tiles of 64, or of 128 beside two consumers (BLOCK_N=128) at head "
                 "dims 64, or of 80 beside two consumers and a producer (BLOCK_N=128, NUM_WARPS=12) at head dims 128 "
                 "with DQ_MODE=0, L_EARLY=0 and DK_SS=0", bm, bn, nw, d, dv, p[GEN_DQ_MODE], p[GEN_L_EARLY],
                 p[GEN_DK_SS]);
        break;
    case BWD_WGMMA_BAD_BLOCK_N:
        snprintf(why, len, "BLOCK_N=%d: bwd_wgmma takes key tiles of 64 or 128 (64 keys a consumer warpgroup; 64 at "
                 "head dim 256 and at 192 over 192)", bn);
        break;
    case BWD_WGMMA_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: bwd_wgmma takes head dims of 64, 96 or 128 (any "
                 "pair), or HEAD_DIM 192 or 256 with HEAD_DIM_V 128 or the same (192 over 192 with BLOCK_N=64)", d, dv);
        break;
    case BWD_WGMMA_BAD_STAGES:
        snprintf(why, len, "NUM_STAGES=%d is out of range for bwd_wgmma (1..3)", stages);
        break;
    case BWD_WGMMA_BAD_DQ_MODE:
        snprintf(why, len, "DQ_MODE=%d: bwd_wgmma adds dQ with the copy engine, in any order (0, atomic) or in "
                 "a fixed one (2, ordered)", p[GEN_DQ_MODE]);
        break;
    case BWD_WGMMA_BAD_SMEM:
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d needs %zu "
                 "bytes of shared memory (at most %d)", bm, bn, nw, stages, d, dv, smem_dkdv(p), FT_SMEM_MAX_BYTES);
        break;
    case BWD_WGMMA_BAD_ORDER:
        snprintf(why, len, "DQ_FIRST=%d DK_SS=%d DV_EARLY=%d with NUM_WARPS=%d HEAD_DIM=%d: bwd_wgmma reorders a "
                 "tile's products (any of them 1) only where consumers beside a producer warpgroup (%d warps) split "
                 "the keys (head dims up to 128)", p[GEN_DQ_FIRST], p[GEN_DK_SS], p[GEN_DV_EARLY], nw, d,
                 bwd_wgmma_consumers(bn, d) * 4 + 4);
        break;
    case BWD_WGMMA_BAD_PERSISTENT:
        snprintf(why, len, "PERSISTENT=%d with NUM_WARPS=%d HEAD_DIM=%d DQ_MODE=%d: bwd_wgmma's blocks loop over key "
                 "tiles only where consumers beside a producer warpgroup (%d warps) split the keys (head dims up "
                 "to 128) and dQ is added in any order (DQ_MODE=0)", p[GEN_PERSISTENT], nw, d, p[GEN_DQ_MODE],
                 bwd_wgmma_consumers(bn, d) * 4 + 4);
        break;
    case BWD_WGMMA_BAD_L_EARLY:
        snprintf(why, len, "L_EARLY=%d with HEAD_DIM=%d BLOCK_N=%d: bwd_wgmma reads a tile's L early only where its "
                 "consumers split the keys (not the columns, at head dims 192 and 256 with 64 keys)", p[GEN_L_EARLY],
                 d, bn);
        break;
    case BWD_WGMMA_BAD_DQ_INIT:
        snprintf(why, len, "DQ_INIT=%d with NUM_WARPS=%d BLOCK_N=%d HEAD_DIM=%d: bwd_wgmma stores a query tile's first "
                 "dQ share (1, store) only where a producer warpgroup adds dQ (%d warps); 0 (zero) or 1",
                 p[GEN_DQ_INIT], nw, bn, d, bwd_wgmma_consumers(bn, d) * 4 + 4);
        break;
    case BWD_WGMMA_BAD_PRODUCER_REGS:
        snprintf(why, len, "PRODUCER_REGS=%d with NUM_WARPS=%d BLOCK_N=%d HEAD_DIM=%d: bwd_wgmma's producer warpgroup "
                 "(%d warps) keeps 24 to 56 registers in steps of 8 (setmaxnreg), or 0 for the family's choice",
                 p[GEN_PRODUCER_REGS], nw, bn, d, bwd_wgmma_consumers(bn, d) * 4 + 4);
        break;
    case BWD_WGMMA_BAD_STAGGER:
        snprintf(why, len, "STAGGER=%d with DQ_MODE=%d: bwd_wgmma staggers its walks over the query tiles only where dQ "
                 "is added in any order (DQ_MODE=0, atomic)", p[GEN_STAGGER], p[GEN_DQ_MODE]);
        break;
    default:
        snprintf(why, len, "HEAD_DIM=%d HEAD_DIM_V=%d PRODUCER_REGS=%d: about %d registers per thread would spill (at "
                 "most %d)", d, dv, p[GEN_PRODUCER_REGS], bwd_wgmma_regs(bm, bn, nw, d, dv),
                 bwd_wgmma_consumer_regs(bn, nw, d, 0, p[GEN_PRODUCER_REGS]));
        break;
    }
    return -1;
}

static void repeatable_bwd_wgmma(int *p)
{
    bwd_wgmma_repeatable_tiles(p[GEN_HEAD_DIM], &p[GEN_BLOCK_N], &p[GEN_NUM_WARPS], &p[GEN_NUM_STAGES]);
}

static void head_dim_tiles_bwd_wgmma(int *p)
{
    bwd_wgmma_head_dim_tiles(p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], &p[GEN_BLOCK_N], &p[GEN_NUM_WARPS], &p[GEN_NUM_STAGES]);
}

/* ft_bwd_dkdv reads Q and dO by the copy engine, a query tile a box. */
static int map_rows_bwd(const int *p)
{
    return p[GEN_BLOCK_M];
}

/* ... and, where its epilogue stages dK and dV in shared memory, reads K and V and writes dK and
 * dV by the copy engine, a key tile a box. */
static int out_map_rows_bwd(const int *p)
{
    return bwd_wgmma_key_maps(p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM], p[GEN_SPLITS], p[GEN_VARLEN])
               ? p[GEN_BLOCK_N]
               : 0;
}

/* PERSISTENT: ft_bwd_dkdv's blocks loop over key tiles (its entry's `persists`); a packed batch's
 * own (packed_walk). */
static int persistent_bwd(const int *p)
{
    return p[GEN_PERSISTENT];
}

/* The reduce step of a backward whose groups' query heads several blocks share. */
static int splits_group(const int *p)
{
    return p[GEN_SPLITS] > 1;
}

static const gen_entry bwd_wgmma_entries[] = {
    { "ft_bwd_preprocess", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL, GEN_OP_FAMILY, 1, 1 },
    { "ft_bwd_dkdv_reduce", 1, NULL, splits_group, GEN_OP_FAMILY, 0, 0 },
    { "ft_bwd_dq_convert", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
};

const gen_family gen_family_bwd_wgmma = {
    .name = "bwd_wgmma",
    .file = "families/bwd_wgmma.cu",
    .parts = FT_PARTS("traits/bwd_wgmma.h", "traits/ft_packed.h", "arch/sm80.cuh", "arch/sm90.cuh", "common/ft_block.cuh",
                      "common/ft_softcap.cuh", "common/ft_bwd_steps.cuh", "common/ft_bwd_reduce.cuh"),
    .backward = 1,
    .dtypes = (1u << 1) | (1u << 2),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE) |
              GEN_FUSED_PROBLEM_PARAMS |
              GEN_BIT(GEN_SPLITS) | GEN_BIT(GEN_DQ_FIRST) | GEN_BIT(GEN_DK_SS) | GEN_BIT(GEN_DV_EARLY) | GEN_BIT(GEN_L_EARLY) |
              GEN_BIT(GEN_PERSISTENT) | GEN_BIT(GEN_DQ_INIT) | GEN_BIT(GEN_PRODUCER_REGS) |
              GEN_BIT(GEN_STAGGER),
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 64, [GEN_BLOCK_N] = 128, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = bwd_wgmma_entries,
    .entry_count = 4,
    .check = check_bwd_wgmma,
    .target_arch = "sm_90a",
    .map_rows = map_rows_bwd,
    .o_map_rows = out_map_rows_bwd,
    .persistent = persistent_bwd,
    .packed_walk = packed_walk_bwd,
    .repeatable = repeatable_bwd_wgmma,
    .head_dim_tiles = head_dim_tiles_bwd_wgmma,
    .min_head_dim = 64,
    .pad_from = 1,   /* faster than mma.sync at 32 from head dim 16 up (notes/kernels.md) */
    .features = GEN_FEATURES_ALL,
    .default_rank = 1,   /* before mma.sync where it runs (Hopper) and its tiles fit */
};
