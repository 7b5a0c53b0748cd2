/* The fwd_mma family: tensor-core forward for f16/bf16 (templates/fwd_mma.cu). */
#include <stdio.h>

#include "gen_family_internal.h"

/* Q tile plus NUM_STAGES K/V tiles, 2 bytes an element; must match SMEM_BYTES in the template. */
static size_t smem_fwd(const int *p)
{
    size_t q_tile = (size_t)p[GEN_BLOCK_M] * p[GEN_HEAD_DIM];
    size_t kv_stage = (size_t)p[GEN_BLOCK_N] * (p[GEN_HEAD_DIM] + p[GEN_HEAD_DIM_V]);
    return (q_tile + (size_t)p[GEN_NUM_STAGES] * kv_stage) * 2;
}

static int check_fwd(const int *p, char *why, size_t len)
{
    if (p[GEN_BLOCK_M] % (16 * p[GEN_NUM_WARPS]) != 0) {
        snprintf(why, len, "BLOCK_M=%d is not a multiple of 16*NUM_WARPS=%d (each warp owns whole 16-row mma tiles)",
                 p[GEN_BLOCK_M], 16 * p[GEN_NUM_WARPS]);
        return -1;
    }
    if (p[GEN_BLOCK_N] % 16 != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of 16", p[GEN_BLOCK_N]);
        return -1;
    }
    if (p[GEN_HEAD_DIM] % 32 != 0 || p[GEN_HEAD_DIM_V] % 32 != 0) {
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: fwd_mma needs multiples of 32",
                 p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V]);
        return -1;
    }
    /* Per-thread fp32 accumulators and fragments: O, S and (up to head dim 128) Q. Past about
     * 150 of the 255 registers the compiler spills (ptxas for sm_80 and sm_90: head dim 256
     * with BLOCK_N=64 is 164 and spills; BLOCK_N=32 is 148 and does not). */
    int row_tiles = p[GEN_BLOCK_M] / (16 * p[GEN_NUM_WARPS]);
    int q_regs = p[GEN_HEAD_DIM] <= 128 ? p[GEN_HEAD_DIM] / 4 : 4;
    int frag_regs = row_tiles * (q_regs + p[GEN_BLOCK_N] / 2 + p[GEN_HEAD_DIM_V] / 2);
    if (frag_regs > 150) {
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d: %d fragment registers per thread would spill (limit 150)",
                 p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], frag_regs);
        return -1;
    }
    return 0;
}

static const gen_entry fwd_entries[] = {
    { "ft_fwd", 0, smem_fwd, NULL },
};

const gen_family gen_family_fwd_mma = {
    .name = "fwd_mma",
    .file = "fwd_mma.cu",
    .backward = 0,
    .dtypes = (1u << 1) | (1u << 2),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N),
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 128, [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
    },
    .entries = fwd_entries,
    .entry_count = 1,
    .check = check_fwd,
};
