/* ref traits (templates/families/ref.cu, generator/family_ref.c): one warp per row, NUM_WARPS
 * rows per block, no shared memory. */
#ifndef FT_TRAITS_REF_H
#define FT_TRAITS_REF_H

enum ref_rule {
    REF_OK,
    REF_BAD_TILES,   /* BLOCK_M or BLOCK_N != NUM_WARPS */
};

FT_TRAIT int ref_rule(int block_m, int block_n, int num_warps)
{
    return block_m != num_warps || block_n != num_warps ? REF_BAD_TILES : REF_OK;
}

#endif
