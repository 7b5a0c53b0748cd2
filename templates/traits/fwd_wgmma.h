/* fwd_wgmma traits (templates/families/fwd_wgmma.cu, generator/family_fwd_wgmma.c): one
 * warpgroup (4 warps) per 64 query rows; Q and K/V tiles as 128-byte-swizzled panels. */
#ifndef FT_TRAITS_FWD_WGMMA_H
#define FT_TRAITS_FWD_WGMMA_H

enum fwd_wgmma_rule {
    FWD_WGMMA_OK,
    FWD_WGMMA_BAD_WARPS,       /* NUM_WARPS not 4, 8 or 12 */
    FWD_WGMMA_BAD_BLOCK_M,     /* BLOCK_M != 16 * NUM_WARPS */
    FWD_WGMMA_BAD_BLOCK_N,     /* BLOCK_N not 64 or 128 */
    FWD_WGMMA_BAD_HEAD_DIM,    /* head dims other than 64 and 128 */
    FWD_WGMMA_BAD_REGISTERS,   /* accumulators would spill */
};

/* 1024 bytes of slack to align the tiles to 1024 (the swizzle is a function of address bits
 * 4-9), the Q tile and NUM_STAGES K/V tiles, 2 bytes an element. */
FT_TRAIT long long fwd_wgmma_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages)
{
    return 1024 + ((long long)block_m * head_dim + (long long)num_stages * block_n * (head_dim + head_dim_v)) * 2;
}

/* fp32 S and O accumulators, P as packed pairs, and ~40 registers of addresses and softmax
 * state per thread. */
FT_TRAIT int fwd_wgmma_regs(int block_n, int head_dim_v)
{
    return block_n / 2 + head_dim_v / 2 + block_n / 4 + 40;
}

/* Blocks per SM the kernel is compiled for (__launch_bounds__'s second argument): as many as the
 * register estimate and shared memory allow, so that ptxas keeps within that occupancy. Left at
 * 1, ptxas took 167 registers for 64x64 tiles of head dim 64 once the band mask came in (3
 * blocks an SM) where 126 suffice (4): the causal forward lost ~15% at head dim 64 on the H100
 * (compare.py, 2026-11-24). */
FT_TRAIT int fwd_wgmma_min_blocks(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                  int num_stages)
{
    const int by_regs = 65536 / (num_warps * 32 * fwd_wgmma_regs(block_n, head_dim_v));
    const long long by_smem =
        FT_SMEM_MAX_BYTES / fwd_wgmma_smem_bytes(block_m, block_n, head_dim, head_dim_v, num_stages);
    const int blocks = by_regs < by_smem ? by_regs : (int)by_smem;
    return blocks < 1 ? 1 : blocks;
}

FT_TRAIT int fwd_wgmma_rule(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    if (num_warps % 4 != 0 || num_warps > 12)
        return FWD_WGMMA_BAD_WARPS;
    if (block_m != 16 * num_warps)
        return FWD_WGMMA_BAD_BLOCK_M;
    if (block_n != 64 && block_n != 128)
        return FWD_WGMMA_BAD_BLOCK_N;
    /* The template takes any multiple of 64 for HEAD_DIM; only 64 and 128 have run on a GPU. */
    if ((head_dim != 64 && head_dim != 128) || (head_dim_v != 64 && head_dim_v != 128))
        return FWD_WGMMA_BAD_HEAD_DIM;
    if (fwd_wgmma_regs(block_n, head_dim_v) > ft_register_cap(num_warps * 32))
        return FWD_WGMMA_BAD_REGISTERS;
    return FWD_WGMMA_OK;
}

#endif
