/* bwd_wgmma traits (templates/families/bwd_wgmma.cu, generator/family_bwd_wgmma.c): the Hopper
 * backward. One block per key tile of BLOCK_N keys; each warpgroup (4 warps) owns 64 of them and
 * keeps their dK, dV in registers; query tiles of BLOCK_M = 64 rows stream through a TMA
 * ring; dQ goes through shared memory into fp32 dq_accum by the copy engine's bulk reduce-add,
 * each warpgroup owning the columns bwd_wgmma_dq_cols gives it. DQ_MODE ordered adds each query
 * tile's dQ in descending order of key tiles (bitwise repeatable). */
#ifndef FT_TRAITS_BWD_WGMMA_H
#define FT_TRAITS_BWD_WGMMA_H

enum bwd_wgmma_rule {
    BWD_WGMMA_OK,
    BWD_WGMMA_BAD_WARPS,       /* NUM_WARPS not 4 or 8 (one or two warpgroups) */
    BWD_WGMMA_BAD_BLOCK_M,     /* BLOCK_M != 64 (one wgmma M per query tile) */
    BWD_WGMMA_BAD_BLOCK_N,     /* BLOCK_N != 16 * NUM_WARPS (64 keys a warpgroup) */
    BWD_WGMMA_BAD_HEAD_DIM,    /* a head dim not 64, 96 or 128, or two warpgroups at HEAD_DIM 64 */
    BWD_WGMMA_BAD_STAGES,      /* NUM_STAGES outside 1..3 */
    BWD_WGMMA_BAD_DQ_MODE,     /* DQ_MODE separate (bwd_wgmma is atomic or ordered) */
    BWD_WGMMA_BAD_SMEM,        /* over the shared-memory limit */
    BWD_WGMMA_BAD_REGISTERS,   /* accumulators would spill */
};

/* Columns a tile of `cols` takes in shared memory: whole 64-column panels of the 128-byte
 * swizzle (head dim 96: two panels, the second half used). */
FT_TRAIT int bwd_wgmma_panel_cols(int cols)
{
    return (cols + 63) / 64 * 64;
}

/* The bytes of one ring stage: the Q and dO tiles, then L and delta of its rows, padded so the
 * next stage's tiles start 1024-aligned (the swizzle is a function of address bits 4-9). */
FT_TRAIT long long bwd_wgmma_stage_bytes(int block_m, int head_dim, int head_dim_v)
{
    const long long tiles = (long long)block_m * (bwd_wgmma_panel_cols(head_dim) + bwd_wgmma_panel_cols(head_dim_v)) * 2;
    return tiles + (block_m * 8 + 1023) / 1024 * 1024;
}

/* 1024 bytes of alignment slack, K and V of the key tile, the ring, dS^T (BLOCK_N x BLOCK_M,
 * 2 bytes an element) for dQ = dS K, and the fp32 dQ tile (BLOCK_M x HEAD_DIM) that the copy
 * engine adds into dq_accum. */
FT_TRAIT long long bwd_wgmma_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages)
{
    return 1024 + (long long)block_n * (bwd_wgmma_panel_cols(head_dim) + bwd_wgmma_panel_cols(head_dim_v)) * 2 +
           num_stages * bwd_wgmma_stage_bytes(block_m, head_dim, head_dim_v) + (long long)block_n * block_m * 2 +
           (long long)block_m * head_dim * 4;
}

/* The dQ columns of warpgroup w of num_wg: one warpgroup takes them all; of two, the first
 * takes 64 and the second the rest (64 at head dim 128, 32 at 96), since a product's N must
 * start on a 64-column panel of K. */
FT_TRAIT int bwd_wgmma_dq_cols(int head_dim, int num_wg, int w)
{
    return num_wg == 1 ? head_dim : w == 0 ? 64 : head_dim - 64;
}

/* Per thread: dK and dV of 64 keys (head_dim/2 + head_dim_v/2 fp32), S^T and dP^T (block_m/2
 * each), P^T packed (block_m/4; dS^T packed takes dP^T's place), and ~40 of addresses and
 * indices. dQ's accumulators (bwd_wgmma_dq_cols / 2) live only once S^T and dP^T are dead. */
FT_TRAIT int bwd_wgmma_regs(int block_m, int head_dim, int head_dim_v)
{
    return head_dim / 2 + head_dim_v / 2 + block_m + block_m / 4 + 40;
}

FT_TRAIT int bwd_wgmma_rule(int block_m, int block_n, int num_warps, int num_stages, int head_dim,
                            int head_dim_v, int dq_mode)
{
    if (num_warps != 4 && num_warps != 8)
        return BWD_WGMMA_BAD_WARPS;
    if (block_m != 64)
        return BWD_WGMMA_BAD_BLOCK_M;
    if (block_n != 16 * num_warps)
        return BWD_WGMMA_BAD_BLOCK_N;
    if ((head_dim != 64 && head_dim != 96 && head_dim != 128) ||
        (head_dim_v != 64 && head_dim_v != 96 && head_dim_v != 128) || (num_warps == 8 && head_dim == 64))
        return BWD_WGMMA_BAD_HEAD_DIM;
    if (num_stages < 1 || num_stages > 3)
        return BWD_WGMMA_BAD_STAGES;
    if (dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_ORDERED)
        return BWD_WGMMA_BAD_DQ_MODE;
    if (bwd_wgmma_smem_bytes(block_m, block_n, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES)
        return BWD_WGMMA_BAD_SMEM;
    if (bwd_wgmma_regs(block_m, head_dim, head_dim_v) > ft_register_cap(num_warps * 32))
        return BWD_WGMMA_BAD_REGISTERS;
    return BWD_WGMMA_OK;
}

#endif
