/* bwd_wgmma traits (templates/families/bwd_wgmma.cu, generator/family_bwd_wgmma.c): the Hopper
 * backward. One block per key tile of BLOCK_N keys; each consumer warpgroup (4 warps) owns 64 of
 * them and keeps their dK, dV in registers; query tiles of BLOCK_M = 64 rows (or 128 beside two
 * consumers, each then making dQ for 64 of them: bwd_wgmma_dq_split_rows; or 80, dQ then made
 * transposed: bwd_wgmma_dq_transposed) stream through a TMA ring; dQ goes through shared memory into fp32 dq_accum by the copy engine's bulk reduce-add,
 * each warpgroup owning the columns bwd_wgmma_dq_cols gives it. NUM_WARPS says
 * whether a producer warpgroup loads and adds dQ for the consumers (BLOCK_N / 16 + 4) or they
 * do it themselves (BLOCK_N / 16). Head dims 192 and 256 split columns instead of keys: two
 * consumers share one 64-key tile, each owning its panels of dK's, dV's and dQ's columns
 * (bwd_wgmma_split_cols, bwd_wgmma_split_first), beside a producer (12 warps). DQ_MODE ordered
 * adds each query tile's dQ in descending order of key tiles (bitwise repeatable). */
#ifndef FT_TRAITS_BWD_WGMMA_H
#define FT_TRAITS_BWD_WGMMA_H

enum bwd_wgmma_rule {
    BWD_WGMMA_OK,
    BWD_WGMMA_BAD_WARPS,       /* NUM_WARPS neither BLOCK_N / 16 nor that + 4 (a producer); 12 at head dims 192, 256 */
    BWD_WGMMA_BAD_BLOCK_M,     /* BLOCK_M not 64, nor 128 beside two consumers at head dims 64, nor 80
                                * beside a producer and two consumers at head dims 128 (atomic dQ,
                                * no L_EARLY, no DK_SS) */
    BWD_WGMMA_BAD_BLOCK_N,     /* BLOCK_N not 64 or 128 (64 keys a consumer warpgroup); 64 at head dim 256 */
    BWD_WGMMA_BAD_HEAD_DIM,    /* a head dim not 64, 96 or 128; or 192, 256 beside 128 or the same
                                * (192 over 192: BLOCK_N 64) */
    BWD_WGMMA_BAD_STAGES,      /* NUM_STAGES outside 1..3 */
    BWD_WGMMA_BAD_DQ_MODE,     /* DQ_MODE separate (bwd_wgmma is atomic or ordered) */
    BWD_WGMMA_BAD_SMEM,        /* over the shared-memory limit */
    BWD_WGMMA_BAD_REGISTERS,   /* accumulators would spill */
    BWD_WGMMA_BAD_ORDER,       /* DQ_FIRST, DK_SS or DV_EARLY 1 without a producer, or with the columns split */
    BWD_WGMMA_BAD_PERSISTENT,  /* PERSISTENT 1 without a producer, with the columns split, or DQ_MODE ordered */
    BWD_WGMMA_BAD_L_EARLY,     /* L_EARLY 1 with the columns split */
    BWD_WGMMA_BAD_DQ_INIT,     /* DQ_INIT store without a producer warpgroup */
    BWD_WGMMA_BAD_PRODUCER_REGS, /* PRODUCER_REGS below 24 but not 0, or set without a producer */
    BWD_WGMMA_BAD_STAGGER,     /* STAGGER 1 with DQ_MODE ordered */
};

/* The bytes after a ring stage's Q and dO tiles: L and delta of its rows, then the mbarriers, the
 * ticket, the units and the packed walk's place in 160 bytes, padded so the next stage's tiles
 * start 1024-aligned (the swizzle is a function of address bits 4-9). */
FT_TRAIT int bwd_wgmma_ld_bytes(int block_m)
{
    return (block_m * 8 + 160 + 1023) / 1024 * 1024;
}

/* The bytes of one ring stage: the Q and dO tiles, then bwd_wgmma_ld_bytes. */
FT_TRAIT long long bwd_wgmma_stage_bytes(int block_m, int head_dim, int head_dim_v)
{
    const long long tiles = (long long)block_m * (ft_panel_cols(head_dim) + ft_panel_cols(head_dim_v)) * 2;
    return tiles + bwd_wgmma_ld_bytes(block_m);
}

/* Head dims past 128 (192, 256): dK and dV of a warpgroup's 64 keys over all their columns do not
 * fit its registers, so two consumers beside a producer share either 64 keys by the columns
 * (bwd_wgmma_split_cols, the default tiles) or, at 192 over 128, 128 keys (bwd_wgmma_wide_keys);
 * one dS^T tile either way. */
FT_TRAIT int bwd_wgmma_wide_head(int head_dim)
{
    return head_dim > 128;
}

/* 1 when two consumer warpgroups share the 64 keys of the tile and split the head dim's columns
 * (head dims 192 and 256: dK and dV of 64 keys over all their columns would not fit one
 * warpgroup's registers). The first computes S^T, the second dP^T, each over all the columns;
 * P^T and dS^T pass between them through shared memory; each then makes dV, dK and dQ for its
 * own panels of the columns. */
FT_TRAIT int bwd_wgmma_split_cols(int head_dim, int block_n);

/* 1 when, at head dims 192 over 128, two consumers each take 64 keys of a 128-key tile (the keys
 * split, as below 192) with dK's 96 and dV's 64 accumulators a thread held throughout: S^T and
 * dP^T are then issued one after the other (bwd_wgmma_regs), dS is made from P's packed pairs, and
 * the second consumer makes its 128 columns of dQ one 64-column panel at a time. Half the L2
 * bytes a FLOP of 64 keys (notes/kernels.md: the columns split was L2-bound there). */
FT_TRAIT int bwd_wgmma_wide_keys(int head_dim, int block_n)
{
    return head_dim == 192 && block_n == 128;
}

FT_TRAIT int bwd_wgmma_split_cols(int head_dim, int block_n)
{
    return bwd_wgmma_wide_head(head_dim) && !bwd_wgmma_wide_keys(head_dim, block_n);
}

/* With the columns split, the columns (of dK, dV or dQ: `cols` wide) the first consumer takes:
 * the first half of the 64-column panels, rounded down (128 of 256, 64 of 192 or 128); the
 * second takes the rest. A product's N-major operand starts on a panel, so the split follows
 * them; the first consumer also computes S^T over head dim 192 (a panel more than the second's
 * dP^T over 128), so it is the one given fewer. */
FT_TRAIT int bwd_wgmma_split_first(int cols)
{
    return ft_panel_cols(cols) / 128 * 64;
}

/* 1 when, with the columns split, a tile's fp32 dQ goes into its own ring slot: each consumer's
 * dQ (thread order) is exactly as large as the Q and dO panels only it reads, which holds when
 * the two head dims are equal (then dQ's columns split as Q's and dO's do). Else (192 over 128)
 * dQ has a tile of its own. */
FT_TRAIT int bwd_wgmma_dq_in_slot(int head_dim, int head_dim_v)
{
    return bwd_wgmma_wide_head(head_dim) && head_dim == head_dim_v;   /* the columns split: 64-key tiles only */
}

/* Consumer warpgroups (4 warps each): one per 64 keys of the tile, or two splitting columns. */
FT_TRAIT int bwd_wgmma_consumers(int block_n, int head_dim)
{
    return bwd_wgmma_split_cols(head_dim, block_n) ? 2 : block_n / 64;
}

/* 1 when the block has a producer warpgroup besides its consumers (NUM_WARPS = 4 x consumers + 4). */
FT_TRAIT int bwd_wgmma_has_producer(int block_n, int num_warps, int head_dim)
{
    return num_warps == 4 * bwd_wgmma_consumers(block_n, head_dim) + 4;
}

/* 1 with 80-row query tiles: dQ's product would have M = 80 queries, not a multiple of 64, so
 * each consumer makes dQ^T = K^T dS^T instead (M = its 64 of the head dim's columns, N = the 80
 * queries; A = its panel of K read M-major, B = the tile's dS stored query-major and read
 * K-major), as FlashAttention-4 does at this tile. Its accumulators then hold a column per row
 * (bwd_wgmma.cu: dq_to_tile, ft_bwd_dq_convert). */
FT_TRAIT int bwd_wgmma_dq_transposed(int block_m)
{
    return block_m == 80;
}

/* One dS^T tile: BLOCK_N rows of BLOCK_M queries, 16-bit, a 128-byte panel per 64 queries; with
 * dQ transposed dS itself, BLOCK_M rows of BLOCK_N keys, a panel per 64 keys (80 rows: 20 KB, where
 * dS^T in whole 64-query panels would take 32). */
FT_TRAIT long long bwd_wgmma_ds_bytes(int block_m, int block_n)
{
    return bwd_wgmma_dq_transposed(block_m) ? (long long)block_m * ft_panel_cols(block_n) * 2
                                            : (long long)block_n * ft_panel_cols(block_m) * 2;
}

/* dS^T tiles in shared memory: two with a producer (the consumers write one while the other is
 * still read), else one. With the columns split, one (the consumers' P^T and dS^T hand-offs
 * order its reuse); with the wide keys one too (two do not fit beside K's 192 columns: the
 * consumers meet before a tile's dS^T is stored, after the last tile's dQ products). 80-row
 * tiles take two of 20 KB (dS query-major: bwd_wgmma_ds_bytes), so that meeting is spared. */
FT_TRAIT int bwd_wgmma_buffers(int block_n, int num_warps, int head_dim)
{
    return bwd_wgmma_has_producer(block_n, num_warps, head_dim) && !bwd_wgmma_wide_head(head_dim) ? 2 : 1;
}

/* fp32 dQ tiles in shared memory: one per dS^T tile, but one with 128- and 80-row query tiles
 * (two of 32 or 40 KB do not fit beside two stages; the next tile's dQ is written half a tile
 * after the copy engine was handed the last, so it seldom waits); with the columns split one, or none when each
 * tile's dQ goes into its ring slot (bwd_wgmma_dq_in_slot: Q and dO are no longer read by then). */
FT_TRAIT int bwd_wgmma_dq_tiles(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    if (bwd_wgmma_split_cols(head_dim, block_n))
        return bwd_wgmma_dq_in_slot(head_dim, head_dim_v) ? 0 : 1;
    return block_m != 64 ? 1 : bwd_wgmma_buffers(block_n, num_warps, head_dim);
}

/* 1 when the two consumers each make dQ for their own 64 rows of a 128-row query tile, all the
 * columns, over all the keys (A = their panel of dS^T): no sums to exchange, and the S^T and
 * dP^T products run at N = 128, half the shared-memory reads a FLOP of N = 64's A operand. */
FT_TRAIT int bwd_wgmma_dq_split_rows(int block_m)
{
    return block_m == 128;
}

/* 1 when two consumer warpgroups each make dQ over their own 64 keys, all its columns, and the
 * two halves are summed before the add (head dim 64: a product's N must start on a 64-column
 * panel of K, so the columns do not split); else each owns columns of dQ over all the keys. */
FT_TRAIT int bwd_wgmma_dq_split_keys(int block_m, int head_dim, int num_wg)
{
    return num_wg == 2 && head_dim == 64 && !bwd_wgmma_dq_split_rows(block_m);
}

/* The dQ columns of warpgroup w of num_wg: one warpgroup takes them all, and so does each of two
 * that split the keys or the rows; else of two, the first takes 64 and the second the rest (64
 * at head dim 128, 32 at 96), or with the columns split bwd_wgmma_split_first's. */
FT_TRAIT int bwd_wgmma_dq_cols(int block_m, int head_dim, int num_wg, int w)
{
    const int first = bwd_wgmma_wide_head(head_dim) ? bwd_wgmma_split_first(head_dim) : 64;   /* 64 at 192 either way */
    return num_wg == 1 || bwd_wgmma_dq_split_keys(block_m, head_dim, num_wg) || bwd_wgmma_dq_split_rows(block_m)
               ? head_dim
               : w == 0 ? first : head_dim - first;
}

/* 1024 bytes of alignment slack, K and V of the key tile, the ring, bwd_wgmma_buffers x dS^T
 * (bwd_wgmma_ds_bytes) for dQ = dS K, bwd_wgmma_dq_tiles fp32 dQ tiles
 * (BLOCK_M x HEAD_DIM) that the copy engine adds into dq_accum, and with the keys split one more
 * fp32 dQ tile, the second warpgroup's half on its way to the first; with the columns split, the
 * fp32 P^T tile on its way from the first consumer to the second. */
FT_TRAIT long long bwd_wgmma_smem_bytes(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v,
                                        int num_stages)
{
    const long long dq_tile = (long long)block_m * head_dim * 4;
    const int split = bwd_wgmma_split_cols(head_dim, block_n);
    const int buffers = bwd_wgmma_buffers(block_n, num_warps, head_dim);
    return 1024 + (long long)block_n * (ft_panel_cols(head_dim) + ft_panel_cols(head_dim_v)) * 2 +
           num_stages * bwd_wgmma_stage_bytes(block_m, head_dim, head_dim_v) +
           buffers * bwd_wgmma_ds_bytes(block_m, block_n) +
           bwd_wgmma_dq_tiles(block_m, block_n, num_warps, head_dim, head_dim_v) * dq_tile +
           (bwd_wgmma_dq_split_keys(block_m, head_dim, bwd_wgmma_consumers(block_n, head_dim)) ? dq_tile : 0) +
           (split ? (long long)block_n * block_m * 4 : 0);
}

/* Per consumer thread: dK and dV of 64 keys (head_dim/2 + head_dim_v/2 fp32; with the columns
 * split, the larger share of each), S^T and dP^T (block_m/2 each; with the columns split one of
 * them, and P^T and dS^T packed beside it), P^T packed (block_m/4, beside S^T at 64 rows; at 80
 * ptxas packs it into S^T's registers as they die, at 128 half of it, notes/kernels.md; dS^T packed
 * takes dP^T's place), and ~32 of addresses and indices (40 when the consumers also load). dQ's accumulators
 * (bwd_wgmma_dq_cols / 2) live only once S^T and dP^T are dead. */
FT_TRAIT int bwd_wgmma_regs(int block_m, int block_n, int num_warps, int head_dim, int head_dim_v)
{
    const int loads = bwd_wgmma_has_producer(block_n, num_warps, head_dim) ? 32 : 40;
    if (bwd_wgmma_wide_keys(head_dim, block_n))   /* one of S^T, dP^T at a time, beside P packed */
        return head_dim / 2 + head_dim_v / 2 + block_m / 2 + block_m / 4 + loads;
    if (bwd_wgmma_split_cols(head_dim, block_n))
        return (head_dim - bwd_wgmma_split_first(head_dim)) / 2 + (head_dim_v - bwd_wgmma_split_first(head_dim_v)) / 2 +
               block_m / 2 + block_m / 2 + loads;
    /* 128 rows: 232 registers spilled 164 bytes (NVRTC, PRODUCER_REGS 32), 240 none. */
    return head_dim / 2 + head_dim_v / 2 + block_m + (block_m == 64 ? block_m / 4 : block_m == 128 ? 16 : 0) + loads;
}

/* Blocks a producer-pipeline kernel asks to fit on an SM (__launch_bounds__): one with two
 * consumers; two with one, so an SM still runs two consumer warpgroups (as the inline pipeline
 * does with two blocks of one). */
FT_TRAIT int bwd_wgmma_min_blocks(int block_n, int num_warps, int head_dim)
{
    return bwd_wgmma_has_producer(block_n, num_warps, head_dim) && bwd_wgmma_consumers(block_n, head_dim) == 1 ? 2 : 1;
}

/* 1 where persistent blocks may walk a packed batch's own key tiles (PERSISTENT with VARLEN):
 * 64-row query tiles. The walk holds a sequence's lengths beside its state, and 80- and 128-row
 * tiles' consumers spilled 52-128 bytes with it (NVRTC, dev/spill-census.py --set VARLEN=1). */
FT_TRAIT int bwd_wgmma_packed_walk(int block_m)
{
    return block_m == 64;
}

/* The registers a producer warpgroup's thread keeps (setmaxnreg): PRODUCER_REGS where a space sets
 * it (the tunable register split); else 24, or walking a packed batch (PERSISTENT with VARLEN) up
 * to head dim 128, 32: its warp 0 decodes the walk and describes each unit's sequence, which
 * spilled 8-16 bytes in 24 at head dim 128; past it the consumers need every register they have
 * (at 192/128 they spilled 48 bytes with 8 fewer). */
FT_TRAIT int bwd_wgmma_producer_regs(int head_dim, int packed_walk, int producer_regs)
{
    if (producer_regs)
        return producer_regs;
    return packed_walk && head_dim <= 128 ? 32 : 24;
}

/* The registers a consumer thread may hold: with a producer, what setmaxnreg moves to the
 * consumers beside the producer's: the block's registers at entry (__launch_bounds__ with
 * bwd_wgmma_min_blocks: 168 a thread for one block of 384, 128 for two of 256) less the
 * producer's, in setmaxnreg's steps of 8 (two consumers: 384 x 168 = 128 x 24 + 256 x 240, or
 * 128 x 32 + 256 x 232 with 1,024 left over; one: 256 x 128 = 128 x 24 + 128 x 232); else the cap of
 * one block per SM. The rule's estimate (bwd_wgmma_regs) is checked against the dense budget: the
 * packed walk's 8 fewer compiled without a spill where the walk is allowed (notes/kernels.md). */
FT_TRAIT int bwd_wgmma_consumer_regs(int block_n, int num_warps, int head_dim, int packed_walk, int producer_regs)
{
    const int threads = num_warps * 32;
    if (!bwd_wgmma_has_producer(block_n, num_warps, head_dim))
        return ft_register_cap(threads);
    const int entry = ft_register_cap(threads * bwd_wgmma_min_blocks(block_n, num_warps, head_dim)) / 8 * 8;
    const int kept = 128 * bwd_wgmma_producer_regs(head_dim, packed_walk, producer_regs);
    return (entry * threads - kept) / (threads - 128) / 8 * 8;
}

/* PRODUCER_REGS: 0 (the choice above), or where a producer warpgroup exists at least setmaxnreg's
 * 24 (the parameter table holds it to multiples of 8 up to 56). */
FT_TRAIT int bwd_wgmma_producer_regs_ok(int block_n, int num_warps, int head_dim, int producer_regs)
{
    return producer_regs == 0 || (bwd_wgmma_has_producer(block_n, num_warps, head_dim) && producer_regs >= 24);
}

/* The tiles DQ_MODE ordered runs fastest with: two consumers beside a producer warpgroup,
 * whose dQ warp waits for the turns off the consumers' path, at most two stages (shared
 * memory): with the consumers alone, waiting for the turns themselves, ordered ran far slower
 * beside the atomic kernels (notes/kernels.md, the ordered dQ, 2026-11-25). */
FT_TRAIT void bwd_wgmma_repeatable_tiles(int head_dim, int *block_n, int *num_warps, int *num_stages)
{
    *block_n = bwd_wgmma_wide_head(head_dim) ? 64 : 128;
    *num_warps = 12;
    if (*num_stages > 2)
        *num_stages = 2;
}

/* The default tiles for the head dims: the family's defaults (64 x 128, 8 warps, the consumers
 * alone) at 64 and 128; head dim 96 beside 96 or 128 adds a producer (12 warps: faster there, and
 * with 64, and at 128 alone, ptxas spills a few bytes in some variants; notes/kernels.md);
 * head dims 192 and 256 take their only shape, 64 keys and two consumers splitting the columns
 * beside a producer. Both with two stages (what fits). */
FT_TRAIT void bwd_wgmma_head_dim_tiles(int head_dim, int head_dim_v, int *block_n, int *num_warps, int *num_stages)
{
    const int split = bwd_wgmma_wide_head(head_dim);   /* the columns split, 64 keys */
    const int d96 = (head_dim == 96 || head_dim_v == 96) && head_dim != 64 && head_dim_v != 64;
    if (!split && !d96)
        return;
    *block_n = split ? 64 : 128;
    *num_warps = 12;
    if (*num_stages > 2)
        *num_stages = 2;
}

/* 1 where DQ_FIRST, DK_SS and DV_EARLY may change a tile's products: the consumers beside a
 * producer warpgroup, the keys split between them (not the columns). By default dV and dK are
 * issued once dS^T is made (A from registers), before the dS^T meeting, and dQ after it.
 * - DV_EARLY issues dV as soon as P^T is made, before dP^T is waited for: the tensor cores get it
 *   while dS^T is computed, and the exponentials stay ahead of that wait (ptxas otherwise sinks
 *   them below it, so they no longer overlap dP^T's product).
 * - DQ_FIRST issues dQ, then dK, after the meeting: dQ's accumulators are ready a product earlier
 *   and go to shared memory while dK runs, where otherwise the tensor cores stand idle while both
 *   warpgroups, in step since the meeting, store them (FlashAttention-3's order).
 * - DK_SS has dK read dS^T from the shared tile dQ reads (after the meeting), so its packed
 *   registers need not live across it. */
FT_TRAIT int bwd_wgmma_may_reorder(int block_n, int num_warps, int head_dim)
{
    return bwd_wgmma_has_producer(block_n, num_warps, head_dim) && !bwd_wgmma_split_cols(head_dim, block_n);
}

/* The epilogue stages dK and dV in the dS^T tiles (beside a producer, the keys split, one share
 * of a group): both fit them, and they leave as whole rows, not as each thread's pairs. */
FT_TRAIT int bwd_wgmma_staged_epilogue(int block_n, int num_warps, int head_dim, int splits)
{
    return bwd_wgmma_has_producer(block_n, num_warps, head_dim) && !bwd_wgmma_split_cols(head_dim, block_n) &&
           !bwd_wgmma_wide_keys(head_dim, block_n) && splits == 1;
}

/* ... and the copy engine writes them from there, and loads each unit's K and V (the launcher
 * encodes k_map, v_map, dk_map and dv_map), a 64-column panel a box: not in a variable-length
 * batch, whose maps span every sequence's keys (a tile's rows past its sequence would be the next
 * one's, read and written). */
FT_TRAIT int bwd_wgmma_key_maps(int block_n, int num_warps, int head_dim, int splits, int varlen)
{
    return bwd_wgmma_staged_epilogue(block_n, num_warps, head_dim, splits) && !varlen;
}

/* PERSISTENT: as many blocks as fit the GPU at once each take every gridDim.x-th unit (a key
 * tile of a K/V head, or a share of one with SPLITS), so a block's start (its mbarriers, the first
 * query tiles' loads) is paid once and the next unit's K and V load under the last unit's dK and
 * dV stores. Where the consumers split the keys beside a producer, whose ring and dQ warp run on
 * across units; not DQ_MODE ordered, whose turns follow the order the blocks start in. */
FT_TRAIT int bwd_wgmma_may_persist(int block_n, int num_warps, int head_dim, int dq_mode)
{
    return bwd_wgmma_may_reorder(block_n, num_warps, head_dim) && dq_mode == FT_DQ_ATOMIC;
}

FT_TRAIT int bwd_wgmma_rule(int block_m, int block_n, int num_warps, int num_stages, int head_dim,
                            int head_dim_v, int dq_mode, int dq_first, int dk_ss, int dv_early, int persistent,
                            int l_early, int dq_init, int producer_regs, int stagger)
{
    const int split = bwd_wgmma_split_cols(head_dim, block_n), wide = bwd_wgmma_wide_keys(head_dim, block_n);
    /* 128 rows: S^T and dP^T of 128 queries fit beside dK and dV of head dims 64 only (ptxas
     * spilled at 96 over 64: notes/kernels.md). 80 rows (dQ transposed): at head dims 128 beside
     * a producer, whose dQ warp adds the tile by bulk reduce (atomic; the inline pipeline's
     * partial tile atomics are not written for dQ^T), L read late (L_EARLY's offsets would
     * take 40 more registers while both products are in flight), dK from registers (dS lies
     * query-major, not as DK_SS reads dS^T). */
    const int rows128 = block_m == 128 && block_n == 128 && head_dim == 64 && head_dim_v == 64;
    const int rows80 = block_m == 80 && block_n == 128 && num_warps == 12 && head_dim == 128 && head_dim_v == 128 &&
                       dq_mode == FT_DQ_ATOMIC && !l_early && !dk_ss;
    if (block_m != 64 && !rows128 && !rows80)
        return BWD_WGMMA_BAD_BLOCK_M;
    if (split ? (head_dim != 192 && head_dim != 256) || (head_dim_v != head_dim && head_dim_v != 128)
        : wide  ? head_dim_v != 128
              : (head_dim != 64 && head_dim != 96 && head_dim != 128) ||
                    (head_dim_v != 64 && head_dim_v != 96 && head_dim_v != 128))
        return BWD_WGMMA_BAD_HEAD_DIM;
    if (block_n != 64 && (split || block_n != 128))
        return BWD_WGMMA_BAD_BLOCK_N;
    const int producer = bwd_wgmma_has_producer(block_n, num_warps, head_dim);
    if (split || wide ? !producer : num_warps != block_n / 16 && !producer)
        return BWD_WGMMA_BAD_WARPS;
    if (num_stages < 1 || num_stages > 3)
        return BWD_WGMMA_BAD_STAGES;
    if (dq_mode != FT_DQ_ATOMIC && dq_mode != FT_DQ_ORDERED)
        return BWD_WGMMA_BAD_DQ_MODE;
    if (bwd_wgmma_smem_bytes(block_m, block_n, num_warps, head_dim, head_dim_v, num_stages) > FT_SMEM_MAX_BYTES)
        return BWD_WGMMA_BAD_SMEM;
    if (!bwd_wgmma_producer_regs_ok(block_n, num_warps, head_dim, producer_regs))
        return BWD_WGMMA_BAD_PRODUCER_REGS;
    /* The register split a space sets is held to the same estimate as the default's. */
    if (bwd_wgmma_regs(block_m, block_n, num_warps, head_dim, head_dim_v) >
        bwd_wgmma_consumer_regs(block_n, num_warps, head_dim, 0, producer_regs))
        return BWD_WGMMA_BAD_REGISTERS;
    if ((dq_first || dk_ss || dv_early) && !bwd_wgmma_may_reorder(block_n, num_warps, head_dim))
        return BWD_WGMMA_BAD_ORDER;
    if (persistent && !bwd_wgmma_may_persist(block_n, num_warps, head_dim, dq_mode))
        return BWD_WGMMA_BAD_PERSISTENT;
    if (l_early && split)   /* split_gradients reads L as it goes */
        return BWD_WGMMA_BAD_L_EARLY;
    /* The first share's store and the others' wait for it are the dQ warp's (add_unit_dq); the
     * consumers' own adds (inline) stay on the zeroed accumulator. */
    if (dq_init == FT_DQ_INIT_STORE && !bwd_wgmma_has_producer(block_n, num_warps, head_dim))
        return BWD_WGMMA_BAD_DQ_INIT;
    if (dq_init != FT_DQ_INIT_ZERO && dq_init != FT_DQ_INIT_STORE)
        return BWD_WGMMA_BAD_DQ_INIT;
    /* A staggered walk with the ordered turns (each query tile's key tiles from the highest down)
     * would have each block wait at its first tiles for blocks that have not reached them. */
    if (stagger && dq_mode != FT_DQ_ATOMIC)
        return BWD_WGMMA_BAD_STAGGER;
    return BWD_WGMMA_OK;
}

#endif
