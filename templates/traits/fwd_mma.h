/* fwd_mma traits (templates/families/fwd_mma.cu, generator/family_fwd_mma.c): warps own whole
 * 16-row mma tiles of the query block; Q in registers up to 256 bytes a row (head dim 128 in the
 * 16-bit types, 64 in f32); K/V in a NUM_STAGES ring of swizzled tiles. f32 runs as TF32
 * (DTYPE 0): its tiles take twice the bytes, and each operand is split in registers. */
#ifndef FT_TRAITS_FWD_MMA_H
#define FT_TRAITS_FWD_MMA_H

enum fwd_mma_rule {
    FWD_MMA_OK,
    FWD_MMA_BAD_BLOCK_M,     /* BLOCK_M % (16 * NUM_WARPS) != 0 */
    FWD_MMA_BAD_BLOCK_N,     /* BLOCK_N % 16 != 0 */
    FWD_MMA_BAD_HEAD_DIM,    /* HEAD_DIM or HEAD_DIM_V not a multiple of 32 */
    FWD_MMA_BAD_REGISTERS,   /* fragments would spill */
    FWD_MMA_BAD_TF32,        /* ALLOW_TF32 = 1 or SPLIT_SMEM = 1 with a 16-bit DTYPE */
};

/* 16-row mma tiles each warp owns. */
FT_TRAIT int fwd_mma_row_tiles(int block_m, int num_warps)
{
    return block_m / (16 * num_warps);
}

/* Q stays in registers for the whole sweep up to 256 bytes a row; past that its fragments would
 * crowd out the accumulators, so they are re-read from shared memory at each k-step. */
FT_TRAIT int fwd_mma_q_in_regs(int head_dim, int dtype)
{
    return head_dim * ft_tile_units(dtype) <= 128;
}

/* TF32 planes of a K/V tile that SPLIT_SMEM keeps in shared memory: high parts, and low parts
 * where three products are made (ALLOW_TF32 0). */
FT_TRAIT int fwd_mma_split_planes(int split_smem, int allow_tf32)
{
    return split_smem ? (allow_tf32 ? 1 : 2) : 0;
}

/* Q tile plus NUM_STAGES K/V tiles, 2 bytes an element (4 in f32), plus SPLIT_SMEM's planes of
 * one K/V tile. */
FT_TRAIT long long fwd_mma_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages,
                                      int dtype, int split_smem, int allow_tf32)
{
    return ((long long)block_m * head_dim +
            (long long)(num_stages + fwd_mma_split_planes(split_smem, allow_tf32)) * block_n * (head_dim + head_dim_v)) *
           2 * ft_tile_units(dtype);
}

/* Per-thread fp32 accumulators and fragments: O, S and (up to 256 bytes a row) Q, plus 2 for
 * the masked variant (its key-tile range and band stay live). Past about 150 of the 255 registers
 * the compiler spills (ptxas for sm_80 and sm_90: head dim 256 with BLOCK_N=64 is 164 and
 * spills; BLOCK_N=32 is 148 and does not, and 150 with the mask spills 8 bytes on sm_80).
 * In f32 also a key tile's own P V accumulators (as many as O's), the split halves of a k-step's
 * Q and P fragments (8 a row tile) and of K's (8), and a share of S's splits (BLOCK_N/4 a row
 * tile), against a limit of its own (ptxas, sm_80 and sm_90: head dim 128 with BLOCK_N=32 is 174
 * and does not spill; with BLOCK_N=64 196-198, 253-255 registers, and spilled 4-8 bytes under the
 * causal mask with even lengths (test_gen_full); head dim 64 with BLOCK_N=128 is 210 and spills
 * 16 bytes on sm_90, head dim 192 with BLOCK_N=32 236 and 24 bytes on sm_80). */
#define FWD_MMA_REGISTER_LIMIT 149
#define FWD_MMA_TF32_REGISTER_LIMIT 190
FT_TRAIT int fwd_mma_fragment_regs(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                   int causal, int dtype)
{
    const int rows = fwd_mma_row_tiles(block_m, num_warps), units = ft_tile_units(dtype);
    const int tf32 = dtype == 0;
    return rows * ((fwd_mma_q_in_regs(head_dim, dtype) ? head_dim * units / 4 : 4) + block_n / 2 +
                   (tf32 ? 2 : 1) * head_dim_v / 2) +
           (causal ? 2 : 0) + (tf32 ? rows * (8 + block_n / 4) + 8 : 0);
}

/* The limit fwd_mma_fragment_regs is held to. */
FT_TRAIT int fwd_mma_register_limit(int dtype)
{
    return dtype == 0 ? FWD_MMA_TF32_REGISTER_LIMIT : FWD_MMA_REGISTER_LIMIT;
}

FT_TRAIT int fwd_mma_rule(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v, int causal,
                          int dtype, int allow_tf32, int split_smem)
{
    if (block_m % (16 * num_warps) != 0)
        return FWD_MMA_BAD_BLOCK_M;
    if (block_n % 16 != 0)
        return FWD_MMA_BAD_BLOCK_N;
    if (head_dim % 32 != 0 || head_dim_v % 32 != 0)
        return FWD_MMA_BAD_HEAD_DIM;
    if (fwd_mma_fragment_regs(block_m, block_n, num_warps, head_dim, head_dim_v, causal, dtype) >
        fwd_mma_register_limit(dtype))
        return FWD_MMA_BAD_REGISTERS;
    if ((allow_tf32 || split_smem) && dtype != 0)
        return FWD_MMA_BAD_TF32;
    return FWD_MMA_OK;
}

#endif
