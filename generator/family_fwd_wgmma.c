/* The fwd_wgmma family: Hopper warpgroup forward for f16/bf16 (templates/fwd_wgmma.cu). */
#include <stdio.h>

#include "gen_family_internal.h"

/* Alignment slack, Q tile and NUM_STAGES K/V tiles, 2 bytes an element; must match SMEM_BYTES
 * in the template. */
static size_t smem_fwd(const int *p)
{
    size_t q_tile = (size_t)p[GEN_BLOCK_M] * p[GEN_HEAD_DIM];
    size_t kv_stage = (size_t)p[GEN_BLOCK_N] * (p[GEN_HEAD_DIM] + p[GEN_HEAD_DIM_V]);
    return 1024 + (q_tile + (size_t)p[GEN_NUM_STAGES] * kv_stage) * 2;
}

static int check_fwd(const int *p, char *why, size_t len)
{
    if (p[GEN_NUM_WARPS] % 4 != 0 || p[GEN_NUM_WARPS] > 12) {
        snprintf(why, len, "NUM_WARPS=%d: fwd_wgmma runs whole warpgroups of 4 warps (4, 8 or 12)", p[GEN_NUM_WARPS]);
        return -1;
    }
    if (p[GEN_BLOCK_M] != 16 * p[GEN_NUM_WARPS]) {
        snprintf(why, len, "BLOCK_M=%d must be 64 rows per warpgroup, 16*NUM_WARPS=%d", p[GEN_BLOCK_M],
                 16 * p[GEN_NUM_WARPS]);
        return -1;
    }
    if (p[GEN_BLOCK_N] != 64 && p[GEN_BLOCK_N] != 128) {
        snprintf(why, len, "BLOCK_N=%d: fwd_wgmma takes 64 or 128", p[GEN_BLOCK_N]);
        return -1;
    }
    /* The template takes any multiple of 64 for HEAD_DIM; only 64 and 128 have run on a GPU. */
    if ((p[GEN_HEAD_DIM] != 64 && p[GEN_HEAD_DIM] != 128) || (p[GEN_HEAD_DIM_V] != 64 && p[GEN_HEAD_DIM_V] != 128)) {
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: fwd_wgmma takes head dims 64 and 128",
                 p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V]);
        return -1;
    }
    /* fp32 S and O accumulators, P as packed pairs, and ~40 registers of addresses and softmax
     * state, against what the register file gives each of NUM_WARPS*32 threads (at most 255). */
    int need = p[GEN_BLOCK_N] / 2 + p[GEN_HEAD_DIM_V] / 2 + p[GEN_BLOCK_N] / 4 + 40;
    int have = 65536 / (p[GEN_NUM_WARPS] * 32);
    have = have > 255 ? 255 : have;
    if (need > have) {
        snprintf(why, len, "BLOCK_N=%d HEAD_DIM_V=%d NUM_WARPS=%d: ~%d registers per thread, %d available",
                 p[GEN_BLOCK_N], p[GEN_HEAD_DIM_V], p[GEN_NUM_WARPS], need, have);
        return -1;
    }
    return 0;
}

static const gen_entry fwd_entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL },
};

const gen_family gen_family_fwd_wgmma = {
    .name = "fwd_wgmma",
    .file = "fwd_wgmma.cu",
    .backward = 0,
    .dtypes = (1u << 1) | (1u << 2),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N),
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 128, [GEN_BLOCK_N] = 128, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
    },
    .entries = fwd_entries,
    .entry_count = 1,
    .check = check_fwd,
    .target_arch = "sm_90a",
};
