/* bwd_wgmma traits (templates/families/bwd_wgmma.cu, generator/family_bwd_wgmma.c): the Hopper
 * backward. One block per key tile of BLOCK_N keys; each consumer warpgroup (4 warps) owns 64 of
 * them and keeps their dK, dV in registers; query tiles of BLOCK_M = 64 rows stream through a
 * TMA ring; dQ goes through shared memory into fp32 dq_accum by the copy engine's bulk
 * reduce-add, each warpgroup owning the columns bwd_wgmma_dq_cols gives it. NUM_WARPS says
 * whether a producer warpgroup loads and adds dQ for the consumers (BLOCK_N / 16 + 4) or they
 * do it themselves (BLOCK_N / 16). DQ_MODE ordered adds each query tile's dQ in descending
 * order of key tiles (bitwise repeatable). */
#ifndef FT_TRAITS_BWD_WGMMA_H
#define FT_TRAITS_BWD_WGMMA_H

enum bwd_wgmma_rule {
    BWD_WGMMA_OK,
    BWD_WGMMA_BAD_WARPS,       /* NUM_WARPS neither BLOCK_N / 16 nor that + 4 (a producer) */
    BWD_WGMMA_BAD_BLOCK_M,     /* BLOCK_M != 64 (one wgmma M per query tile) */
    BWD_WGMMA_BAD_BLOCK_N,     /* BLOCK_N not 64 or 128 (64 keys a consumer warpgroup) */
    BWD_WGMMA_BAD_HEAD_DIM,    /* a head dim not 64, 96 or 128 */
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

/* Consumer warpgroups (4 warps each, 64 keys of the tile). */
FT_TRAIT int bwd_wgmma_consumers(int block_n)
{
    return block_n / 64;
}

/* 1 when the block has a producer warpgroup besides its consumers (NUM_WARPS = BLOCK_N/16 + 4). */
FT_TRAIT int bwd_wgmma_has_producer(int block_n, int num_warps)
{
    return num_warps == 4 * bwd_wgmma_consumers(block_n) + 4;
}

/* dS^T and dQ tiles in shared memory: two with a producer (the consumers write one while the
 * other is still read), else one. */
FT_TRAIT int bwd_wgmma_buffers(int block_n, int num_warps)
{
    return bwd_wgmma_has_producer(block_n, num_warps) ? 2 : 1;
}

/* 1 when two consumer warpgroups each make dQ over their own 64 keys, all its columns, and the
 * two halves are summed before the add (head dim 64: a product's N must start on a 64-column
 * panel of K, so the columns do not split); else each owns columns of dQ over all the keys. */
FT_TRAIT int bwd_wgmma_dq_split_keys(int head_dim, int num_wg)
{
    return num_wg == 2 && head_dim == 64;
}

/* The dQ columns of warpgroup w of num_wg: one warpgroup takes them all, and so does each of two
 * that split the keys; else of two, the first takes 64 and the second the rest (64 at head dim
 * 128, 32 at 96). */
FT_TRAIT int bwd_wgmma_dq_cols(int head_dim, int num_wg, int w)
{
    return num_wg == 1 || bwd_wgmma_dq_split_keys(head_dim, num_wg) ? head_dim : w == 0 ? 64 : head_dim - 64;
}

/* 1024 bytes of alignment slack, K and V of the key tile, the ring, bwd_wgmma_buffers x (dS^T
 * (BLOCK_N x BLOCK_M, 2 bytes an element) for dQ = dS K, and the fp32 dQ tile (BLOCK_M x
 * HEAD_DIM) that the copy engine adds into dq_accum), and with the keys split one more fp32 dQ
 * tile, the second warpgroup's half on its way to the first. */
FT_TRAIT long long bwd_wgmma_smem_bytes(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                        int num_stages)
{
    const long long dq_tile = (long long)block_m * head_dim * 4;
    return 1024 + (long long)block_n * (bwd_wgmma_panel_cols(head_dim) + bwd_wgmma_panel_cols(head_dim_v)) * 2 +
           num_stages * bwd_wgmma_stage_bytes(block_m, head_dim, head_dim_v) +
           bwd_wgmma_buffers(block_n, num_warps) * ((long long)block_n * block_m * 2 + dq_tile) +
           (bwd_wgmma_dq_split_keys(head_dim, bwd_wgmma_consumers(block_n)) ? dq_tile : 0);
}

/* Per consumer thread: dK and dV of 64 keys (head_dim/2 + head_dim_v/2 fp32), S^T and dP^T
 * (block_m/2 each), P^T packed (block_m/4; dS^T packed takes dP^T's place), and ~32 of
 * addresses and indices (40 when the consumers also load). dQ's accumulators
 * (bwd_wgmma_dq_cols / 2) live only once S^T and dP^T are dead. */
FT_TRAIT int bwd_wgmma_regs(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    return head_dim / 2 + head_dim_v / 2 + block_m + block_m / 4 + (bwd_wgmma_has_producer(block_n, num_warps) ? 32 : 40);
}

/* Blocks a producer-pipeline kernel asks to fit on an SM (__launch_bounds__): one with two
 * consumers; two with one, so an SM still runs two consumer warpgroups (as the inline pipeline
 * does with two blocks of one). */
FT_TRAIT int bwd_wgmma_min_blocks(int block_n, int num_warps)
{
    return bwd_wgmma_has_producer(block_n, num_warps) && bwd_wgmma_consumers(block_n) == 1 ? 2 : 1;
}

/* The registers a consumer thread may hold: with a producer, what setmaxnreg moves to the
 * consumers when the producer keeps 24 (two consumers: 384 x 168 at entry = 128 x 24 + 256 x 240;
 * one, two blocks an SM: 256 x 128 = 128 x 24 + 128 x 232); else the cap of one block per SM. */
FT_TRAIT int bwd_wgmma_consumer_regs(int block_n, int num_warps)
{
    if (!bwd_wgmma_has_producer(block_n, num_warps))
        return ft_register_cap(num_warps * 32);
    return bwd_wgmma_consumers(block_n) == 2 ? 240 : 232;
}

/* The tiles DQ_MODE ordered runs fastest with: two consumers beside a producer warpgroup,
 * whose dQ warp waits for the turns off the consumers' path, at most two stages (shared
 * memory). H100, 2026-11-25, N 4096 (notes/kernels.md): ordered reaches 0.93x the fastest
 * atomic kernel at head dim 128, 0.91x at 96 and 0.82x at 64 (the keys split), against 0.72,
 * 0.70 and 0.53 with the consumers alone. */
FT_TRAIT void bwd_wgmma_repeatable_tiles(int *block_n, int *num_warps, int *num_stages)
{
    *block_n = 128;
    *num_warps = 12;
    if (*num_stages > 2)
        *num_stages = 2;
}

FT_TRAIT int bwd_wgmma_rule(int block_m, int block_n, int num_warps, int num_stages, int head_dim,
                            int head_dim_v, int dq_mode)
{
    if (block_m != 64)
        return BWD_WGMMA_BAD_BLOCK_M;
    if (block_n != 64 && block_n != 128)
        return BWD_WGMMA_BAD_BLOCK_N;
    if (num_warps != block_n / 16 && !bwd_wgmma_has_producer(block_n, num_warps))
        return BWD_WGMMA_BAD_WARPS;
    if ((head_dim != 64 && head_dim != 96 && head_dim != 128) || (head_dim_v != 64 && head_dim_v != 96 && head_dim_v != 128))
        return BWD_WGMMA_BAD_HEAD_DIM;
    if (num_stages < 1 || num_stages > 3)
        return BWD_WGMMA_BAD_STAGES;
    if (dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_ORDERED)
        return BWD_WGMMA_BAD_DQ_MODE;
    if (bwd_wgmma_smem_bytes(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES)
        return BWD_WGMMA_BAD_SMEM;
    if (bwd_wgmma_regs(block_m, block_n, num_warps, head_dim, head_dim_v) > bwd_wgmma_consumer_regs(block_n, num_warps))
        return BWD_WGMMA_BAD_REGISTERS;
    return BWD_WGMMA_OK;
}

#endif
