/* The ref family: the GPU reference kernels the tuner validates against (templates/families/ref.cu).
 *
 * One descriptor for forward and backward: `backward` is 0 because gen_family has one argument
 * block per family, but only ft_ref_fwd takes ft_fwd_args; ft_ref_bwd_preprocess, ft_ref_bwd_dq
 * and ft_ref_bwd_dkdv take ft_bwd_args. Callers launch them by name. */
#include <stdio.h>

#include "gen_family_internal.h"
#include "traits/ft_traits.h"
#include "traits/ref.h"

/* One warp per row and NUM_WARPS rows per block: the tiles are the block's rows (traits/ref.h). */
static int check_ref(const int *p, char *why, size_t len)
{
    if (ref_rule(p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS]) == REF_OK)
        return 0;
    snprintf(why, len, "BLOCK_M=%d, BLOCK_N=%d: ref runs one warp per row, so both must equal NUM_WARPS=%d",
             p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS]);
    return -1;
}

static const gen_entry entries[] = {
    { "ft_ref_fwd", 0, NULL, NULL, GEN_OP_FORWARD, 0, 0 },
    { "ft_ref_bwd_preprocess", 0, NULL, NULL, GEN_OP_BACKWARD, 0, 0 },
    { "ft_ref_bwd_dq", 0, NULL, NULL, GEN_OP_BACKWARD, 0, 0 },
    { "ft_ref_bwd_dkdv", 1, NULL, NULL, GEN_OP_BACKWARD, 0, 0 },
    /* The tuner's utilities: any grid (grid-stride loops), launched by name with their own
     * parameters (templates/families/ref.cu). */
    { "ft_ref_fill_normal", 0, NULL, NULL, GEN_OP_UTILITY, 0, 0 },
    { "ft_ref_compare", 0, NULL, NULL, GEN_OP_UTILITY, 0, 0 },
};

const gen_family gen_family_ref = {
    .name = "ref",
    .file = "families/ref.cu",
    .parts = FT_PARTS("traits/ref.h", "common/ft_block.cuh"),
    .backward = 0,   /* see the note above: the ft_ref_bwd_* entries take ft_bwd_args */
    .dtypes = 0xfu,
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_CAUSAL) | GEN_BIT(GEN_VARLEN),
    .defaults = {
        [GEN_DTYPE] = 0, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 4, [GEN_BLOCK_N] = 4, [GEN_NUM_WARPS] = 4, [GEN_NUM_STAGES] = 1,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 0, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
        [GEN_SPLITS] = 1,
    },
    .entries = entries,
    .entry_count = 6,
    .check = check_ref,
    .features = GEN_FEATURES_ALL,
};
