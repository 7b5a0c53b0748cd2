/* bwd_wgmma_f32 traits (templates/families/bwd_wgmma_f32.cu, generator/family_bwd_wgmma_f32.c):
 * the float32 backward on Hopper's TF32 warpgroup tensor cores. A key tile of 64 keys; each
 * consumer warpgroup owns 64 rows of the head dim (the M of the products it issues): one at head
 * dim 64, two at 128 (one TF32 product only: three do not fit shared memory); a producer
 * warpgroup fills a ring of query tiles. The TF32 forms of wgmma read shared memory K-major only:
 * Q^T and dO^T are gathered into registers, but K^T (once a block) and P^T, dS^T and dS (each
 * query tile, dS in both orientations) lie in shared memory, every one as TF32 high parts and,
 * unless ALLOW_TF32, remainders (in planes of their own, or for Q, dO and dS after the high rows
 * of each panel), so shared memory bounds the query tile: 32 rows with
 * three products, 64 with one (notes/fp32.md, "Built: the Hopper float32 backward").
 * BF16_PARTS (head dim 128): each float in three bfloat16 parts (exact), each product the six
 * largest part products on the 16-bit wgmma, which reads an operand in either order: no K^T, no
 * dS tile, no gathers; 6 bytes an element, so 32-query tiles fit two slots. With ALLOW_TF32 two
 * parts and three products (hi hi, hi mid, mid hi: about 2^-16 relative, more accurate than
 * TF32's one product), 4 bytes an element. */
#ifndef FT_TRAITS_BWD_WGMMA_F32_H
#define FT_TRAITS_BWD_WGMMA_F32_H

enum bwd_wgmma_f32_rule {
    BWD_WGMMA_F32_OK,
    BWD_WGMMA_F32_BAD_HEAD_DIM, /* HEAD_DIM and HEAD_DIM_V not both 64, or both 128 with ALLOW_TF32 or BF16_PARTS */
    BWD_WGMMA_F32_BAD_BLOCK_M,  /* BLOCK_M not 32 or 64 (32 at head dim 128) */
    BWD_WGMMA_F32_BAD_BLOCK_N,  /* BLOCK_N not 64 */
    BWD_WGMMA_F32_BAD_WARPS,    /* NUM_WARPS not 4 a consumer warpgroup and the producer's 4 */
    BWD_WGMMA_F32_BAD_STAGES,   /* NUM_STAGES outside 1..3 */
    BWD_WGMMA_F32_BAD_DQ_MODE,  /* DQ_MODE not atomic or direct, or direct with DQ_BULK */
    BWD_WGMMA_F32_BAD_SMEM,     /* over FT_SMEM_MAX_BYTES */
    BWD_WGMMA_F32_BAD_PARTS,    /* BF16_PARTS at head dims other than 128 */
};

/* Consumer warpgroups: one for each 64 rows of the head dim. */
FT_TRAIT int bwd_wgmma_f32_consumers(int head_dim)
{
    return head_dim / 64;
}

/* Registers a thread with two consumers (384 threads, 168 each at launch: 64,512 in all): the
 * producer keeps 104 (a 32-query tile's Q and dO, 64, in flight while it waits for a slot), the
 * consumers take the rest in setmaxnreg's steps of 8: 200 (at 192 they spilled with a softcap).
 * (More than the pool holds would stall setmaxnreg.inc for good.) With one slot, the fastest, no
 * form spills; with two or three the producer spills 20-36 bytes with whole tiles (EVEN_M and
 * EVEN_N) or padded head dims (NVRTC 13.0). One consumer needs no move: 255 a thread at 256
 * threads. */
FT_TRAIT int bwd_wgmma_f32_producer_regs(void)
{
    return 104;
}
FT_TRAIT int bwd_wgmma_f32_consumer_regs(void)
{
    return (168 * 384 - 128 * bwd_wgmma_f32_producer_regs()) / 256 / 8 * 8;
}

/* Planes of each operand: high parts and remainders (three products), or high parts alone. */
FT_TRAIT int bwd_wgmma_f32_planes(int allow_tf32)
{
    return allow_tf32 ? 1 : 2;
}

/* BF16_PARTS: the bfloat16 parts of a float, three (float32's accuracy), or two with TF32 allowed. */
FT_TRAIT int bwd_wgmma_f32_part_count(int allow_tf32)
{
    return allow_tf32 ? 2 : 3;
}

/* Bytes an element of an operand in shared memory: two or one TF32 planes, or its bfloat16 parts. */
FT_TRAIT int bwd_wgmma_f32_elem_bytes(int allow_tf32, int parts)
{
    return parts ? 2 * bwd_wgmma_f32_part_count(allow_tf32) : 4 * bwd_wgmma_f32_planes(allow_tf32);
}

/* A ring slot: Q's and dO's planes (BLOCK_M rows), then L and delta in 1024 bytes of their own,
 * so that the next slot's planes start aligned for the 128-byte swizzle. */
FT_TRAIT long long bwd_wgmma_f32_stage_bytes(int block_m, int head_dim, int head_dim_v, int allow_tf32, int parts)
{
    return (long long)bwd_wgmma_f32_elem_bytes(allow_tf32, parts) * block_m * (head_dim + head_dim_v) + 1024;
}

/* ft_bwd_dkdv's dynamic shared memory: 1024 bytes of alignment slack; K, V and K^T in planes
 * (BF16_PARTS: K and V in parts, no K^T); NUM_STAGES ring slots; P^T, dS^T (keys by queries) and
 * dS (queries by keys; not with BF16_PARTS) in planes; with DQ_BULK two staging tiles of a query
 * tile's dQ, every consumer's columns in each (a step's, while the step before's is still read);
 * two mbarriers a slot. */
FT_TRAIT long long bwd_wgmma_f32_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages,
                                            int allow_tf32, int dq_bulk, int parts)
{
    const long long e = bwd_wgmma_f32_elem_bytes(allow_tf32, parts);
    const long long dq_staging = dq_bulk ? 2LL * block_m * head_dim * 4 : 0; /* two dQ tiles, dq_accum's rows */
    return 1024 + e * block_n * ((parts ? 1LL : 2LL) * head_dim + head_dim_v) +
           num_stages * bwd_wgmma_f32_stage_bytes(block_m, head_dim, head_dim_v, allow_tf32, parts) +
           (parts ? 2 : 3) * e * block_n * block_m + dq_staging + 16LL * num_stages;
}

/* The built-in default's query tile, warps, ring and form (the runtime's choice where no tuned
 * winner serves): with three products the family's defaults (32 rows, two slots: the most that
 * fit); with one (ALLOW_TF32) 64-row tiles in one slot at head dim 64, the H200 sweeps' choice
 * (64-row tiles in three slots ran 1.14-1.18x the 32-row ones in two: bench_kernels fhop;
 * notes/fp32.md), and at head dim 128 two consumers over 32-row tiles (the registers allow no
 * more rows) in one slot, the fastest there (two and three slots 1-7 % behind: bench_kernels
 * fhop128). Float32 at head dim 128 without TF32 takes the bfloat16 parts (three TF32 products do
 * not fit) in the family's two slots: 1.6-1.7x bwd_mma's tuned three products (bparts). */
FT_TRAIT void bwd_wgmma_f32_default_tiles(int head_dim, int allow_tf32, int *block_m, int *num_warps,
                                          int *num_stages, int *bf16_parts)
{
    *num_warps = 4 + 4 * bwd_wgmma_f32_consumers(head_dim);
    *bf16_parts = head_dim == 128 && !allow_tf32;
    if (allow_tf32) {
        *block_m = head_dim == 128 ? 32 : 64;
        *num_stages = 1;
    }
}

FT_TRAIT int bwd_wgmma_f32_rule(int block_m, int block_n, int num_warps, int num_stages, int head_dim, int head_dim_v,
                                int dq_mode, int allow_tf32, int dq_bulk, int parts)
{
    /* The parts' form is written for two consumers (S^T by one, dP^T by the other). */
    if (parts && (head_dim != 128 || head_dim_v != 128))
        return BWD_WGMMA_F32_BAD_PARTS;
    if (head_dim != head_dim_v || (head_dim != 64 && !(head_dim == 128 && (allow_tf32 || parts))))
        return BWD_WGMMA_F32_BAD_HEAD_DIM;
    /* At head dim 128 a consumer holds its 64 rows of dK^T and dV^T (64 registers) beside the
     * step's: 64-row query tiles would need more than the 200 it has. */
    if ((block_m != 32 && block_m != 64) || (head_dim == 128 && block_m != 32))
        return BWD_WGMMA_F32_BAD_BLOCK_M;
    if (block_n != 64)
        return BWD_WGMMA_F32_BAD_BLOCK_N;
    if (num_warps != 4 + 4 * bwd_wgmma_f32_consumers(head_dim))
        return BWD_WGMMA_F32_BAD_WARPS;
    if (num_stages < 1 || num_stages > 3)
        return BWD_WGMMA_F32_BAD_STAGES;
    /* Direct adds each thread's shares into dQ itself; DQ_BULK's one reduction a tile needs the
     * tile's rows contiguous, as dq_accum's are and a caller's dQ need not be. */
    if ((dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_DIRECT) || (dq_mode == FT_DQ_DIRECT && dq_bulk))
        return BWD_WGMMA_F32_BAD_DQ_MODE;
    if (bwd_wgmma_f32_smem_bytes(block_m, block_n, head_dim, head_dim_v, num_stages, allow_tf32, dq_bulk, parts) >
        FT_SMEM_MAX_BYTES)
        return BWD_WGMMA_F32_BAD_SMEM;
    return BWD_WGMMA_F32_OK;
}

#endif
