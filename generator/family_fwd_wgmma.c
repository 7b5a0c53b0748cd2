/* The fwd_wgmma family: Hopper warpgroup forward for f16/bf16, and f32 on TF32 tensor cores or
 * in bfloat16 parts (templates/fwd_wgmma.cu). */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/fwd_wgmma.h"

static size_t smem_fwd(const int *p)
{
    return (size_t)fwd_wgmma_smem_bytes(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM],
                                        p[GEN_HEAD_DIM_V], p[GEN_NUM_STAGES], p[GEN_PERSISTENT], p[GEN_DTYPE],
                                        fwd_wgmma_form(p[GEN_ALLOW_TF32], p[GEN_BF16_PARTS]), p[GEN_P_SMEM]);
}

/* The rules are traits/fwd_wgmma.h's (the template static_asserts the same); here their messages. */
static int check_fwd(const int *p, char *why, size_t len)
{
    const int bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N], nw = p[GEN_NUM_WARPS];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    const int dtype = p[GEN_DTYPE], form = fwd_wgmma_form(p[GEN_ALLOW_TF32], p[GEN_BF16_PARTS]);
    switch (fwd_wgmma_rule(bm, bn, nw, d, dv, p[GEN_NUM_STAGES], p[GEN_OVERLAP], p[GEN_PINGPONG], p[GEN_PERSISTENT],
                           dtype, form, p[GEN_MULTICAST], p[GEN_CAUSAL], p[GEN_VARLEN], p[GEN_P_SMEM])) {
    case FWD_WGMMA_OK:
        return 0;
    case FWD_WGMMA_BAD_WARPS:
        snprintf(why, len, "NUM_WARPS=%d with BLOCK_M=%d: fwd_wgmma runs a consumer warpgroup per 64 rows (%d "
                 "warps), and may add a producer warpgroup (%d)", nw, bm, bm / 16, bm / 16 + 4);
        break;
    case FWD_WGMMA_BAD_BLOCK_M:
        snprintf(why, len, "BLOCK_M=%d: fwd_wgmma takes 64, 128 or 192 (64 rows a consumer warpgroup)", bm);
        break;
    case FWD_WGMMA_BAD_BLOCK_N:
        if (fwd_wgmma_f32(dtype))
            snprintf(why, len, "BLOCK_N=%d: fwd_wgmma takes a multiple of 32 from 32 to 128 in f32", bn);
        else
            snprintf(why, len, "BLOCK_N=%d: fwd_wgmma takes a multiple of 16 from 64 to 192", bn);
        break;
    case FWD_WGMMA_BAD_TF32:
        snprintf(why, len, "ALLOW_TF32=1 with DTYPE=%s: TF32 products are for f32 (0 in f16 and bf16)",
                 gen_dtype_name(dtype));
        break;
    case FWD_WGMMA_BAD_F32:
        snprintf(why, len, "DTYPE=f32 with BLOCK_N=%d NUM_WARPS=%d BLOCK_M=%d: fwd_wgmma's f32 needs a producer "
                 "warpgroup (NUM_WARPS=%d) and key tiles of whole 32-key panels", bn, nw, bm, bm / 16 + 4);
        break;
    case FWD_WGMMA_BAD_HEAD_DIM:
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: fwd_wgmma takes head dims 64, 96, 128, 192 and 256 (in f32 "
                 "64, 96 and 128)", d, dv);
        break;
    case FWD_WGMMA_BAD_OVERLAP:
        snprintf(why, len, "OVERLAP=1 with NUM_WARPS=%d and BLOCK_M=%d: fwd_wgmma overlaps the softmax with the "
                 "products only with a producer warpgroup (NUM_WARPS=%d)", nw, bm, bm / 16 + 4);
        break;
    case FWD_WGMMA_BAD_PERSISTENT:
        snprintf(why, len, "PERSISTENT=1 with NUM_WARPS=%d and BLOCK_M=%d: fwd_wgmma keeps its blocks resident only "
                 "with a producer warpgroup (NUM_WARPS=%d)", nw, bm, bm / 16 + 4);
        break;
    case FWD_WGMMA_BAD_PINGPONG:
        snprintf(why, len, "PINGPONG=1 with NUM_WARPS=%d and BLOCK_M=%d: fwd_wgmma takes turns between two or three "
                 "consumer warpgroups fed by a producer (BLOCK_M=128, NUM_WARPS=12; BLOCK_M=192, NUM_WARPS=16)", nw, bm);
        break;
    case FWD_WGMMA_BAD_MULTICAST:
        snprintf(why, len, "MULTICAST=1 with NUM_WARPS=%d BLOCK_M=%d PERSISTENT=%d DTYPE=%s CAUSAL=%d VARLEN=%d: "
                 "fwd_wgmma shares K/V loads between a cluster's two blocks only where both walk the same key tiles "
                 "(16-bit, a producer warpgroup, one block a tile, no mask, a dense batch)", nw, bm, p[GEN_PERSISTENT],
                 gen_dtype_name(dtype), p[GEN_CAUSAL], p[GEN_VARLEN]);
        break;
    case FWD_WGMMA_BAD_P_SMEM:
        snprintf(why, len, "P_SMEM=1 with DTYPE=%s NUM_WARPS=%d BLOCK_M=%d BLOCK_N=%d: fwd_wgmma reads P from shared "
                 "memory only in 16-bit, with a producer warpgroup (NUM_WARPS=%d)", gen_dtype_name(dtype), nw, bm, bn,
                 bm / 16 + 4);
        break;
    case FWD_WGMMA_BAD_PARTS:
        snprintf(why, len, "BF16_PARTS=1 with DTYPE=%s ALLOW_TF32=%d NUM_WARPS=%d BLOCK_M=%d BLOCK_N=%d HEAD_DIM=%d "
                 "HEAD_DIM_V=%d: fwd_wgmma makes f32 of bfloat16 parts only for float32's accuracy (f32, ALLOW_TF32=0), "
                 "beside a producer warpgroup (NUM_WARPS=%d), with key tiles of 32 or 64 and head dims 64 or 128",
                 gen_dtype_name(dtype), p[GEN_ALLOW_TF32], nw, bm, bn, d, dv, bm / 16 + 4);
        break;
    default:
        if (fwd_wgmma_parts(dtype, form)) {
            snprintf(why, len, "BF16_PARTS=1 with BLOCK_M=%d BLOCK_N=%d HEAD_DIM_V=%d NUM_STAGES=%d OVERLAP=%d "
                     "PINGPONG=%d: ~%d registers per thread (four score accumulators' worth, O and a tile's P V apart), "
                     "%d available; and one consumer, or 64-key tiles in one stage taking turns, spill",
                     bm, bn, dv, p[GEN_NUM_STAGES], p[GEN_OVERLAP], p[GEN_PINGPONG],
                     fwd_wgmma_parts_regs(bn, dv, p[GEN_OVERLAP]), fwd_wgmma_consumer_regs(bm, nw, dtype));
            break;
        }
        if (fwd_wgmma_regs(bn, dv, fwd_wgmma_has_producer(bm, nw), dtype, form, p[GEN_P_SMEM]) <=
            fwd_wgmma_consumer_regs(bm, nw, dtype)) {
            snprintf(why, len, "NUM_STAGES=1 in f32 (three products) with BLOCK_M=%d BLOCK_N=%d HEAD_DIM_V=%d "
                     "OVERLAP=%d PINGPONG=%d: registers spill (one stage keeps the tile's descriptors live: use two "
                     "stages; one stage takes two consumers, OVERLAP only to head dim 64, 64-key tiles without "
                     "OVERLAP only to head dim 64 and without PINGPONG)", bm, bn, dv, p[GEN_OVERLAP], p[GEN_PINGPONG]);
            break;
        }
        snprintf(why, len, "BLOCK_N=%d HEAD_DIM_V=%d NUM_WARPS=%d: ~%d registers per thread, %d available", bn, dv, nw,
                 fwd_wgmma_regs(bn, dv, fwd_wgmma_has_producer(bm, nw), dtype, form, p[GEN_P_SMEM]),
                 fwd_wgmma_consumer_regs(bm, nw, dtype));
        break;
    }
    return -1;
}

/* With a producer, K and V come by the copy engine, a key tile a box (MULTICAST: half of one),
 * and Q a query tile a box. */
static int map_rows_fwd(const int *p)
{
    return fwd_wgmma_map_rows(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_MULTICAST]);
}

static int q_map_rows_fwd(const int *p)
{
    return fwd_wgmma_q_map_rows(p[GEN_BLOCK_M], p[GEN_NUM_WARPS]);
}

/* A persistent block with two Q tiles writes O by the copy engine, a consumer's 64 rows a box. */
static int o_map_rows_fwd(const int *p)
{
    return fwd_wgmma_async_o(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V],
                             p[GEN_NUM_STAGES], p[GEN_PERSISTENT], p[GEN_DTYPE],
                             fwd_wgmma_form(p[GEN_ALLOW_TF32], p[GEN_BF16_PARTS]), p[GEN_P_SMEM]) ? 64 : 0;
}

/* Narrow panels (head dim 96 beside a producer): boxes of 64-byte rows. */
static int map_row_bytes_fwd(const int *p)
{
    return fwd_wgmma_row_bytes(p[GEN_BLOCK_M], p[GEN_NUM_WARPS], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], p[GEN_DTYPE]);
}

static int persistent_fwd(const int *p)
{
    return p[GEN_PERSISTENT];
}

static int cluster_fwd(const int *p)
{
    return fwd_wgmma_cluster(p[GEN_MULTICAST]);
}

/* Every persistent configuration walks a packed batch's own query tiles (tile_schedule). */
static int packed_walk_fwd(const int *p)
{
    (void)p;
    return 1;
}

/* The default configuration keeps the table's tiles (128 x 128, a producer and two consumers;
 * 64 keys for the large head dims, traits/fwd_wgmma.h) and turns OVERLAP on (faster at head dim
 * 128 on the H100; PINGPONG beside it better only when causal: notes/kernels.md); f32 takes the
 * traits' tiles and schedule of its own (fwd_wgmma_head_dim_tiles).
 * OVERLAP is not among the family's defaults: without a producer it is refused, and a
 * configuration that names its tiles should not have to turn it off. */
static void head_dim_tiles_fwd(int *p)
{
    fwd_wgmma_head_dim_tiles(p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], p[GEN_DTYPE], &p[GEN_BLOCK_M], &p[GEN_BLOCK_N],
                             &p[GEN_NUM_WARPS], &p[GEN_NUM_STAGES], &p[GEN_OVERLAP], &p[GEN_PINGPONG]);
}

static const gen_entry fwd_entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL, GEN_OP_FAMILY, 0, 1 },
};

const gen_family gen_family_fwd_wgmma = {
    .name = "fwd_wgmma",
    .file = "families/fwd_wgmma.cu",
    .parts = FT_PARTS("traits/fwd_wgmma.h", "traits/ft_packed.h", "arch/sm80.cuh", "arch/sm90.cuh", "common/ft_block.cuh",
                      "common/ft_softcap.cuh", "common/ft_softmax.cuh"),
    .backward = 0,
    .dtypes = (1u << 0) | (1u << 1) | (1u << 2),   /* f32 as TF32 (ALLOW_TF32: three products or one) or
                                                     * bfloat16 parts (BF16_PARTS: six products) */
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_ALLOW_TF32) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_OVERLAP) |
              GEN_BIT(GEN_PINGPONG) | GEN_BIT(GEN_PERSISTENT) | GEN_BIT(GEN_MULTICAST) | GEN_BIT(GEN_P_SMEM) |
              GEN_BIT(GEN_BF16_PARTS) |
              GEN_FUSED_PROBLEM_PARAMS,
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 128, [GEN_BLOCK_N] = 128, [GEN_NUM_WARPS] = 12, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_OVERLAP] = 0, [GEN_PINGPONG] = 0, [GEN_PERSISTENT] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = fwd_entries,
    .entry_count = 1,
    .check = check_fwd,
    .target_arch = "sm_90a",
    .map_rows = map_rows_fwd,
    .q_map_rows = q_map_rows_fwd,
    .o_map_rows = o_map_rows_fwd,
    .map_row_bytes = map_row_bytes_fwd,
    .persistent = persistent_fwd,
    .cluster = cluster_fwd,
    .packed_walk = packed_walk_fwd,
    .head_dim_tiles = head_dim_tiles_fwd,
    .min_head_dim = 64,
    .pad_from = 24,   /* at head dim 16 mma.sync at 32 was faster (notes/kernels.md) */
    .features = GEN_FEATURES_ALL,
    .default_rank = 1,   /* before mma.sync where it runs (Hopper) and its tiles fit */
};
