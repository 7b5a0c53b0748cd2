/* bwd_mma traits (templates/families/bwd_mma.cu, generator/family_bwd_mma.c): the warp layouts
 * of ft_bwd_dkdv (warps along the keys, past BLOCK_N/16 warps a split of the dK/dV columns) and
 * of ft_bwd_dq and the dQ step (warps along the queries, then along the keys or head dim), the
 * query chunking that keeps dP^T beside the accumulators, and shared memory. In f32 (DTYPE 0, on
 * TF32 tensor cores) tiles take twice the 16-bit units (ft_tile_units), a warp's share of the
 * head dim is a multiple of 32 floats (one swizzle group, where its lanes' addresses fold), and
 * with three products each step's dK and dV products (ft_bwd_dq: each key tile's dQ) gather in
 * accumulators of their own before they are added with one rounded add (one product adds into the
 * sums directly). */
#ifndef FT_TRAITS_BWD_MMA_H
#define FT_TRAITS_BWD_MMA_H

enum bwd_mma_rule {
    BWD_MMA_OK,
    BWD_MMA_BAD_BLOCK_M,       /* BLOCK_M % 16 != 0 */
    BWD_MMA_BAD_BLOCK_N,       /* BLOCK_N % 16 != 0 */
    BWD_MMA_BAD_STAGES,        /* NUM_STAGES outside 1..3 */
    BWD_MMA_BAD_HEAD_DIM,      /* HEAD_DIM or HEAD_DIM_V not a multiple of 32 */
    BWD_MMA_BAD_KV_WARPS,      /* NUM_WARPS neither divides BLOCK_N/16 nor is a multiple of it */
    BWD_MMA_BAD_KV_SPLIT,      /* the dK/dV column split does not divide the head dims */
    BWD_MMA_BAD_Q_WARPS,       /* NUM_WARPS neither divides BLOCK_M/16 nor is a multiple of it */
    BWD_MMA_BAD_DQ_SPLIT,      /* DQ_MODE 1: the key split does not divide BLOCK_N */
    BWD_MMA_BAD_DQ_MODE,       /* DQ_MODE ordered (bwd_mma is atomic or separate) */
    BWD_MMA_BAD_SMEM,          /* over FT_SMEM_MAX_BYTES */
    BWD_MMA_BAD_REGISTERS,     /* would spill */
    BWD_MMA_BAD_TF32,          /* ALLOW_TF32 in f16 or bf16 */
    BWD_MMA_BAD_SPLIT_QUERIES, /* SPLIT_QUERIES outside f32, two warps a key slab, dQ by atomics */
    BWD_MMA_BAD_SPLIT_SMEM,    /* SPLIT_SMEM outside f32 */
};

/* Columns of the head dim a warp's share comes in: 16 (an mma column pair), 32 floats in f32. */
FT_TRAIT int bwd_mma_col_unit(int dtype)
{
    return dtype == 0 ? 32 : 16;
}

/* ft_bwd_dkdv: warps along the keys, warps sharing one 16-key slab (each keeps 1/KV_DSPLIT of
 * the dK/dV columns), keys per warp. */
FT_TRAIT int bwd_mma_kv_warps_n(int num_warps, int block_n)
{
    return ft_imin(num_warps, block_n / 16);
}
FT_TRAIT int bwd_mma_kv_dsplit(int num_warps, int block_n)
{
    return num_warps / bwd_mma_kv_warps_n(num_warps, block_n);
}
FT_TRAIT int bwd_mma_kv_rows(int num_warps, int block_n)
{
    return block_n / bwd_mma_kv_warps_n(num_warps, block_n);
}
/* fp32 dK + dV accumulators per thread (f32 with three products: and the step's own, for the
 * wider of the two; one product adds into the sums directly). */
FT_TRAIT int bwd_mma_kv_acc_regs(int num_warps, int block_n, int head_dim, int head_dim_v, int dtype, int allow_tf32)
{
    const int wide = head_dim > head_dim_v ? head_dim : head_dim_v;
    return bwd_mma_kv_rows(num_warps, block_n) * (head_dim + head_dim_v + (dtype == 0 && !allow_tf32 ? wide : 0)) /
           bwd_mma_kv_dsplit(num_warps, block_n) / 32;
}
FT_TRAIT int bwd_mma_kv_s_regs(int num_warps, int block_m, int block_n)
{
    return bwd_mma_kv_rows(num_warps, block_n) * block_m / 32;
}
/* dP^T, dS^T and dK run over query chunks of DP_CHUNK when P^T and a whole tile's dP^T would
 * not fit beside the dK/dV accumulators (ptxas spilled around 190 such registers a thread). */
FT_TRAIT int bwd_mma_dp_chunk(int num_warps, int block_m, int block_n, int head_dim, int head_dim_v, int dtype)
{
    return block_m > 32 && block_m % 32 == 0 &&
                   (dtype == 0 || bwd_mma_kv_acc_regs(num_warps, block_n, head_dim, head_dim_v, dtype, 0) +
                           2 * bwd_mma_kv_s_regs(num_warps, block_m, block_n) > 176)
               ? 32
               : block_m;
}
/* Reductions over the head dim (S, dP) past 128 columns run as a loop over 64-column groups:
 * fully unrolled, ptxas preloads fragments for the whole head dim (head dim 256: 248-250
 * registers against 224-246 grouped, on the edge of spilling). dim in 16-bit columns (f32: twice
 * the head dim), where f32 groups past 64 (32 floats): its split fragments take twice the
 * registers (head dim 64 at 32 x 64 tiles, 4 warps: 255 registers and 8 bytes spilled unrolled). */
FT_TRAIT int bwd_mma_kd_group(int dim, int dtype)
{
    return dim > (dtype == 0 ? 64 : 128) ? 64 : dim;
}
/* ft_bwd_dq and the dQ step of ft_bwd_dkdv: warps along the queries, then along the keys of
 * each tile (ft_bwd_dq), rows and keys per warp. */
FT_TRAIT int bwd_mma_q_warps_m(int num_warps, int block_m)
{
    return ft_imin(num_warps, block_m / 16);
}
FT_TRAIT int bwd_mma_q_warps_n(int num_warps, int block_m)
{
    return num_warps / bwd_mma_q_warps_m(num_warps, block_m);
}
/* ft_bwd_dkdv's dQ step: Q_WARPS_M x DQS_WARPS_N warps, DQS_WARPS_N the largest divisor of
 * HEAD_DIM / bwd_mma_col_unit not above Q_WARPS_N (so any head dim works); the other warps sit
 * it out. */
FT_TRAIT int bwd_mma_dqs_warps_n(int num_warps, int block_m, int head_dim, int dtype)
{
    int c = bwd_mma_q_warps_n(num_warps, block_m);
    while (c > 1 && (head_dim / bwd_mma_col_unit(dtype)) % c != 0)
        c--;
    return c;
}

/* Row stride of the dS^T tile in elements: padding keeps ldmatrix (16-bit) and the per-lane
 * reads of f32 (stride = 4 mod 32 words: rows 2q and 2q + 1 of a k-step on distinct banks)
 * free of conflicts. */
FT_TRAIT int bwd_mma_ds_ld(int block_m, int dtype)
{
    return block_m + (dtype == 0 ? 4 : 8);
}

/* SPLIT_QUERIES (f32, two warps a 16-key slab, dQ by atomics): the slab's two warps split a
 * query tile's queries for S^T and dP^T (each half of them, over the whole head dims) instead of
 * both computing all of them, and exchange P^T and dS^T through shared memory, each then taking
 * its columns of dV and dK over every query: a step's products per warp fall from 6 to 4 times
 * those of dV alone (notes/fp32.md). */
FT_TRAIT int bwd_mma_split_queries_ok(int num_warps, int block_n, int dq_mode, int dtype)
{
    return dtype == 0 && bwd_mma_kv_dsplit(num_warps, block_n) == 2 && dq_mode == 0;
}

/* SPLIT_SMEM (f32): each Q and dO tile split into TF32 parts once, in shared memory, when it has
 * landed (the high parts in place, the remainders in planes after the stage's L and delta), so
 * the products read both parts where each warp split every fragment it read: most of the f32
 * kernel's integer work (the profile of 64 x 64 at head dim 128: about seven other instructions an
 * HMMA, most of them such splits; notes/fp32.md). With ALLOW_TF32 the high parts alone, rounded in
 * place: no planes. */
FT_TRAIT int bwd_mma_split_planes(int split_smem, int allow_tf32)
{
    return split_smem && !allow_tf32 ? 1 : 0;   /* remainder planes a stage holds beside Q and dO */
}

/* Shared memory of ft_bwd_dkdv: K and V tiles, NUM_STAGES x (Q, dO tiles, L and delta rows, with
 * SPLIT_SMEM the remainders of Q and dO), with DQ_MODE 0 the dS^T tile (row stride
 * bwd_mma_ds_ld), and with SPLIT_QUERIES a P^T tile like it. */
FT_TRAIT long long bwd_mma_dkdv_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages,
                                           int dq_mode, int dtype, int split_queries, int split_smem, int allow_tf32)
{
    const int unit = 2 * ft_tile_units(dtype);   /* bytes an element takes */
    const long long stage = (long long)block_m * (head_dim + head_dim_v) * unit *
                                (1 + bwd_mma_split_planes(split_smem, allow_tf32)) +
                            (long long)block_m * 4 * 2;
    const long long ds = dq_mode == 0 ? (long long)block_n * bwd_mma_ds_ld(block_m, dtype) * unit : 0;
    return (long long)block_n * (head_dim + head_dim_v) * unit + num_stages * stage + (split_queries ? 2 : 1) * ds;
}
/* Of ft_bwd_dq: Q and dO tiles and NUM_STAGES x (K, V tiles); at the end the same memory holds
 * the fp32 dQ tile (row stride HEAD_DIM + 8). */
FT_TRAIT long long bwd_mma_dq_smem_bytes(int block_m, int block_n, int head_dim, int head_dim_v, int num_stages,
                                         int dtype)
{
    const int unit = 2 * ft_tile_units(dtype);
    const long long main_bytes = (long long)block_m * (head_dim + head_dim_v) * unit +
                                 (long long)num_stages * block_n * (head_dim + head_dim_v) * unit;
    const long long red_bytes = (long long)block_m * (head_dim + 8) * 4;
    return main_bytes > red_bytes ? main_bytes : red_bytes;
}

/* Per-thread fp32 registers the kernels hold at their peak: ft_bwd_dkdv's dK and dV
 * accumulators, S^T (then P^T) and dP^T over DP_CHUNK queries; ft_bwd_dq's dQ accumulators, S
 * and dP. Fragments, addresses and indices take about 90 more: with that margin, head dim 128
 * at 32 x 128 tiles is spill-free and at 64 x 128 spills (ptxas, CUDA 13.0, sm_80 and sm_90).
 * Only what would obviously spill is refused: near the limit ptxas may still spill a few bytes,
 * which the compile report shows. f32: with three products the accumulators of a step's own (in
 * bwd_mma_kv_acc_regs, and ft_bwd_dq's of a key tile), and split fragments (TF32_MARGIN more). */
#define BWD_MMA_TF32_MARGIN 8
FT_TRAIT int bwd_mma_regs(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v, int dq_mode,
                          int dtype, int allow_tf32)
{
    const int kv_rows = bwd_mma_kv_rows(num_warps, block_n);
    const int q_rows = block_m / bwd_mma_q_warps_m(num_warps, block_m);
    const int qn = bwd_mma_q_warps_n(num_warps, block_m);
    const int tf32 = dtype == 0;
    const int dkdv = bwd_mma_kv_acc_regs(num_warps, block_n, head_dim, head_dim_v, dtype, allow_tf32) +
                     bwd_mma_kv_s_regs(num_warps, block_m, block_n) +
                     kv_rows * bwd_mma_dp_chunk(num_warps, block_m, block_n, head_dim, head_dim_v, dtype) / 32;
    const int dq_apart = tf32 && !allow_tf32;
    const int dq = dq_mode == 1 ? (1 + dq_apart) * q_rows * head_dim / 32 + 2 * q_rows * (block_n / qn) / 32 : 0;
    return (dkdv > dq ? dkdv : dq) + 90 + (tf32 ? BWD_MMA_TF32_MARGIN : 0);
}

FT_TRAIT int bwd_mma_rule(int block_m, int block_n, int num_warps, int num_stages, int head_dim, int head_dim_v,
                          int dq_mode, int dtype, int allow_tf32, int split_queries, int split_smem)
{
    if (dtype != 0 && allow_tf32)
        return BWD_MMA_BAD_TF32;
    if (dtype != 0 && split_smem)
        return BWD_MMA_BAD_SPLIT_SMEM;
    if (block_m % 16 != 0)
        return BWD_MMA_BAD_BLOCK_M;
    if (block_n % 16 != 0)
        return BWD_MMA_BAD_BLOCK_N;
    if (num_stages < 1 || num_stages > 3)
        return BWD_MMA_BAD_STAGES;
    if (head_dim % 32 != 0 || head_dim_v % 32 != 0)
        return BWD_MMA_BAD_HEAD_DIM;
    const int kvn = bwd_mma_kv_warps_n(num_warps, block_n);
    if ((block_n / 16) % kvn != 0 || num_warps % kvn != 0)
        return BWD_MMA_BAD_KV_WARPS;
    const int dsplit = num_warps / kvn, unit = bwd_mma_col_unit(dtype);
    if (head_dim % (unit * dsplit) != 0 || head_dim_v % (unit * dsplit) != 0)
        return BWD_MMA_BAD_KV_SPLIT;
    const int qm = bwd_mma_q_warps_m(num_warps, block_m);
    if ((block_m / 16) % qm != 0 || num_warps % qm != 0)
        return BWD_MMA_BAD_Q_WARPS;
    if (dq_mode == 1 && block_n % (16 * (num_warps / qm)) != 0)
        return BWD_MMA_BAD_DQ_SPLIT;
    if (dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_SEPARATE)
        return BWD_MMA_BAD_DQ_MODE;
    if (split_queries && (!bwd_mma_split_queries_ok(num_warps, block_n, dq_mode, dtype) || (block_m / 2) % 16 != 0))
        return BWD_MMA_BAD_SPLIT_QUERIES;
    if (bwd_mma_dkdv_smem_bytes(block_m, block_n, head_dim, head_dim_v, num_stages, dq_mode, dtype, split_queries,
                                split_smem, allow_tf32) > FT_SMEM_MAX_BYTES ||
        (dq_mode == 1 &&
         bwd_mma_dq_smem_bytes(block_m, block_n, head_dim, head_dim_v, num_stages, dtype) > FT_SMEM_MAX_BYTES))
        return BWD_MMA_BAD_SMEM;
    if (bwd_mma_regs(block_m, block_n, num_warps, head_dim, head_dim_v, dq_mode, dtype, allow_tf32) >
        ft_register_cap(num_warps * 32))
        return BWD_MMA_BAD_REGISTERS;
    return BWD_MMA_OK;
}

#endif
