/* fwd_wgmma traits (templates/families/fwd_wgmma.cu, generator/family_fwd_wgmma.c): one consumer
 * warpgroup (4 warps) per 64 query rows; Q and K/V tiles as swizzled panels (fwd_wgmma_narrow). NUM_WARPS
 * says whether a producer warpgroup loads K and V for the consumers by the copy engine
 * (BLOCK_M / 16 + 4; they then wait only for their data, through mbarriers, not for each other)
 * or every warp loads and computes (BLOCK_M / 16). With a producer, OVERLAP runs a tile's
 * softmax under the previous tile's P V product, PINGPONG (two or three consumers) makes them
 * take turns at the tensor cores, and PERSISTENT keeps the blocks resident, each looping over
 * query tiles while the producer loads the next tile's Q, K and V under this one. */
#ifndef FT_TRAITS_FWD_WGMMA_H
#define FT_TRAITS_FWD_WGMMA_H

enum fwd_wgmma_rule {
    FWD_WGMMA_OK,
    FWD_WGMMA_BAD_WARPS,       /* NUM_WARPS neither BLOCK_M / 16 nor that + 4 (a producer) */
    FWD_WGMMA_BAD_BLOCK_M,     /* BLOCK_M not 64, 128 or 192 (64 rows a consumer warpgroup) */
    FWD_WGMMA_BAD_BLOCK_N,     /* BLOCK_N not a multiple of 16 from 64 to 192 */
    FWD_WGMMA_BAD_HEAD_DIM,    /* a head dim not 64, 96, 128, 192 or 256 */
    FWD_WGMMA_BAD_REGISTERS,   /* accumulators would spill */
    FWD_WGMMA_BAD_OVERLAP,     /* OVERLAP without a producer */
    FWD_WGMMA_BAD_PINGPONG,    /* PINGPONG without a producer and two or three consumers */
    FWD_WGMMA_BAD_PERSISTENT,  /* PERSISTENT without a producer */
    FWD_WGMMA_BAD_F32,         /* f32 without a producer, or with key tiles not whole panels of 32 keys */
    FWD_WGMMA_BAD_TF32,        /* ALLOW_TF32 = 1 with a 16-bit DTYPE */
    FWD_WGMMA_BAD_MULTICAST,   /* MULTICAST where a cluster's two blocks would not walk the same key tiles */
    FWD_WGMMA_BAD_P_SMEM,      /* P_SMEM outside 16-bit with a producer */
    FWD_WGMMA_BAD_PARTS,       /* BF16_PARTS outside f32 without TF32, or where its tiles do not fit */
};

/* f32 (DTYPE 0) runs on TF32 tensor cores (wgmma's .tf32 forms, k-steps of 8 floats, both
 * operands K-major in shared memory): each float split into a TF32 high part and a TF32
 * remainder, a product made of three TF32 products (one with ALLOW_TF32). The high parts
 * overwrite Q and K where the copy engine landed them, the remainders take planes of their own
 * beside them (f32 planes: 2, or 1 with ALLOW_TF32); V lands as it is and the producer writes
 * it transposed (V^T, keys along the rows, as the .tf32 forms read P V's B) into planes of high
 * parts and remainders. */
FT_TRAIT int fwd_wgmma_f32(int dtype)
{
    return dtype == 0;
}
/* BF16_PARTS (f32 without TF32): each float split into three bfloat16 parts (high, the rounded
 * remainder, the rounded remainder of that: exact), a product made of the six largest part
 * products on the 16-bit tensor cores (float32's accuracy, notes/fp32.md), which read an
 * operand in either order: V is read as it lies, no V^T. Q, K and V land as floats, their
 * 32-float panels placed in groups of three panels a 64 columns (the first two landed, the
 * third free), and are split in place a row at a time into the group's three bfloat16 panels
 * (high, middle, low), which then lie one after another: [K_mid; K_lo] and [K_hi; K_mid] are
 * each one operand of twice the key tile's rows (S's products stacked). Head dims 64 and 128
 * (whole groups).
 * The f32 form of a configuration, which the traits below take for allow_tf32's place: 0 three
 * TF32 products, 1 one (ALLOW_TF32), 2 six bfloat16 products (BF16_PARTS), 3 both asked (refused). */
FT_TRAIT int fwd_wgmma_form(int allow_tf32, int bf16_parts)
{
    return (allow_tf32 ? 1 : 0) + (bf16_parts ? 2 : 0);
}
FT_TRAIT int fwd_wgmma_parts(int dtype, int form)
{
    return fwd_wgmma_f32(dtype) && form == 2;
}
/* Planes of Q and K (and of V^T, or with BF16_PARTS of V): TF32 high parts and remainders, or
 * bfloat16 parts. */
FT_TRAIT int fwd_wgmma_planes(int dtype, int form)
{
    if (fwd_wgmma_parts(dtype, form))
        return 3;
    return fwd_wgmma_f32(dtype) && form == 0 ? 2 : 1;
}

/* Consumer warpgroups: 64 query rows each. */
FT_TRAIT int fwd_wgmma_consumers(int block_m)
{
    return block_m / 64;
}

/* 1 when a producer warpgroup loads K and V for the consumers (NUM_WARPS = BLOCK_M / 16 + 4). */
FT_TRAIT int fwd_wgmma_has_producer(int block_m, int num_warps)
{
    return num_warps == block_m / 16 + 4;
}

/* Key tiles: any multiple of 16 keys (one k-step of P V) from 64 to 192, each a width of S = Q K^T
 * that wgmma takes. Beyond powers of two because the best tile is a balance the tuner should
 * strike: wider tiles spread a tile's fixed costs (the row max and sum across the quad, O's
 * rescale, the waits) over more keys but hold more score registers live beside O (FA3 runs 176
 * keys at head dim 128, 144 at 96, 112 at 192). f32: whole panels of V^T (32 keys) from 32 to
 * 128 (a stage holds twice the bytes and V^T beside: at head dim 128 three products fit 32 keys,
 * one product up to 96 in one stage). */
FT_TRAIT int fwd_wgmma_block_n_ok(int block_n, int dtype)
{
    if (fwd_wgmma_f32(dtype))
        return block_n % 32 == 0 && block_n >= 32 && block_n <= 128;
    return block_n % 16 == 0 && block_n >= 64 && block_n <= 192;
}

/* Head dims of Q/K and of V, each one of these (96 takes two 64-column panels, the second half
 * unused; 192 and 256 whole panels); in f32 up to 128 (past it O's and the operands' registers
 * spilled and a K/V stage took most of shared memory: fwd_mma and fwd_exact serve them). */
FT_TRAIT int fwd_wgmma_head_dim_ok(int head_dim)
{
    return head_dim == 64 || head_dim == 96 || head_dim == 128 || head_dim == 192 || head_dim == 256;
}

/* Q, K and V in narrow panels: 64-byte rows of 32 16-bit columns (64-byte swizzle) where a head
 * dim of 96 fills three of them exactly, instead of two 128-byte panels whose second half lies
 * empty; 16-bit beside a producer (the copy engine lands the panels; the consumers' loads without
 * one, cp.async, write the 128-byte pattern). A quarter of Q's and K/V's room freed: at head dim
 * 96 three consumers take 144 keys with P in shared memory in two stages (FlashAttention-3's and
 * -4's tile there). */
FT_TRAIT int fwd_wgmma_narrow(int block_m, int num_warps, int head_dim, int head_dim_v, int dtype)
{
    return fwd_wgmma_has_producer(block_m, num_warps) && !fwd_wgmma_f32(dtype) && head_dim == 96 && head_dim_v == 96;
}
/* The bytes of a row of the Q, K and V panels (and of the copy engine's boxes): 128, or 64 narrow. */
FT_TRAIT int fwd_wgmma_row_bytes(int block_m, int num_warps, int head_dim, int head_dim_v, int dtype)
{
    return fwd_wgmma_narrow(block_m, num_warps, head_dim, head_dim_v, dtype) ? 64 : 128;
}
/* The columns a tile of `cols` takes in shared memory: whole panels (ft_panel_cols_of), of 32
 * columns where narrow. */
FT_TRAIT int fwd_wgmma_panel_cols(int cols, int dtype, int narrow)
{
    return narrow ? (cols + 31) / 32 * 32 : ft_panel_cols_of(cols, ft_tile_units(dtype));
}

/* P_SMEM: each consumer warpgroup's P (64 rows by the key tile, 16-bit) in shared memory, laid
 * out as Q is in 128-byte rows (64-key panels), after the mbarriers: whole panels, the last one
 * partly used where the key tile is not a multiple of 64 (its k-steps read only the keys there). */
FT_TRAIT long long fwd_wgmma_p_bytes(int block_m, int block_n, int p_smem)
{
    return p_smem ? (long long)fwd_wgmma_consumers(block_m) * 64 * ((block_n + 63) / 64 * 64) * 2 : 0;
}

/* 1024 bytes of slack to align the tiles to 1024 (the swizzle is a function of address bits
 * 4-9), q_tiles Q tiles and NUM_STAGES K/V tiles in whole panels (fwd_wgmma_panel_cols); with a
 * producer, 1024 more for the mbarriers (a ring slot's K and V full and empty, and in f32 ready;
 * two a Q tile). f32: Q and K tiles of `planes` planes, V as it lands and V^T in `planes` planes
 * of head_dim_v rows by the tile's keys. */
FT_TRAIT long long fwd_wgmma_layout_bytes(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                          int num_stages, int q_tiles, int dtype, int form, int p_smem)
{
    const int units = ft_tile_units(dtype), narrow = fwd_wgmma_narrow(block_m, num_warps, head_dim, head_dim_v, dtype);
    const long long d = fwd_wgmma_panel_cols(head_dim, dtype, narrow), dv = fwd_wgmma_panel_cols(head_dim_v, dtype, narrow);
    const long long e = 2 * units, planes = fwd_wgmma_planes(dtype, form);
    const long long bars =
        (fwd_wgmma_has_producer(block_m, num_warps) ? 1024 : 0) + fwd_wgmma_p_bytes(block_m, block_n, p_smem);
    if (fwd_wgmma_parts(dtype, form))   /* three bfloat16 planes of Q, K and V: 6 bytes an element */
        return 1024 + ((long long)q_tiles * block_m * d + (long long)num_stages * block_n * (d + dv)) * 6 + bars;
    const long long v_t = fwd_wgmma_f32(dtype) ? planes * head_dim_v : 0;
    return 1024 + ((long long)q_tiles * block_m * d * planes + (long long)num_stages * block_n * (d * planes + dv + v_t)) * e +
           bars;
}

/* Q tiles in shared memory: two where a persistent block's producer can load the next tile's Q
 * while the consumers still read this one's and both fit, else one (the producer then waits
 * for the consumers' last Q K^T of a tile before loading the next tile's Q). */
FT_TRAIT int fwd_wgmma_q_tiles(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v, int num_stages,
                               int persistent, int dtype, int form, int p_smem)
{
    return persistent && fwd_wgmma_layout_bytes(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages, 2, dtype,
                                                form, p_smem) <= FT_SMEM_MAX_BYTES ? 2 : 1;
}

/* 1 where a persistent block writes O through the copy engine, from its Q tile's place once the
 * tile's last scores are in (the consumers go on to the next tile while it is written): with
 * two Q tiles (the producer loads into the other meanwhile) and O no wider than Q; 16-bit only
 * (its stores pack O to 16-bit pairs), in 128-byte panels (its stores write that pattern). */
FT_TRAIT int fwd_wgmma_async_o(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v, int num_stages,
                               int persistent, int dtype, int form, int p_smem)
{
    return !fwd_wgmma_f32(dtype) && !fwd_wgmma_narrow(block_m, num_warps, head_dim, head_dim_v, dtype) &&
           fwd_wgmma_q_tiles(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages, persistent, dtype,
                             form, p_smem) == 2 &&
           ft_panel_cols(head_dim_v) <= ft_panel_cols(head_dim);
}

FT_TRAIT long long fwd_wgmma_smem_bytes(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                        int num_stages, int persistent, int dtype, int form, int p_smem)
{
    return fwd_wgmma_layout_bytes(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages,
                                  fwd_wgmma_q_tiles(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages,
                                                    persistent, dtype, form, p_smem),
                                  dtype, form, p_smem);
}

/* BF16_PARTS: S's products land in four score accumulators' worth (2 x block_n: the large
 * products', and three of small ones), O and a key tile's P V apart (head_dim_v / 2 each), P in
 * three bfloat16 parts packed in pairs (3 x block_n / 4), 32 of the rest (a producer's
 * consumers). Without OVERLAP P is made once S is one accumulator again, P V's beside O; with it
 * the next tile's scores are in flight beside the last tile's P and P V. */
FT_TRAIT int fwd_wgmma_parts_regs(int block_n, int head_dim_v, int overlap)
{
    const int s = 2 * block_n, p = 3 * block_n / 4, o = head_dim_v / 2;
    if (overlap)
        return s + p + 2 * o + 32;
    return (s + o > p + 2 * o ? s + o : p + 2 * o) + 32;
}

/* fp32 S and O accumulators (f32 with three products: and a key tile's P V apart from O), P as
 * packed pairs (f32: a float a key split in `planes` parts; none with p_smem, P in shared memory), and ~40 registers of addresses and
 * softmax state per thread; 32 where a producer loads K and V (a consumer keeps no load
 * addresses: 192 x 128 tiles of head dim 64 compile in 160 without a spill, at OVERLAP and
 * PINGPONG). BF16_PARTS: fwd_wgmma_parts_regs without OVERLAP. */
FT_TRAIT int fwd_wgmma_regs(int block_n, int head_dim_v, int producer, int dtype, int form, int p_smem)
{
    const int f32 = fwd_wgmma_f32(dtype), planes = fwd_wgmma_planes(dtype, form);
    if (fwd_wgmma_parts(dtype, form))
        return fwd_wgmma_parts_regs(block_n, head_dim_v, 0);
    const int p = p_smem ? 0 : f32 ? block_n / 2 * planes : block_n / 4;
    return block_n / 2 + head_dim_v / 2 * (planes == 2 ? 2 : 1) + p + (producer ? 32 : 40);
}

/* Blocks per SM the kernel is compiled for (__launch_bounds__'s second argument): as many as the
 * register estimate and shared memory allow, so that ptxas keeps within that occupancy. Left at
 * 1, ptxas took 167 registers for 64x64 tiles of head dim 64 once the band mask came in (3
 * blocks an SM) where 126 suffice (4): the causal forward lost ~15% at head dim 64 on the H100
 * (compare.py, 2026-11-24). With a producer: two blocks for one consumer (an SM then runs two
 * consumer warpgroups where shared memory allows; the bound also fixes the registers at entry,
 * from which setmaxnreg moves them), else one. */
FT_TRAIT int fwd_wgmma_min_blocks(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                  int num_stages, int dtype, int form)
{
    const long long by_smem = FT_SMEM_MAX_BYTES / fwd_wgmma_layout_bytes(block_m, block_n, num_warps, head_dim,
                                                                         head_dim_v, num_stages, 1, dtype, form, 0);
    if (fwd_wgmma_has_producer(block_m, num_warps))
        return fwd_wgmma_consumers(block_m) == 1 ? 2 : 1;
    const int by_regs = 65536 / (num_warps * 32 * fwd_wgmma_regs(block_n, head_dim_v, 0, dtype, form, 0));
    const int blocks = by_regs < by_smem ? by_regs : (int)by_smem;
    return blocks < 1 ? 1 : blocks;
}

/* The registers the producer warpgroup keeps (setmaxnreg's least where one thread issues the
 * copy engine's loads; f32: 56, its warps 1-3 split K and transpose V), and those a consumer
 * thread may hold: with a producer, what setmaxnreg moves to the consumers (three consumers:
 * 512 x 128 at entry >= 128 x 24 + 384 x 160 >= 128 x 56 + 384 x 152; two: 384 x 168 = 128 x 24
 * + 256 x 240 = 128 x 56 + 256 x 224; one: 256 x 128 = 128 x 24 + 128 x 232 = 128 x 56 + 128 x
 * 200); else the cap of the block's occupancy. */
FT_TRAIT int fwd_wgmma_producer_regs(int dtype)
{
    return fwd_wgmma_f32(dtype) ? 56 : 24;
}
FT_TRAIT int fwd_wgmma_consumer_regs(int block_m, int num_warps, int dtype)
{
    if (!fwd_wgmma_has_producer(block_m, num_warps))
        return ft_register_cap(num_warps * 32);
    const int consumers = fwd_wgmma_consumers(block_m), f32 = fwd_wgmma_f32(dtype);
    return consumers == 3 ? (f32 ? 152 : 160) : consumers == 2 ? (f32 ? 224 : 240) : (f32 ? 200 : 232);
}

/* MULTICAST: the blocks of two adjacent query tiles of one head form a cluster, and each
 * block's producer loads half of every K/V tile (half the keys) into both blocks' shared memory
 * by the copy engine's multicast: the L2 serves each K/V byte once for the pair, not twice. The
 * two must walk the same key tiles in the same order, so: 16-bit with a producer, one block a
 * tile (not persistent), no mask (causal or window: the tiles' walks differ) and a dense batch
 * (a packed batch's pair may straddle two sequences). Blocks a cluster: */
FT_TRAIT int fwd_wgmma_cluster(int multicast)
{
    return multicast ? 2 : 1;
}
FT_TRAIT int fwd_wgmma_multicast_ok(int block_m, int num_warps, int persistent, int dtype, int causal, int varlen)
{
    return fwd_wgmma_has_producer(block_m, num_warps) && !persistent && !fwd_wgmma_f32(dtype) && !causal && !varlen;
}

/* The rows of the copy engine's K and V boxes (a key tile, or with MULTICAST its half), or 0
 * where every warp loads by cp.async (no producer); and of its Q box (a query tile), likewise. */
FT_TRAIT int fwd_wgmma_map_rows(int block_m, int block_n, int num_warps, int multicast)
{
    return fwd_wgmma_has_producer(block_m, num_warps) ? block_n / fwd_wgmma_cluster(multicast) : 0;
}
FT_TRAIT int fwd_wgmma_q_map_rows(int block_m, int num_warps)
{
    return fwd_wgmma_has_producer(block_m, num_warps) ? block_m : 0;
}

/* The family's default tiles for a head dim pair (gen_family.head_dim_tiles): the table's 128 x 128
 * beside a producer where a K/V stage of 128 keys fits twice beside Q (Q/K and V panels up to
 * 320 columns together: 192/128 takes 210 KB), else 64 keys (256, 192/192: 128 x 256 x 2 of Q
 * and two 64-key stages, 194 KB at 256; O's 128 registers a thread at V's 256 leave no room for
 * 128-key scores either). */
FT_TRAIT void fwd_wgmma_head_dim_tiles(int head_dim, int head_dim_v, int dtype, int *block_m, int *block_n,
                                       int *num_warps, int *num_stages, int *overlap, int *pingpong)
{
    *overlap = 1;
    if (fwd_wgmma_f32(dtype)) {
        /* f32 (three planes a K/V stage beside V as it lands), the fastest of bench_kernels' rows
         * on the H200 (notes/fp32.md): two consumers taking turns, 128 x 64 in two stages with
         * OVERLAP to head dim 64, else 128 x 32 in one stage without it. */
        const int wide = head_dim <= 64 && head_dim_v <= 64;
        *block_m = 128;
        *block_n = wide ? 64 : 32;
        *num_warps = 12;
        *num_stages = wide ? 2 : 1;
        *overlap = wide;
        *pingpong = 1;
        return;
    }
    if (ft_panel_cols(head_dim) + ft_panel_cols(head_dim_v) > 320)
        *block_n = 64;
}

FT_TRAIT int fwd_wgmma_rule(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v, int num_stages,
                            int overlap, int pingpong, int persistent, int dtype, int form, int multicast,
                            int causal, int varlen, int p_smem)
{
    if (block_m != 64 && block_m != 128 && block_m != 192)
        return FWD_WGMMA_BAD_BLOCK_M;
    const int producer = fwd_wgmma_has_producer(block_m, num_warps);
    if (num_warps != block_m / 16 && !producer)
        return FWD_WGMMA_BAD_WARPS;
    if ((form & 1) && !fwd_wgmma_f32(dtype))
        return FWD_WGMMA_BAD_TF32;
    /* BF16_PARTS: f32 keeping its accuracy (not with TF32), beside a producer (whose warps split
     * K and V), key tiles of 32 or 64 (S's four accumulators' worth of registers: 96 keys would
     * take 192 of them), head dims 64 and 128 (whole groups of three panels). */
    if ((form & 2) && (form != 2 || !fwd_wgmma_f32(dtype) || !producer || (block_n != 32 && block_n != 64) ||
                       (head_dim != 64 && head_dim != 128) || (head_dim_v != 64 && head_dim_v != 128)))
        return FWD_WGMMA_BAD_PARTS;
    if (fwd_wgmma_f32(dtype) && (!producer || block_n % 32 != 0))
        return FWD_WGMMA_BAD_F32;
    if (!fwd_wgmma_block_n_ok(block_n, dtype))
        return FWD_WGMMA_BAD_BLOCK_N;
    if (!fwd_wgmma_head_dim_ok(head_dim) || !fwd_wgmma_head_dim_ok(head_dim_v) ||
        (fwd_wgmma_f32(dtype) && (head_dim > 128 || head_dim_v > 128)))
        return FWD_WGMMA_BAD_HEAD_DIM;
    /* P from shared memory (an SS P V): 16-bit only (f32's P is split in registers), beside a
     * producer (the consumers' loop). A key tile not a multiple of 64 takes whole panels' room
     * (fwd_wgmma_p_bytes): the shared memory's bound says where it fits (192 x 144 at head dim
     * 96 in narrow panels, FlashAttention-4's tile there). */
    if (p_smem && (fwd_wgmma_f32(dtype) || !producer))
        return FWD_WGMMA_BAD_P_SMEM;
    /* (BF16_PARTS: OVERLAP's registers too, which fwd_wgmma_regs leaves out.) */
    const int regs = fwd_wgmma_parts(dtype, form) ? fwd_wgmma_parts_regs(block_n, head_dim_v, overlap)
                                                  : fwd_wgmma_regs(block_n, head_dim_v, producer, dtype, form, p_smem);
    if (regs > fwd_wgmma_consumer_regs(block_m, num_warps, dtype))
        return FWD_WGMMA_BAD_REGISTERS;
    /* BF16_PARTS beyond the estimate: these spilled (NVRTC for sm_90a over every tile, schedule and
     * mask the rules let through, forty-first session): one consumer (4-128 bytes, most forms), and
     * 64-key tiles in one stage taking turns (4-16). */
    if (fwd_wgmma_parts(dtype, form) &&
        (fwd_wgmma_consumers(block_m) == 1 || (num_stages == 1 && block_n == 64 && pingpong)))
        return FWD_WGMMA_BAD_REGISTERS;
    /* f32 with three products in one stage: the tile's descriptors are the same every key tile
     * there, and ptxas keeps them live across the walk. These spilled (NVRTC for sm_90a, every f32
     * tile the rules above let through, causal and not, seventeenth session; the two-stage ones
     * never did): one or three consumers; OVERLAP past head dim 64; 64-key tiles without OVERLAP
     * taking turns, or past head dim 64. With ALLOW_TF32 (no P V accumulator apart) none of the
     * tiles the rules above let through spills, one stage or more (NVRTC, every one, thirtieth
     * session). */
    if (fwd_wgmma_f32(dtype) && fwd_wgmma_planes(dtype, form) == 2 && num_stages == 1 &&
        (block_m != 128 || (overlap && head_dim_v > 64) ||
         (block_n == 64 && !overlap && (pingpong || head_dim_v > 64))))
        return FWD_WGMMA_BAD_REGISTERS;
    if (overlap && !producer)
        return FWD_WGMMA_BAD_OVERLAP;
    if (pingpong && !(producer && fwd_wgmma_consumers(block_m) >= 2))
        return FWD_WGMMA_BAD_PINGPONG;
    if (persistent && !producer)
        return FWD_WGMMA_BAD_PERSISTENT;
    if (multicast && !fwd_wgmma_multicast_ok(block_m, num_warps, persistent, dtype, causal, varlen))
        return FWD_WGMMA_BAD_MULTICAST;
    return FWD_WGMMA_OK;
}

#endif
