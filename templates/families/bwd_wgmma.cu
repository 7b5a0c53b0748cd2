// families/bwd_wgmma.cu: FlashAttention backward on Hopper's warpgroup tensor cores (f16/bf16,
// wgmma.mma_async, sm_90a only). Entries: ft_bwd_preprocess (delta = rowsum(dO*O)), ft_bwd_dkdv
// (one block per key tile of a K/V head: dK, dV over the query heads that read it, one head
// after another, and dQ added into dq_accum) and ft_bwd_dq_convert (dq = softmax_scale *
// dq_accum).
//
// Design (ft_bwd_dkdv). K and V of the key tile stay in shared memory as 128-byte-swizzled
// panels (arch/sm90.cuh); Q, dO, L and delta of each query tile (BLOCK_M = 64 rows, or 128 at
// head dim 64 beside two consumers, or 80 at head dim 128 with dQ transposed) stream through a NUM_STAGES-deep ring: Q and dO by the copy engine (TMA, one thread issuing, the tensor maps
// the launcher encodes in ft_bwd_args, landing swizzled, completing on the slot's mbarrier).
// Consumer warpgroup w owns keys 64w..64w+63 of the tile and, per query tile:
//   S^T = K_w Q^T, dP^T = V_w dO^T      SS-wgmma, M = 64 keys, N = BLOCK_M queries, both issued
//                                       before either is waited on
//   P^T = exp(S^T scale - L)            in registers (L in natural log, folded into exp2)
//   dS^T = P^T (dP^T - delta)
//   dV_w += P^T dO, dK_w += dS^T Q      RS-wgmma: a 64xN accumulator is, packed to 16-bit
//                                       pairs, the A registers of the next product
//   dS^T to shared memory, then dQ[:, cols w] = dS K[:, cols w]: SS-wgmma reading dS^T as an
//                                       M-major (transposed) A and K as an N-major B (dS K
//                                       unscaled); with 80-row tiles (M = 80 is no multiple
//                                       of 64) dQ^T[cols w, :] = K^T dS^T, the same operands
//                                       swapped (DQ_TRANSPOSED)
//   dQ into dq_accum                    the accumulators go to a shared-memory tile in the
//                                       order the threads hold them (16 bytes a thread, so no
//                                       bank conflicts), and one thread hands the whole tile to
//                                       the copy engine's bulk fp32 reduce-add. dq_accum's full
//                                       query tiles are thus in thread order
//                                       (ft_bwd_dq_convert undoes it); a last partial tile is
//                                       row-major, its rows past seqlen_q not existing.
// Two pipelines, chosen by NUM_WARPS (traits/bwd_wgmma.h):
//   inline (NUM_WARPS = BLOCK_N / 16): the consumers load too. Thread 0 issues the TMA and the
//     dQ reduce between the tile's block barriers; L and delta come by cp.async; the partial
//     tile's dQ is added by atomics.
//   producer (one more warpgroup, warpgroup 0): its warps 0 and 2 fill the ring (warp 0's lane 0
//     has the copy engine bring Q and dO, warp 2's lanes write L (as -L log2(e): l_scaled) and
//     delta) as slots come free (each slot's empty
//     mbarrier), and its warp 1 adds each dQ tile (every tile by bulk reduce, the partial one too) from two shared-memory
//     dQ tiles, so neither the loads nor the hand-off of dQ (or its turn, DQ_MODE ordered) ever
//     stops a consumer; dS^T is double-buffered, and the consumers meet once a tile, at the dS^T
//     exchange. The registers move to the consumers (setmaxnreg: the producer keeps 24, or 32
//     walking a packed batch, or what PRODUCER_REGS says: bwd_wgmma_producer_regs).
// dK is scaled by softmax_scale at the end. Queries past seqlen_q load as zeros with L = +inf,
// so P = 0 there; keys past seqlen_k and outside the band get P = 0 by the per-element mask.
// Variable-length batches (VARLEN): the block's sequence (seq_of) gives its lengths, band and
// first rows; a key tile past its sequence's keys returns at once. Q and dO rows past the
// sequence's end load as the next sequence's (the maps span the packed rows), and still count
// for nothing: their L reads as +inf and delta as 0, as past seqlen_q, so P = dS = 0; only query
// tiles wholly inside the sequence take the full-tile bulk reduce. No TMA store is used.
// DQ_MODE ordered (bitwise repeatable): each query tile's reduce waits its turn, key tiles from
// the highest down (await_turn, pass_turn below).

// ---- traits (traits/bwd_wgmma.h): tunables come from the generator's #defines ---------------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr bool ORDERED = DQ_MODE == FT_DQ_ORDERED;   // dQ added in a fixed order (bitwise repeatable)
// dq_accum not zeroed: a query tile's first dQ share is stored, the others added after it (add_unit_dq).
constexpr bool STORE_FIRST = DQ_INIT == FT_DQ_INIT_STORE;
// The order of a tile's products in dkdv_consumer (traits: bwd_wgmma_may_reorder): dV issued once
// dS^T is made or (DV_EARLY) once P^T is; dK issued after dV before the dS^T meeting, or after
// it (LATE_DK), from registers or (DK_SS) from the dS^T tile, and before dQ or (DQ_FIRST) after it.
constexpr bool LATE_DK = DQ_FIRST || DK_SS;
// Head dims 192 and 256: two consumers share the tile's 64 keys and split the columns (see
// dkdv_split); or at 192 over 128 with 128 keys (WIDE_KEYS, traits: bwd_wgmma_wide_keys) each
// takes 64 of them as below 192, issuing S^T and dP^T one after the other, making dS from P's
// packed pairs (tile_gradients) and, the second, its 128 columns of dQ a panel at a time.
constexpr bool SPLIT_COLS = bwd_wgmma_split_cols(HEAD_DIM, BLOCK_N);
constexpr bool WIDE_KEYS = bwd_wgmma_wide_keys(HEAD_DIM, BLOCK_N);
// K, V in and (the staged epilogue) dK, dV out by the copy engine (k_map, v_map, dk_map, dv_map).
constexpr bool KEY_MAPS = bwd_wgmma_key_maps(BLOCK_N, NUM_WARPS, HEAD_DIM, SPLITS, VARLEN);
// With the columns split: a tile's dQ goes into its ring slot (equal head dims), or (192 over 128)
// into a dQ tile of its own.
constexpr bool DQ_IN_SLOT = bwd_wgmma_dq_in_slot(HEAD_DIM, HEAD_DIM_V);
constexpr int NUM_WG = bwd_wgmma_consumers(BLOCK_N, HEAD_DIM);  // consumer warpgroups: 64 keys each, or the columns split
constexpr bool PRODUCER = bwd_wgmma_has_producer(BLOCK_N, NUM_WARPS, HEAD_DIM);   // warpgroup 0 loads and adds dQ
constexpr int CONSUMER_THREADS = NUM_WG * 128;
constexpr int BUFFERS = bwd_wgmma_buffers(BLOCK_N, NUM_WARPS, HEAD_DIM);          // dS^T tiles
// dQ tiles in shared memory, and the tiles the dQ warp adds from: the ring slots themselves
// (DQ_IN_SLOT: a tile's dQ replaces its Q and dO), else DQ_TILES tiles of their own.
constexpr int DQ_TILES = bwd_wgmma_dq_tiles(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V);
constexpr int DQ_SOURCES = DQ_IN_SLOT ? NUM_STAGES : DQ_TILES;
// dQ columns of warpgroup 0 (from column 0) and of the last (from column 64 when there are two).
// Both compute DQ_N: at head dim 96 the second's last 32 columns read K's unused panel half
// and are dropped (the product takes as long as the first warpgroup's, which it waits for anyway).
// With the columns split each computes its own (dkdv_split: at head dim 192 the second's 128).
constexpr int DQ_COLS0 = bwd_wgmma_dq_cols(BLOCK_M, HEAD_DIM, NUM_WG, 0);
constexpr int DQ_COLS1 = bwd_wgmma_dq_cols(BLOCK_M, HEAD_DIM, NUM_WG, NUM_WG - 1);
constexpr int DQ_N = DQ_COLS0;   // the consumers of dkdv_inline and dkdv_consumer
// 80-row query tiles: each consumer makes dQ^T for its DQ_COLS0 columns (rows of the product),
// BLOCK_M queries wide; its accumulators then hold BLOCK_M / 2 a thread (traits: bwd_wgmma_dq_transposed).
constexpr bool DQ_TRANSPOSED = bwd_wgmma_dq_transposed(BLOCK_M);
constexpr int DQ_REGS = DQ_TRANSPOSED ? BLOCK_M / 2 : DQ_N / 2;
// Head dim 64 with two warpgroups: each makes all of dQ over its own 64 keys, and the second's
// half goes through shared memory to the first, which adds it and writes the tile alone.
constexpr bool DQ_SPLIT_KEYS = bwd_wgmma_dq_split_keys(BLOCK_M, HEAD_DIM, NUM_WG);
// 128-row query tiles: each of the two consumers makes dQ for its 64 rows, all the columns, over
// all the keys (its panel of dS^T), and writes them as its region of the tile.
constexpr bool DQ_SPLIT_ROWS = bwd_wgmma_dq_split_rows(BLOCK_M);
constexpr int DQ_REGIONS = DQ_SPLIT_KEYS ? 1 : NUM_WG;   // warpgroups writing (columns or rows of) a dQ tile
constexpr int DQ_STEPS = DQ_SPLIT_KEYS ? 4 : BLOCK_N / 16;   // k-steps of dQ = dS K over keys
constexpr int S_REGS = BLOCK_M / 2;             // fp32 S^T (and dP^T) accumulators per thread
// The dK (Q) and dV (dO) columns of consumer w, and the first of them: all, or with the columns
// split its panels (bwd_wgmma_split_first: the first's, then the second's).
FT_DEVICE constexpr int split_share(int cols, int w)
{
    return !SPLIT_COLS ? cols : w == 0 ? bwd_wgmma_split_first(cols) : cols - bwd_wgmma_split_first(cols);
}
FT_DEVICE constexpr int dk_cols(int w) { return split_share(HEAD_DIM, w); }
FT_DEVICE constexpr int dv_cols(int w) { return split_share(HEAD_DIM_V, w); }
FT_DEVICE constexpr int dk_col0(int w) { return SPLIT_COLS && w == 1 ? dk_cols(0) : 0; }
FT_DEVICE constexpr int dv_col0(int w) { return SPLIT_COLS && w == 1 ? dv_cols(0) : 0; }
constexpr int DK_REGS = dk_cols(0) / 2;   // the consumers of dkdv_inline and dkdv_consumer
constexpr int DV_REGS = dv_cols(0) / 2;
constexpr int M_STEPS = BLOCK_M / 16;           // k-steps over the queries (dV, dK)
// Shared memory: 1024 bytes of alignment slack, K and V, NUM_STAGES x (Q, dO, then L, delta and
// the slot's mbarriers in LD_BYTES), BUFFERS x dS^T (BLOCK_N rows of BLOCK_M queries: a 128-byte
// panel for each 64 of them; DQ_TRANSPOSED: dS, BLOCK_M rows of a panel per 64 keys,
// ds_query_major_base), DQ_TILES x the fp32 dQ tile, and (DQ_SPLIT_KEYS) the second
// warpgroup's dQ half or (SPLIT_COLS) the fp32 P^T tile on its way to the second warpgroup.
// Tiles take whole 64-column panels: at head dim 96 the second panel's last 32 columns hold
// zeros (Q, dO: the copy engine fills what lies past the tensor) or nothing (K, V), and no
// product reads them: the k-steps stop at the head dim, and N = 96 products end there.
constexpr int D_PANELS = ft_panel_cols(HEAD_DIM) / 64, DV_PANELS = ft_panel_cols(HEAD_DIM_V) / 64;
constexpr int Q_BYTES = BLOCK_M * D_PANELS * 128;
constexpr int DO_BYTES = BLOCK_M * DV_PANELS * 128;
constexpr int K_BYTES = BLOCK_N * D_PANELS * 128;
constexpr int V_BYTES = BLOCK_N * DV_PANELS * 128;
constexpr int LD_BYTES = bwd_wgmma_ld_bytes(BLOCK_M);
constexpr int STAGE_BYTES = Q_BYTES + DO_BYTES + LD_BYTES;
constexpr int DS_BYTES = bwd_wgmma_ds_bytes(BLOCK_M, BLOCK_N);
constexpr int DQ_TILE_BYTES = BLOCK_M * HEAD_DIM * 4;
constexpr int P_TILE_BYTES = SPLIT_COLS ? BLOCK_N * BLOCK_M * 4 : 0;
constexpr int SMEM_END = 1024 + K_BYTES + V_BYTES + NUM_STAGES * STAGE_BYTES + BUFFERS * DS_BYTES +
                         DQ_TILES * DQ_TILE_BYTES + (DQ_SPLIT_KEYS ? DQ_TILE_BYTES : 0) + P_TILE_BYTES;
// A stage's panels: Q's, then dO's; with dQ going into the slot (DQ_IN_SLOT), consumer w's
// together (the first's FIRST_PANELS of Q, then of dO; then the second's of Q, then of dO), so
// that its dQ region (thread order, as large as those panels) can replace exactly the panels
// only it reads once S^T and dP^T are done.
constexpr int PANEL_BYTES = BLOCK_M * 128;
constexpr int FIRST_PANELS = bwd_wgmma_split_first(HEAD_DIM) / 64;
FT_DEVICE constexpr unsigned q_panel(int p)
{
    return (!DQ_IN_SLOT || p < FIRST_PANELS ? p : FIRST_PANELS + p) * PANEL_BYTES;
}
FT_DEVICE constexpr unsigned do_panel(int p)
{
    return !DQ_IN_SLOT ? Q_BYTES + p * PANEL_BYTES : (p < FIRST_PANELS ? FIRST_PANELS + p : D_PANELS + p) * PANEL_BYTES;
}
// In a slot's L/delta block, past L and delta: the slot's full and empty mbarriers; slot 0's
// block also holds the ticket (DQ_MODE ordered), the dQ sources' full and the dQ tiles' empty
// mbarriers, and (SPLIT_COLS) those of the P^T and dS^T hand-offs.
constexpr int BAR_FULL = BLOCK_M * 8, BAR_EMPTY = BAR_FULL + 8, TICKET = BAR_FULL + 16, BAR_DQ = BAR_FULL + 24;
constexpr int BAR_P = BAR_DQ + 8 * (DQ_SOURCES + DQ_TILES), BAR_DS = BAR_P + 8, BAR_MEET = BAR_DS + 8;
// PERSISTENT: the next units' indices (two slots) and their full and empty mbarriers
// (publish_next_unit).
constexpr int BAR_UNIT = BAR_MEET + 8, UNIT_SLOTS = 2, UNIT_IDX = BAR_UNIT + 16 * UNIT_SLOTS;
// KEY_MAPS: the mbarrier a unit's K and V complete on.
constexpr int BAR_KEYS = UNIT_IDX + 4 * UNIT_SLOTS;
// PERSISTENT with VARLEN, the packed walk (traits/ft_packed.h): the block's first unit, the heads
// walked together (order_heads) and where the producer is in the walk (an ft_packed_cursor)
// between the units it takes (packed_unit).
constexpr bool PACKED_WALK = PERSISTENT && VARLEN;
constexpr int FIRST_UNIT = BAR_KEYS + 8, PACKED_GROUP = FIRST_UNIT + 4, PACKED_CURSOR = PACKED_GROUP + 4;
// With a producer the registers move to the consumers (setmaxnreg): the producer keeps what
// traits/bwd_wgmma.h gives it (the tunable PRODUCER_REGS, or more on the packed walk) and the
// consumers the rest, with MIN_BLOCKS blocks an SM.
constexpr int PRODUCER_NREG = bwd_wgmma_producer_regs(HEAD_DIM, PACKED_WALK, PRODUCER_REGS);
constexpr int CONSUMER_NREG = bwd_wgmma_consumer_regs(BLOCK_N, NUM_WARPS, HEAD_DIM, PACKED_WALK, PRODUCER_REGS);
constexpr int MIN_BLOCKS = bwd_wgmma_min_blocks(BLOCK_N, NUM_WARPS, HEAD_DIM);

constexpr int RULE = bwd_wgmma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V, DQ_MODE, DQ_FIRST,
                                    DK_SS, DV_EARLY, PERSISTENT, L_EARLY, DQ_INIT, PRODUCER_REGS, STAGGER);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16, "DTYPE: bwd_wgmma takes f16 or bf16");
static_assert(RULE != BWD_WGMMA_BAD_WARPS, "NUM_WARPS must be BLOCK_N/16 (consumers only) or BLOCK_N/16 + 4 (and a "
                                          "producer warpgroup); 12 at head dims 192 and 256");
static_assert(RULE != BWD_WGMMA_BAD_BLOCK_M, "BLOCK_M must be 64, or 128 with BLOCK_N 128 at head dims 64, or 80 "
                                            "with BLOCK_N 128, 12 warps, DQ_MODE atomic, L_EARLY 0 and DK_SS 0 at head "
                                            "dims 128");
static_assert(RULE != BWD_WGMMA_BAD_BLOCK_N, "BLOCK_N must be 64 or 128 (64 keys a consumer warpgroup); 64 at head dims 192 and 256");
static_assert(RULE != BWD_WGMMA_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be 64, 96 or 128; or HEAD_DIM 192 or 256 "
                                             "with HEAD_DIM_V 128 or the same");
static_assert(RULE != BWD_WGMMA_BAD_STAGES, "NUM_STAGES must be 1..3");
static_assert(RULE != BWD_WGMMA_BAD_DQ_MODE, "DQ_MODE must be atomic or ordered");
static_assert(RULE != BWD_WGMMA_BAD_SMEM, "shared memory over the limit: lower NUM_STAGES");
static_assert(RULE != BWD_WGMMA_BAD_REGISTERS, "head dims: accumulators would spill");
static_assert(RULE != BWD_WGMMA_BAD_ORDER,
              "DQ_FIRST, DK_SS and DV_EARLY 1 need a producer warpgroup and the keys split (dkdv_consumer)");
static_assert(RULE != BWD_WGMMA_BAD_PERSISTENT,
              "PERSISTENT 1 needs a producer warpgroup, the keys split (dkdv_consumer) and DQ_MODE atomic");
static_assert(RULE != BWD_WGMMA_BAD_L_EARLY, "L_EARLY 1 needs the keys split (tile_gradients)");
static_assert(RULE != BWD_WGMMA_BAD_DQ_INIT, "DQ_INIT store needs a producer warpgroup (add_unit_dq)");
static_assert(RULE != BWD_WGMMA_BAD_PRODUCER_REGS, "PRODUCER_REGS must be 0, or at least 24 beside a producer");
static_assert(RULE != BWD_WGMMA_BAD_STAGGER, "STAGGER 1 needs DQ_MODE atomic");
static_assert(PACKED_CURSOR + (int)sizeof(ft_packed_cursor) <= LD_BYTES && BAR_KEYS % 8 == 0,
              "L, delta, the mbarriers, the ticket and the units fit LD_BYTES");
static_assert(DQ_TILE_BYTES == (DQ_TRANSPOSED ? 128 * 4 * DQ_REGS * DQ_REGIONS
                                              : 128 * 4 * (DQ_COLS0 + (DQ_REGIONS == 2 ? DQ_COLS1 : 0)) / 2),
              "a dQ tile is every thread's accumulators");
static_assert(NUM_THREADS == CONSUMER_THREADS + (PRODUCER ? 128 : 0), "warps: consumers and the producer");

static_assert(SMEM_END == FT_SMEM_BYTES_ft_bwd_dkdv, "shared memory: ft_bwd_dkdv's layout differs from traits/bwd_wgmma.h");
// SPLITS > 1: the query heads of a K/V group are shared out over SPLITS blocks of a key tile,
// each walking group / SPLITS of them and writing fp32 partial dK, dV that ft_bwd_dkdv_reduce
// sums in a fixed order. With DQ_MODE ordered the tickets deal a key tile's shares one after
// another; a query head's turns stay among its own share's blocks. Not with VARLEN (the
// partials' rows are a dense batch's).
static_assert(SPLITS == 1 || !VARLEN, "SPLITS > 1 needs VARLEN 0");
static_assert(!PACKED_WALK || bwd_wgmma_packed_walk(BLOCK_M), "PERSISTENT 1 with VARLEN 1 needs BLOCK_M 64");

// ---- ft_bwd_preprocess: delta = rowsum(dO * O) (common/ft_bwd_steps.cuh) -------------------
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_preprocess(const ft_bwd_args args)
{
    bwd_preprocess_rows<NUM_THREADS, BLOCK_M, HEAD_DIM_V, V_DATA, EVEN_M>(args);
}

// ---- ft_bwd_dkdv -----------------------------------------------------------------------------
// The semaphores of query row `row` (of batch * heads): one a query tile (DQ_MODE ordered: its
// turn; DQ_INIT store: its key tiles so far), FT_DQ_SEM_ROWS rows apart over the longest length.
FT_DEVICE int *query_sems(const ft_bwd_args &a, long long row)
{
    return a.dq_sems + row * ((a.seqlen_q + FT_DQ_SEM_ROWS - 1) / FT_DQ_SEM_ROWS);
}
// DQ_INIT store, atomic: added to a query tile's count once its first share has landed.
constexpr int STORED = 1 << 30;   // above any count of key tiles

// What a block works on and where its shared memory lies (both pipelines). Only what the block
// chose lives here; whatever follows from the arguments is read from them where it is needed
// (they stay in the constant bank: no registers for them across the loop).
struct dkdv_block {
    unsigned k_smem;          // K, then V, the ring, the dS^T tiles, the dQ tiles (SMEM_END)
    unsigned char *base;      // the generic address of k_smem
    int key_tile, bh, b, h;   // bh counts batch * heads_k: h is a K/V head
    int part;                 // SPLITS > 1: which share of the group's query heads (else 0)
    int group;                // query heads it walks (kv_group / SPLITS), from query head (h * SPLITS + part) * group on
    int n0, keys_in;          // the tile's first key; keys of it in range (may exceed BLOCK_N)
    int mt_begin, m_tiles;    // the query tiles that see this key tile (maybe none), in each head
#if STAGGER
    int mt_start;             // where its walk starts in each head (describe_block)
#endif
    int up_begin, up_end;     // DQ_MODE ordered: the query tiles the next key tile up sees
#if VARLEN
    ft_seq sq;                // the sequence (seq_of): its prefix sums lie in global memory
#endif

    // The sequence's lengths, band and first rows of Q (dO) and K (V): the held ones (VARLEN),
    // else the argument block's, read where used as before (seq_of's dense values; built whole
    // there, an ft_seq changed the dense SASS).
#if VARLEN
    FT_DEVICE int seqlen_q(const ft_bwd_args &) const { return sq.seqlen_q; }
    FT_DEVICE int seqlen_k(const ft_bwd_args &) const { return sq.seqlen_k; }
    FT_DEVICE int lo(const ft_bwd_args &) const { return sq.lo; }
    FT_DEVICE int hi(const ft_bwd_args &) const { return sq.hi; }
    FT_DEVICE int q0() const { return sq.q0; }
    FT_DEVICE int k0() const { return sq.k0; }
#else
    FT_DEVICE int seqlen_q(const ft_bwd_args &a) const { return a.seqlen_q; }
    FT_DEVICE int seqlen_k(const ft_bwd_args &a) const { return a.seqlen_k; }
    FT_DEVICE int lo(const ft_bwd_args &a) const { return a.mask_lo; }
    FT_DEVICE int hi(const ft_bwd_args &a) const { return a.mask_hi; }
    FT_DEVICE int q0() const { return 0; }
    FT_DEVICE int k0() const { return 0; }
#endif

    FT_DEVICE unsigned v_smem() const { return k_smem + K_BYTES; }
    FT_DEVICE unsigned slot(int st) const { return k_smem + K_BYTES + V_BYTES + st * STAGE_BYTES; }
    FT_DEVICE unsigned ds_smem(int buf) const { return slot(NUM_STAGES) + buf * DS_BYTES; }
    FT_DEVICE unsigned dq_smem(int buf) const { return ds_smem(BUFFERS) + buf * DQ_TILE_BYTES; }
    FT_DEVICE unsigned dq_half() const { return dq_smem(DQ_TILES); }   // DQ_SPLIT_KEYS
    FT_DEVICE unsigned p_tile() const { return dq_smem(DQ_TILES); }    // SPLIT_COLS
    // The tile the dQ warp adds from for query tile i of the block: its own, or its ring slot.
    FT_DEVICE unsigned dq_source(int i) const { return DQ_IN_SLOT ? slot(i % NUM_STAGES) : dq_smem(i % DQ_TILES); }
    FT_DEVICE unsigned char *generic(unsigned smem) const { return base + (smem - k_smem); }
    FT_DEVICE unsigned ld_block(int st) const { return slot(st) + Q_BYTES + DO_BYTES; }
    FT_DEVICE float *ld(int st) const { return (float *)generic(ld_block(st)); }   // L, then delta
    FT_DEVICE unsigned full_bar(int st) const { return ld_block(st) + BAR_FULL; }
    FT_DEVICE unsigned empty_bar(int st) const { return ld_block(st) + BAR_EMPTY; }
    FT_DEVICE int *ticket() const { return (int *)generic(ld_block(0) + TICKET); }
    FT_DEVICE unsigned dq_full_bar(int src) const { return ld_block(0) + BAR_DQ + 8 * src; }
    FT_DEVICE unsigned dq_empty_bar(int buf) const { return ld_block(0) + BAR_DQ + 8 * DQ_SOURCES + 8 * buf; }
    FT_DEVICE unsigned p_full_bar() const { return ld_block(0) + BAR_P; }
    FT_DEVICE unsigned ds_full_bar() const { return ld_block(0) + BAR_DS; }
    FT_DEVICE unsigned meet_bar() const { return ld_block(0) + BAR_MEET; }
    FT_DEVICE unsigned unit_full_bar(int sl) const { return ld_block(0) + BAR_UNIT + 8 * sl; }
    FT_DEVICE unsigned unit_empty_bar(int sl) const { return ld_block(0) + BAR_UNIT + 8 * (UNIT_SLOTS + sl); }
    FT_DEVICE int *unit_idx(int sl) const { return (int *)generic(ld_block(0) + UNIT_IDX) + sl; }
    FT_DEVICE unsigned keys_bar() const { return ld_block(0) + BAR_KEYS; }
    FT_DEVICE int *first_unit_idx() const { return (int *)generic(ld_block(0) + FIRST_UNIT); }
    FT_DEVICE int *packed_group() const { return (int *)generic(ld_block(0) + PACKED_GROUP); }
    FT_DEVICE ft_packed_cursor *cursor() const { return (ft_packed_cursor *)generic(ld_block(0) + PACKED_CURSOR); }

    // The walk: every query tile of the range in each query head of the group (group_step), from
    // the first step on; in each head from walk_start(), round the range (STAGGER: see
    // describe_block).
    FT_DEVICE int steps() const { return (m_tiles - mt_begin) * group; }
#if STAGGER
    FT_DEVICE int walk_start() const { return mt_start; }
    FT_DEVICE void advance(group_step &s) const
    {
        if (++s.mt == m_tiles)
            s.mt = mt_begin;
        if (s.mt == mt_start)
            ++s.head;
    }
#else
    FT_DEVICE int walk_start() const { return mt_begin; }
    FT_DEVICE void advance(group_step &s) const { s.next(mt_begin, m_tiles); }
#endif
    FT_DEVICE group_step first_step() const { return { 0, walk_start() }; }
    // The group's query head `head`: its rows of L, delta and dq_accum, and (DQ_MODE ordered) its
    // query tiles' turns.
    FT_DEVICE long long q_row(int head) const   // of batch * heads
    {
        return ((long long)bh * SPLITS + part) * group + head;
    }
    FT_DEVICE long long first_row(const ft_bwd_args &a, int head) const   // seq_row's (dense: as it was spelled)
    {
#if VARLEN
        return seq_row(a, sq, b, (h * SPLITS + part) * group + head, q_row(head));
#else
        return q_row(head) * a.seqlen_q;
#endif
    }
    // From one query head's rows of L, delta (and times HEAD_DIM dq_accum) to the next head's.
    FT_DEVICE int head_rows(const ft_bwd_args &a) const { return VARLEN ? a.total_q : a.seqlen_q; }
    FT_DEVICE const float *lse(const ft_bwd_args &a, int head) const
    {
        return (const float *)a.lse + first_row(a, head);
    }
    FT_DEVICE const float *delta(const ft_bwd_args &a, int head) const
    {
        return (const float *)a.delta + first_row(a, head);
    }
    FT_DEVICE float *dq_accum(const ft_bwd_args &a, int head) const
    {
        return (float *)a.dq_accum + first_row(a, head) * HEAD_DIM;
    }
    FT_DEVICE int *sems(const ft_bwd_args &a, int head) const { return query_sems(a, q_row(head)); }
};

// The thread's place in its consumer warpgroup cw: accumulator rows wrow, wrow + 8 (of 64;
// keys krow, krow + 8 of the tile), lane quad qd.
struct dkdv_thread {
    int cw, t, wrow, krow, qd;   // t: the thread's index among the consumers
};
FT_DEVICE dkdv_thread consumer_thread(int t)
{
    const int lane = t % 32;
    dkdv_thread th;
    th.cw = __shfl_sync(0xffffffffu, t / 128, 0);   // from lane 0: the compiler then knows it is the warp's
                                                     // (its products' descriptors go uniform)
    th.t = t;
    th.wrow = 16 * ((t / 32) % 4) + lane / 4;
    th.krow = (SPLIT_COLS ? 0 : 64 * th.cw) + th.wrow;
    th.qd = lane % 4;
    return th;
}

// DQ_MODE ordered: the key tiles that see a query tile are consecutive (the mask is a band),
// and they add its dQ from the highest down. Its semaphore holds 1 + the key tile that added
// last (0: none yet); this block's turn comes when it holds 1 + the next key tile up if that
// one sees the query tile, else 0 (this is the highest).
// With grouped heads, every key tile of a K/V head walks the group's query heads in the same
// order, and a query tile's turns involve the key tiles of its own K/V head only.
// sems: the semaphores of the step's query head (dkdv_block::sems).
FT_DEVICE void await_turn(const dkdv_block &blk, int *sems, int mt)
{
    sem_wait_value(sems + mt, blk.up_begin <= mt && mt < blk.up_end ? blk.key_tile + 2 : 0);
    fence_proxy_async_global();   // the adds before ours, then our bulk reduce
}
FT_DEVICE void pass_turn(const dkdv_block &blk, int *sems, int mt)   // after our adds to query tile mt
{
    fence_proxy_async_global();
    sem_release_value(sems + mt, blk.key_tile + 1);
}
FT_DEVICE void await_turn(const ft_bwd_args &args, const dkdv_block &blk, group_step s)
{
    await_turn(blk, blk.sems(args, s.head), s.mt);
}
FT_DEVICE void pass_turn(const ft_bwd_args &args, const dkdv_block &blk, group_step s)
{
    pass_turn(blk, blk.sems(args, s.head), s.mt);
}

// The mbarriers and (DQ_MODE ordered) the ticket, by thread 0; the caller's block barrier then
// makes them known. Inline: one full barrier a slot, armed by thread 0. Producer: a slot is full
// when its TMA bytes have landed, warp 0's lane 0 has armed it and warp 2's 32 lanes, loading L
// and delta, have arrived, and empty when every consumer thread has (DQ_IN_SLOT: when the thread adding
// the dQ written over it has read it); a dQ tile is full when every consumer thread has written
// it, and empty when the thread adding it has read it. SPLIT_COLS: P^T (dS^T) is in place when
// the first (second) consumer's 128 threads have arrived, and the consumers have met when all
// their threads have (consumers_meet).
FT_DEVICE void init_barriers(const dkdv_block &blk, int *dq_ticket)
{
    for (int st = 0; st < NUM_STAGES; st++) {
        mbar_init(blk.full_bar(st), PRODUCER ? 33 : 1);
        if (PRODUCER)
            mbar_init(blk.empty_bar(st), DQ_IN_SLOT ? 1 : CONSUMER_THREADS);
    }
    if (PRODUCER) {
        for (int src = 0; src < DQ_SOURCES; src++)
            mbar_init(blk.dq_full_bar(src), CONSUMER_THREADS);
        for (int buf = 0; buf < DQ_TILES; buf++)
            mbar_init(blk.dq_empty_bar(buf), 1);
    }
    for (int sl = 0; PERSISTENT && sl < UNIT_SLOTS; sl++) {
        mbar_init(blk.unit_full_bar(sl), 1);
        mbar_init(blk.unit_empty_bar(sl), CONSUMER_THREADS + 33);   // the consumers, the dQ warp's lane, warp 2
    }
    if (KEY_MAPS)
        mbar_init(blk.keys_bar(), 1);
    if (SPLIT_COLS) {
        mbar_init(blk.p_full_bar(), 128);
        mbar_init(blk.ds_full_bar(), 128);
        mbar_init(blk.meet_bar(), CONSUMER_THREADS);
    }
    mbar_init_fence();
    if (ORDERED)
        *blk.ticket() = atomicAdd(dq_ticket, 1);
}

// DQ_MODE ordered: tickets go to a group of heads in turn (the same key tile of each), then to
// the next key tile down. A key tile of a head then starts some blocks after the one above it,
// which has mostly added its dQ tiles by the time this one needs them; taken head by head, a
// head's key tiles would start together and each wait for all those above it (measured in
// notes/kernels.md, the ordered dQ). The group is as many heads (at most 8) as keep the Q and dO
// that all their key tiles stream within 16 MB of L2: past that, a larger group ran slower.
FT_DEVICE int order_heads(const ft_bwd_args &args)
{
    return l2_head_group((long long)args.seqlen_q * (HEAD_DIM + HEAD_DIM_V) * 2 * kv_group(args));
}

// The rest of the block's description, once the ticket is known. The key tile and head: the
// block's own (no mask); under a mask with a producer, its step of a heavy-first walk of its
// linear index; or, DQ_MODE ordered, taken in the order the blocks started (the ticket), key
// tiles descending within a head. A block then only ever waits for the next key tile up (see
// await_turn), which started before it: no block can wait on one that is not running.
// With SPLITS, grid.x holds SPLITS blocks a key tile: part is the block's share of the group
// (ordered: the shares of a key tile take consecutive tickets, so each still starts after the
// same share of the key tile above).
// PERSISTENT: as many blocks as fit the GPU at once (the launcher's grid.x) take the units (a key
// tile, or a share of one with SPLITS, of a K/V head of the launch's batch) in the order below:
// block b its first unit b, then each the next unit not yet taken, counted off a zeroed global
// int (the dQ ticket, which DQ_MODE atomic leaves unused), as the GPU starts the blocks of a grid.
// Under a mask that order runs heavy to light within a group of heads: a fixed share of it
// (every gridDim.x-th unit) gave the first blocks the heavy units of each round and ran slower
// than one block a unit (notes/kernels.md, persistent blocks). Else a block is one unit, its
// grid's. PACKED_WALK: the tickets are numbers of the packed batch's own walk (packed_unit), and a
// unit is passed on as its key tile and K/V head row (key_tile * kv_heads + bh; -1: none left).
FT_DEVICE int key_tiles(const ft_bwd_args &args)
{
    return PERSISTENT ? (args.seqlen_k + BLOCK_N - 1) / BLOCK_N : (int)gridDim.x / SPLITS;
}
FT_DEVICE int kv_heads(const ft_bwd_args &args)   // batch * heads_k
{
    return PERSISTENT ? args.batch * args.heads_k : (int)gridDim.y;
}
FT_DEVICE int unit_end(const ft_bwd_args &args) { return PERSISTENT ? key_tiles(args) * SPLITS * kv_heads(args) : 1; }
// The block's first unit: PACKED_WALK's lies in shared memory (the kernel decoded it), at
// packed_first (blk.first_unit_idx()). Passed the block itself, first_unit made 4 dense kernels
// spill (NVRTC, the same code otherwise).
FT_DEVICE int first_unit(const int *packed_first)
{
    if constexpr (PACKED_WALK)
        return *packed_first;
    return PERSISTENT ? (int)blockIdx.x : 0;
}
FT_DEVICE bool unit_in(const ft_bwd_args &args, int unit)   // a unit to work on (else the walk is over)
{
    return PACKED_WALK ? unit >= 0 : unit < unit_end(args);
}

// PACKED_WALK: unit number n of the packed batch's walk (traits/ft_packed.h, without pairs: the
// key tiles of the sequences with the most first, within a sequence a group of heads' tile 0, then
// tile 1, ...; under a top-left mask a sequence's low key tiles see the most query tiles, so that
// is heaviest first too) as key_tile * kv_heads + bh, or -1 past the last. One thread decodes for
// the block (the kernel's first unit, then the producer's: the walk scans the batch's lengths,
// which the consumers would pay on their path); the walk's cursor and group lie in shared memory.
FT_DEVICE int packed_unit(const ft_bwd_args &args, const dkdv_block &blk, int n)
{
    int seq, tile, head;
    if (!ft_packed_unit(blk.cursor(), args.cu_seqlens_k, args.batch, BLOCK_N, 0, args.heads_k, *blk.packed_group(), n,
                        &seq, &tile, &head))
        return -1;
    return tile * kv_heads(args) + seq * args.heads_k + head;
}

FT_DEVICE void block_tile(const dkdv_block &blk, const ft_bwd_args &args, int unit, int &key_tile, int &bh, int &part)
{
    part = 0;
    if (PACKED_WALK) {   // packed_unit's
        key_tile = unit / kv_heads(args);
        bh = unit % kv_heads(args);
    } else if (ORDERED) {
        const int key_tiles = (int)gridDim.x / SPLITS;
        int step;
        ft_schedule_grouped(*blk.ticket(), order_heads(args), key_tiles * SPLITS, (int)gridDim.y, &step, &bh);
        key_tile = key_tiles - 1 - step / SPLITS;
        part = step % SPLITS;
    } else if (CAUSAL && !VARLEN && PRODUCER) {
        // A mask's low key tiles see the most query tiles (top-left: tile 0 sees them all). Blocks
        // start roughly in the order of their linear index, and in grid order the last heads' heavy
        // tiles start last and run alone at the end. Walked as the tickets are (a group of heads'
        // tile 0, then tile 1, ...) but heavy first, the grid ends on light tiles instead
        // (dev/schedule-balance.py models both). Measured against grid order it won on every
        // causal tile with a producer and lost on two rows without one, so those keep grid
        // order (notes/kernels.md, a causal grid walked heavy first). (VARLEN keeps grid order:
        // past_keys takes the plain grid's unit.)
        int step;
        ft_schedule_grouped(PERSISTENT ? unit : ft_schedule_number(blockIdx.x, blockIdx.y, gridDim.x),
                            order_heads(args), key_tiles(args) * SPLITS, kv_heads(args), &step, &bh);
        key_tile = step / SPLITS;
        part = step % SPLITS;
    } else if (PERSISTENT) {   // as the grid's blocks start: a head's key tiles one after another
        ft_schedule_unit(unit, key_tiles(args) * SPLITS, SPLITS, &bh, &key_tile, &part);
    } else {
        ft_schedule_block(blockIdx.x, blockIdx.y, SPLITS, &bh, &key_tile, &part);
    }
}
// Then its sequence (VARLEN), its keys and the query tiles that see them. unit: PERSISTENT's
// (first_unit, then publish_next_unit's), else unused.
FT_DEVICE void describe_block(dkdv_block &blk, const ft_bwd_args &args, int unit)
{
    block_tile(blk, args, unit, blk.key_tile, blk.bh, blk.part);
    blk.b = blk.bh / args.heads_k;
    blk.h = blk.bh % args.heads_k;
#if VARLEN
    blk.sq = seq_of(args, blk.b);
#endif
    blk.group = kv_group(args) / SPLITS;
    blk.n0 = blk.key_tile * BLOCK_N;
    blk.keys_in = blk.seqlen_k(args) - blk.n0;
    const int lo = blk.lo(args), hi = blk.hi(args), nq = blk.seqlen_q(args), nk = blk.seqlen_k(args);
    query_tiles<BLOCK_M, BLOCK_N>(lo, hi, blk.n0, nq, nk, blk.mt_begin, blk.m_tiles);
    // STAGGER: key tile j of the sequence's n starts j/n of the way round its range, so that the
    // key tiles of a head, which would walk the same query tiles in step, add their dQ shares
    // into different tiles at once (and, storing the first share, seldom wait for one another).
#if STAGGER
    const int count = blk.m_tiles - blk.mt_begin, tiles_k = (nk + BLOCK_N - 1) / BLOCK_N;
    const bool in = count > 0 && blk.key_tile < tiles_k;   // (VARLEN: a block past its keys walks nothing)
    blk.mt_start = blk.mt_begin + (in ? (int)((long long)blk.key_tile * count / tiles_k) : 0);
#endif
    blk.up_begin = blk.up_end = 0;
    // The next key tile up exists (VARLEN: within the sequence's keys; the grid's are the longest's).
    if (ORDERED && (VARLEN ? blk.n0 + BLOCK_N < nk : blk.key_tile + 1 < (int)gridDim.x / SPLITS))
        query_tiles<BLOCK_M, BLOCK_N>(lo, hi, blk.n0 + BLOCK_N, nq, nk, blk.up_begin, blk.up_end);
}

// VARLEN: 1 when the block's key tile starts past its sequence's keys (the grid is sized by the
// longest sequence's). Such a block does nothing, and no other waits for it (describe_block).
FT_DEVICE bool past_keys(const ft_bwd_args &args, int key_tile, int bh)
{
    const int b = bh / args.heads_k;
    return key_tile * BLOCK_N >= args.cu_seqlens_k[b + 1] - args.cu_seqlens_k[b];
}

// K and V of the key tile into shared memory by `threads` threads (t: this one's index), with
// cp.async (committed; the caller waits).
template <int THREADS>
FT_DEVICE void load_key_tile(const ft_bwd_args &args, const dkdv_block &blk, int t)
{
    const int k0 = blk.k0();
    const elem_t *k = (const elem_t *)args.k + seq_offset(args.k_stride, blk.b, blk.h, k0) + blk.n0 * args.k_stride[2];
    const elem_t *v = (const elem_t *)args.v + seq_offset(args.v_stride, blk.b, blk.h, k0) + blk.n0 * args.v_stride[2];
    load_panels<BLOCK_N, HEAD_DIM, QK_DATA, EVEN_N, THREADS>(blk.k_smem, k, args.k_stride[2], blk.keys_in, t);
    load_panels<BLOCK_N, HEAD_DIM_V, V_DATA, EVEN_N, THREADS>(blk.v_smem(), v, args.v_stride[2], blk.keys_in, t);
    cp_async_commit();
}

// KEY_MAPS: the same by the copy engine (one thread issues it), completing on keys_bar; rows past
// seqlen_k arrive as zeros.
FT_DEVICE void copy_key_tile(const ft_bwd_args &args, const dkdv_block &blk)
{
    mbar_arrive_expect(blk.keys_bar(), K_BYTES + V_BYTES);
#pragma unroll
    for (int p = 0; p < D_PANELS; p++)
        tma_load_4d(blk.k_smem + p * (BLOCK_N * 128), &args.k_map, blk.keys_bar(), 64 * p, blk.n0, blk.h, blk.b);
#pragma unroll
    for (int p = 0; p < DV_PANELS; p++)
        tma_load_4d(blk.v_smem() + p * (BLOCK_N * 128), &args.v_map, blk.keys_bar(), 64 * p, blk.n0, blk.h, blk.b);
}

// Q and dO of step s's query tile into ring slot st by the copy engine (call from one thread):
// a 64-column panel a box, completing on the slot's full mbarrier, rows past seqlen_q as zeros
// (VARLEN: as the next sequence's rows, which L = +inf keeps out).
FT_DEVICE void issue_q_do(const ft_bwd_args &args, const dkdv_block &blk, group_step s, int st)
{
    const unsigned stage = blk.slot(st), bar = blk.full_bar(st);
    // (VARLEN ?: a call of q0() even returning 0 changed the dense SASS)
    const int m0 = s.mt * BLOCK_M + (VARLEN ? blk.q0() : 0), b = map_batch(blk.b);
    const int h = (blk.h * SPLITS + blk.part) * blk.group + s.head;
    mbar_arrive_expect(bar, Q_BYTES + DO_BYTES);
#pragma unroll
    for (int p = 0; p < D_PANELS; p++)
        tma_load_4d(stage + q_panel(p), &args.q_map, bar, 64 * p, m0, h, b);
#pragma unroll
    for (int p = 0; p < DV_PANELS; p++)
        tma_load_4d(stage + do_panel(p), &args.do_map, bar, 64 * p, m0, h, b);
}

// S^T = K Q^T (or, DO, dP^T = V dO^T) for the 64 keys at kv: 16 head-dim columns a step, 4 steps a
// 64-column panel (32 bytes of its rows each); Q and dO are the K-major B operands. Issued only
// (the caller fences, commits and waits).
template <int COLS, bool DO>
FT_DEVICE void transposed_scores(float (&acc)[S_REGS], unsigned kv, unsigned stage, bool from_acc = false)
{
    const unsigned first = DO ? do_panel(0) : q_panel(0);
    const unsigned long long a = wg_desc(kv, 16, 1024), b = wg_desc(stage + first, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < COLS / 16; kk++) {
        const unsigned col = (kk % 4) * 32, panel = DO ? do_panel(kk / 4) : q_panel(kk / 4);
        wg_ss<BLOCK_M, 0>::run(acc, wg_desc_add<!SPLIT_COLS>(a, (kk / 4) * (BLOCK_N * 128) + col),
                               wg_desc_add<!SPLIT_COLS>(b, panel - first + col), kk > 0 || from_acc);
    }
}

// L as the exponent's offset, -L log2(e); +inf (a row past the queries) becomes -inf, so P is
// still 0. The producer stores L so (once a row, for every consumer: 16 multiplies a tile less
// in each consumer thread); the inline pipeline's cp.async brings L as the forward wrote it, and
// l_offset scales a slot's value where it is read.
FT_DEVICE float l_scaled(float l)
{
    return -l * (float)FT_LOG2E;
}
FT_DEVICE float l_offset(float l_slot)
{
    return PRODUCER ? l_slot : l_scaled(l_slot);
}

// P^T = exp2(S^T * scale*log2e - L*log2e), in place. l_first: the thread's first pair of L, read
// by the caller (first_pair) before S^T's wait. Element s[4j+e]: key krow + 8*(e/2) of the
// tile, query m0 + 8j + 2qd + e%2. Masked: outside the band, or key past seqlen_k.
// offset_in: S^T's product started from -L/scale (offsets_to_acc), so only the scale is left.
FT_DEVICE void scores_to_p(float (&s)[S_REGS], const float *l_smem, bool offset_in, float2 l_first,
                           const ft_bwd_args &args, const dkdv_block &blk, const dkdv_thread &th, int m0,
                           float scale_log2)
{
    const int lo = blk.lo(args), hi = blk.hi(args);
#if SOFTCAP
    cap_scores<S_REGS>(s, args);
#endif
#pragma unroll
    for (int j = 0; j < BLOCK_M / 8; j++) {
        if (offset_in) {
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[4 * j + e] = fast_exp2(s[4 * j + e] * scale_log2);
            continue;
        }
        const float2 l2 = j == 0 ? l_first : *(const float2 *)(l_smem + 8 * j + 2 * th.qd);
        const float nl0 = l_offset(l2.x), nl1 = l_offset(l2.y);
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[4 * j + e] = fast_exp2(fmaf(s[4 * j + e], scale_log2, (e & 1) ? nl1 : nl0));
    }
    const bool diag = tile_needs_mask(lo, hi, m0, m0 + BLOCK_M, blk.n0, blk.n0 + BLOCK_N);
    const bool key_edge = !EVEN_N && blk.keys_in < BLOCK_N;
    if (diag || key_edge) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int key = th.krow + 8 * half;
            int q0 = 0, q1 = m0 + BLOCK_M;   // the queries that see the key
#if CAUSAL
            ft_mask_query_range(lo, hi, blk.n0 + key, blk.n0 + key + 1, blk.seqlen_q(args), &q0, &q1);
#endif
            if (!EVEN_N && key >= blk.keys_in)
                q1 = q0;
            mask_columns<BLOCK_M / 8>(s, half, q0 - m0 - 2 * th.qd, q1 - m0 - 2 * th.qd, 0.f);
        }
    }
}

// dS^T = P^T * (dP^T - delta[query]) (SOFTCAP: times the cap's slope, from P and L just before
// delta in the slot), in place of dP^T. d_first: the thread's first pair of delta (first_pair).
// offset_in: dP^T's product started from -delta (offsets_to_acc); not with SOFTCAP.
FT_DEVICE void dp_to_ds(float (&ds)[S_REGS], const float (&p)[S_REGS], const float *d_smem, float2 d_first, int qd,
                        float scale_log2, bool offset_in = false)
{
#pragma unroll
    for (int j = 0; j < BLOCK_M / 8 && offset_in; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            ds[4 * j + e] *= p[4 * j + e];
#pragma unroll
    for (int j = 0; j < BLOCK_M / 8 && !offset_in; j++) {
        const float2 d2 = j == 0 ? d_first : *(const float2 *)(d_smem + 8 * j + 2 * qd);
#pragma unroll
        for (int e = 0; e < 4; e++)
            ds[4 * j + e] = p[4 * j + e] * (ds[4 * j + e] - ((e & 1) ? d2.y : d2.x));
#if SOFTCAP
        const float2 l2 = *(const float2 *)(d_smem - BLOCK_M + 8 * j + 2 * qd);
        const float nl0 = l_offset(l2.x), nl1 = l_offset(l2.y);
#pragma unroll
        for (int e = 0; e < 4; e++)
            ds[4 * j + e] *= cap_slope(p[4 * j + e], (e & 1) ? nl1 : nl0, 1.f / scale_log2);
#endif
    }
}

// dV += P^T dO and dK += dS^T Q for consumer CW's columns (with the columns split, its panels;
// else all): dO and Q read N-major (transposed), 16 query rows (2048 bytes) a step, a column's
// panels PANEL_BYTES apart. Committed, left in flight.
template <int CW>
FT_DEVICE void issue_dv(float (&dv)[dv_cols(CW) / 2], const unsigned (&pa)[M_STEPS][4], unsigned stage)
{
    const unsigned long long b = wg_desc(stage + do_panel(dv_col0(CW) / 64), PANEL_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
        wg_rs<dv_cols(CW), 1>::run(dv, pa[kk], wg_desc_add<!SPLIT_COLS>(b, kk * 2048), 1);
}
template <int CW>
FT_DEVICE void issue_dk(float (&dk)[dk_cols(CW) / 2], const unsigned (&dsa)[M_STEPS][4], unsigned stage)
{
    const unsigned long long b = wg_desc(stage + q_panel(dk_col0(CW) / 64), PANEL_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
        wg_rs<dk_cols(CW), 1>::run(dk, dsa[kk], wg_desc_add<!SPLIT_COLS>(b, kk * 2048), 1);
}
// DK_SS: dK += dS^T Q with A = the shared dS^T tile's rows of this warpgroup's keys (ds_rows),
// read K-major as transposed_scores reads K: 16 queries a step, a panel per 64 of them.
FT_DEVICE void issue_dk_ss(float (&dk)[DK_REGS], unsigned ds_rows, unsigned stage)
{
    const unsigned long long a = wg_desc(ds_rows, 16, 1024), b = wg_desc(stage + q_panel(0), PANEL_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
        wg_ss<dk_cols(0), 1, 0>::run(dk, wg_desc_add<!SPLIT_COLS>(a, (kk / 4) * (BLOCK_N * 128) + (kk % 4) * 32),
                                    wg_desc_add<!SPLIT_COLS>(b, kk * 2048), 1);
}
template <int CW>
FT_DEVICE void issue_dv_dk(float (&dk)[dk_cols(CW) / 2], float (&dv)[dv_cols(CW) / 2],
                           const unsigned (&pa)[M_STEPS][4], const unsigned (&dsa)[M_STEPS][4], unsigned stage)
{
    wg_fence();
    issue_dv<CW>(dv, pa, stage);
    issue_dk<CW>(dk, dsa, stage);
    wg_commit();
}

// The thread's first pair of a slot's L or delta (queries 2qd, 2qd + 1), read before a product's
// wait: the shared-memory read then overlaps the wait, and the first exponential or product after
// it need not stall on it (the SASS had each wait followed at once by the read its first FFMA
// waited for: a share of the stall samples, notes/kernels.md). The rest are read
// where used, between the arithmetic.
FT_DEVICE float2 first_pair(const float *rows, const dkdv_thread &th)
{
    return *(const float2 *)(rows + 2 * th.qd);
}

// L_EARLY: a product's accumulator set to a slot's per-query offset times `mul` before the product
// is issued on it (element 4j+e: query 8j + 2qd + e%2). For S^T the offset is L's (l_offset) over
// the scale, so S^T - L/scale comes out of the tensor cores and the exponential needs no L; for
// dP^T it is -delta. The reads then happen before the issue, not behind the products'
// shared-memory traffic after their wait, and hold no registers the accumulator does not. Pinned:
// the compiler would sink the writes below the wgmma fence, and ptxas would then serialize the
// products.
FT_DEVICE void offsets_to_acc(float (&acc)[S_REGS], const float *rows, const dkdv_thread &th, bool of_l, float mul)
{
#pragma unroll
    for (int j = 0; j < BLOCK_M / 8; j++) {
        const float2 v = *(const float2 *)(rows + 8 * j + 2 * th.qd);
        const float a0 = (of_l ? l_offset(v.x) : v.x) * mul, a1 = (of_l ? l_offset(v.y) : v.y) * mul;
        acc[4 * j] = acc[4 * j + 2] = a0;
        acc[4 * j + 1] = acc[4 * j + 3] = a1;
    }
    wg_pin(acc);
}

// One query tile's gradients for the warpgroup's 64 keys: S^T, dP^T, P^T and dS^T (`issued` is
// called once S^T and dP^T are issued); issues
// dV += P^T dO (DV_EARLY: as soon as P^T is made, before dP^T is waited for) and (unless LATE_DK:
// the caller does, after the dS^T meeting) dK += dS^T Q, committed and left in flight, and
// leaves dS^T in ds (fp32) and, unless DK_SS, in dsa (packed: dK's A registers).
template <typename Issued>
FT_DEVICE void tile_gradients(float (&ds)[S_REGS], unsigned (&dsa)[M_STEPS][4], float (&dk)[DK_REGS],
                              float (&dv)[DV_REGS], const ft_bwd_args &args, const dkdv_block &blk,
                              const dkdv_thread &th, int st, int m0, float scale_log2, Issued issued)
{
    const unsigned stage = blk.slot(st);
    const float *l_smem = blk.ld(st), *d_smem = l_smem + BLOCK_M;
    // This warpgroup's 64 keys: within each panel of K and V they start at row 64*cw.
    const unsigned k_wg = blk.k_smem + th.cw * 64 * 128, v_wg = blk.v_smem() + th.cw * 64 * 128;

    // L_EARLY: L and delta enter S^T's and dP^T's accumulators before the products are issued
    // (offsets_to_acc). Read after the products, their loads queue behind the products'
    // shared-memory operands and the first exponentials wait on them (ncu, head dim 128 causal:
    // a tenth of the stall samples). Not with SOFTCAP, whose cap takes
    // the raw scores.
    constexpr bool OFFSET_IN = L_EARLY && !SOFTCAP;
    // S^T and dP^T, both issued before either is waited on.
    float s[S_REGS];
    if (OFFSET_IN) {
        offsets_to_acc(s, l_smem, th, true, 1.f / scale_log2);
        if (!WIDE_KEYS)
            offsets_to_acc(ds, d_smem, th, false, -1.f);
    }
    wg_fence();
    transposed_scores<HEAD_DIM, false>(s, k_wg, stage, OFFSET_IN);
    wg_commit();
    if (!WIDE_KEYS) {
        transposed_scores<HEAD_DIM_V, true>(ds, v_wg, stage, OFFSET_IN);
        wg_commit();
    }
    issued();   // the caller's work that may wait under both products
    const float2 l_first = OFFSET_IN ? float2{} : first_pair(l_smem, th);
    wg_wait<WIDE_KEYS ? 0 : 1>();   // S^T has landed; dP^T may still be in flight (or not issued)
    wg_pin(s);
    scores_to_p(s, l_smem, OFFSET_IN, l_first, args, blk, th, m0, scale_log2);
    unsigned pa[M_STEPS][4];
    wg_acc_to_a(pa, s);
    if (WIDE_KEYS) {
        if (OFFSET_IN)
            offsets_to_acc(ds, d_smem, th, false, -1.f);
        wg_fence();
        transposed_scores<HEAD_DIM_V, true>(ds, v_wg, stage, OFFSET_IN);
        wg_commit();
    }

    const float2 d_first = OFFSET_IN ? float2{} : first_pair(d_smem, th);
    if (DV_EARLY) {   // dV queues behind dP^T; the exponentials cannot sink below dP^T's wait
        wg_fence();
        issue_dv<0>(dv, pa, stage);
        wg_commit();
        wg_wait<1>();
    } else {
        wg_wait<0>();
    }
    wg_pin(ds);
    if (WIDE_KEYS) {   // P from its packed pairs: the fp32 P died at the packing (registers)
#pragma unroll
        for (int kk = 0; kk < M_STEPS; kk++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                unpack2(pa[kk][j], s[kk * 8 + 2 * j], s[kk * 8 + 2 * j + 1]);
    }
    dp_to_ds(ds, s, d_smem, d_first, th.qd, scale_log2, OFFSET_IN);
    if (!DK_SS)
        wg_acc_to_a(dsa, ds);
    if (!DV_EARLY || !LATE_DK) {   // what is left of dV and dK now, as one group
        wg_fence();
        if (!DV_EARLY)
            issue_dv<0>(dv, pa, stage);
        if (!LATE_DK)
            issue_dk<0>(dk, dsa, stage);
        wg_commit();
    }
}

// The shared address of the thread's 4 bytes in chunk 0 of row krow of a one-panel tile of
// BLOCK_N rows at `tile` (1024-aligned) with the 128-byte swizzle applied: chunk j is then at
// (this ^ (j << 4)) and row krow + 8 at + 1024. Bits 4-6 of tile + krow*128 + 4qd are clear, so
// one XOR places the row's swizzle there. The base is opaque: the compiler would otherwise hoist
// all 16 offsets into registers across the loop.
FT_DEVICE unsigned ds_row_base(unsigned tile, const dkdv_thread &th)
{
    return opaque(tile + th.krow * 128 + 4 * th.qd) ^ ((th.krow & 7) << 4);
}

// The shared address of chunk j (queries 8j..8j+7) of the thread's row (base: ds_row_base) and of
// the row 8 below (half 1) in a dS^T tile: a panel of BLOCK_N rows for each 64 queries.
FT_DEVICE unsigned ds_chunk(unsigned base, int j, int half)
{
    return (base ^ ((j & 7) << 4)) + (j >> 3) * (BLOCK_N * 128) + 1024 * half;
}

// dS^T to the shared tile at ds_tile as 16-bit pairs: row = key of the tile, BLOCK_M queries
// (panel_offset's layout), by stmatrix: a k-step's four registers of pairs (rows krow and krow + 8,
// queries 16kk + 2qd and + 8; wg_acc_to_a's order) are the four 8x8 matrices of one stmatrix.x4,
// lane l giving the address of row l%8 of matrix l/8: key row warp_row0 + 8((l/8)%2) + l%8, chunk
// 2kk + l/16. Chunk 2kk + 1 stays in chunk 2kk's panel, so the lane's half of the chunk index
// joins its row's swizzle in the base. 4 stores a k-step become one; bytes and banks as before.
FT_DEVICE unsigned ds_stmatrix_base(unsigned tile, const dkdv_thread &th)
{
    const int lane = th.t % 32;
    const int row = (th.krow & ~7) + 8 * ((lane / 8) % 2) + lane % 8;
    return opaque(tile + row * 128) ^ ((((unsigned)row & 7) ^ (unsigned)(lane / 16)) << 4);
}
// DQ_TRANSPOSED: dS itself, query-major (BLOCK_M rows of 64 keys, 128 bytes a row swizzled, the
// consumer's keys its panel PANEL_BYTES in), which dQ^T's product reads as a K-major B: four
// fewer KB than dS^T's whole query panels, so two tiles fit. stmatrix .trans stores each 8x8
// matrix of a k-step's registers (keys 16ww + 8(i%2) up, queries 16kk + 8(i/2) up: wg_acc_to_a's
// order) transposed: lane l gives query row 16kk + 8(i/2) + l%8 of matrix i = l/8, chunk (its 8
// keys) 2ww + i%2, swizzled by the row (l%8). The base is k-step 0's; k-step kk is 2048 bytes on.
FT_DEVICE unsigned ds_query_major_base(unsigned tile, const dkdv_thread &th)
{
    const int lane = th.t % 32, i = lane / 8, r8 = lane % 8, ww = th.wrow / 16;
    return opaque(tile + th.cw * PANEL_BYTES + (8 * (i / 2) + r8) * 128) + ((unsigned)((2 * ww + i % 2) ^ r8) << 4);
}
// Any 64-row accumulator of the warpgroup (R registers: 2R columns) times `scale` the same way:
// the epilogue stages dK and dV so (stage_and_store_dk_dv).
template <int R>
FT_DEVICE void store_acc(unsigned tile, const float (&acc)[R], const dkdv_thread &th, float scale)
{
    const unsigned base = ds_stmatrix_base(tile, th);
#pragma unroll
    for (int kk = 0; kk < R / 8; kk++)
        stmatrix_x4(ds_chunk(base, 2 * kk, 0), pack2(acc[8 * kk] * scale, acc[8 * kk + 1] * scale),
                    pack2(acc[8 * kk + 2] * scale, acc[8 * kk + 3] * scale),
                    pack2(acc[8 * kk + 4] * scale, acc[8 * kk + 5] * scale),
                    pack2(acc[8 * kk + 6] * scale, acc[8 * kk + 7] * scale));
}
// The same from dS^T already packed as dK's A registers, not packed a second time: the inline
// pipeline's. The consumers keep the fp32 form above, packing at each store: holding the packed
// pairs across the stores made head dim 96's ordered causal default spill (and packing through
// wg_acc_to_a first moves the schedule of 62 of 106 configurations checked).
FT_DEVICE void store_ds(unsigned ds_tile, const unsigned (&dsa)[M_STEPS][4], const dkdv_thread &th)
{
    if constexpr (DQ_TRANSPOSED) {
        const unsigned base = ds_query_major_base(ds_tile, th);
#pragma unroll
        for (int kk = 0; kk < M_STEPS; kk++)
            stmatrix_x4_trans(base + kk * 2048, dsa[kk][0], dsa[kk][1], dsa[kk][2], dsa[kk][3]);
        return;
    }
    const unsigned base = ds_stmatrix_base(ds_tile, th);
#pragma unroll
    for (int kk = 0; kk < BLOCK_M / 16; kk++)
        stmatrix_x4(ds_chunk(base, 2 * kk, 0), dsa[kk][0], dsa[kk][1], dsa[kk][2], dsa[kk][3]);
}

FT_DEVICE void store_ds(unsigned ds_tile, const float (&ds)[S_REGS], const dkdv_thread &th)
{
    if constexpr (DQ_TRANSPOSED) {
        unsigned dsa[M_STEPS][4];
        wg_acc_to_a(dsa, ds);
        store_ds(ds_tile, dsa, th);
    } else {
        store_acc(ds_tile, ds, th, 1.f);
    }
}

// SPLIT_COLS: the 16-bit pairs store_ds wrote, back as the A registers of dK += dS^T Q (the pair
// of row krow + 8*half, chunk j is register (j%2)*2 + half of k-step j/2: wg_acc_to_a's order).
FT_DEVICE void load_ds(unsigned (&dsa)[M_STEPS][4], unsigned ds_tile, const dkdv_thread &th)
{
    const unsigned base = ds_row_base(ds_tile, th);
#pragma unroll
    for (int j = 0; j < BLOCK_M / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            dsa[j / 2][(j % 2) * 2 + half] = ld_shared_b32(ds_chunk(base, j, half));
}

// SPLIT_COLS: one query tile's gradients in consumer CW, the 64 keys shared and the columns
// split. The first consumer computes S^T and P^T, the second dP^T, each over all the columns
// (the same work at equal head dims; a panel more for the first at 192 over 128); P^T goes to
// the second (fp32, in thread order: both hold a tile's elements alike), which makes dS^T,
// stores it for dQ = dS K and hands it back; the first reads its pairs from there. Each then
// issues dV and dK for its own columns (committed, left in flight). Tile i's hand-offs are phase
// i & 1 of their mbarriers: a consumer reaches phase i + 1 of either only after the other has
// passed phase i of both, so neither tile is overwritten while read.
template <int CW>
FT_DEVICE void split_gradients(float (&dk)[dk_cols(CW) / 2], float (&dv)[dv_cols(CW) / 2], const ft_bwd_args &args,
                               const dkdv_block &blk, const dkdv_thread &th, int i, int st, int m0, float scale_log2)
{
    const unsigned stage = blk.slot(st), parity = i & 1;
    const unsigned p_mine = blk.p_tile() + 16 * (th.t % 128);   // 16-byte chunk c at + c * 2048
    const float *l_smem = blk.ld(st), *d_smem = l_smem + BLOCK_M;
    float x[S_REGS];   // S^T then P^T (first), dP^T then dS^T (second)
    wg_fence();
    if constexpr (CW == 0)
        transposed_scores<HEAD_DIM, false>(x, blk.k_smem, stage);
    else
        transposed_scores<HEAD_DIM_V, true>(x, blk.v_smem(), stage);
    wg_commit();
    wg_wait<0>();
    wg_pin(x);
    unsigned pa[M_STEPS][4], dsa[M_STEPS][4];
    if constexpr (CW == 0) {
        scores_to_p(x, l_smem, false, first_pair(l_smem, th), args, blk, th, m0, scale_log2);
#pragma unroll
        for (int c = 0; c < S_REGS / 4; c++)
            st_shared_f32x4(p_mine + c * 2048, x[4 * c], x[4 * c + 1], x[4 * c + 2], x[4 * c + 3]);
        mbar_arrive(blk.p_full_bar());   // releases the stores above
        wg_acc_to_a(pa, x);
        mbar_wait(blk.ds_full_bar(), parity);
        load_ds(dsa, blk.ds_smem(0), th);
    } else {
        float p[S_REGS];
        mbar_wait(blk.p_full_bar(), parity);
#pragma unroll
        for (int c = 0; c < S_REGS / 4; c++) {
            const float4 v = ld_shared_f32x4(p_mine + c * 2048);
            p[4 * c] = v.x;
            p[4 * c + 1] = v.y;
            p[4 * c + 2] = v.z;
            p[4 * c + 3] = v.w;
        }
        dp_to_ds(x, p, d_smem, first_pair(d_smem, th), th.qd, scale_log2);
        wg_acc_to_a(pa, p);
        wg_acc_to_a(dsa, x);
        store_ds(blk.ds_smem(0), x, th);
        fence_proxy_async();               // the stores above, before wgmma reads them
        mbar_arrive(blk.ds_full_bar());
        mbar_wait(blk.ds_full_bar(), parity);   // all of this warpgroup's rows, before its dQ product reads them
    }
    issue_dv_dk<CW>(dk, dv, pa, dsa, stage);
}

// dQ (unscaled) = dS K for this warpgroup's N columns from DQ_COLS0*cw over all the keys, or
// (DQ_SPLIT_KEYS) all columns over its own 64 keys, or (DQ_SPLIT_ROWS) all columns of its 64
// query rows over all the keys: dS^T read M-major (16 keys, 2048 bytes, a step; the rows' panel),
// K read N-major. DQ_TRANSPOSED: dQ^T = K^T dS^T for its 64 columns, N = BLOCK_M queries: A =
// its panel of K read M-major (as dS^T is above), B = the tile's dS, stored query-major
// (store_ds), read K-major as transposed_scores reads Q (16 keys, 32 bytes, a step; a panel per
// 64 keys). Issued only (the caller commits and waits).
template <int R>
FT_DEVICE void issue_dq(float (&dq)[R], const dkdv_block &blk, unsigned ds_tile, int cw, int panel = 0)
{
    constexpr int N = 2 * R;
    const unsigned key0 = DQ_SPLIT_KEYS ? cw * 64 * 128 : 0;               // first key row, in bytes
    const unsigned rows = DQ_SPLIT_ROWS ? cw * (BLOCK_N * 128) : 0;         // the query rows' panel
    const unsigned k_dq =
        blk.k_smem + (DQ_SPLIT_KEYS ? key0 : DQ_SPLIT_ROWS ? 0 : (cw * (DQ_COLS0 / 64) + panel) * (BLOCK_N * 128));
    wg_fence();
    if constexpr (DQ_TRANSPOSED) {
        const unsigned long long a = wg_desc(k_dq, BLOCK_N * 128, 1024), b = wg_desc(ds_tile, 16, 1024);
#pragma unroll
        for (int kk = 0; kk < DQ_STEPS; kk++)
            wg_ss<N, 0, 1>::run(dq, wg_desc_add(a, kk * 2048), wg_desc_add(b, (kk / 4) * PANEL_BYTES + (kk % 4) * 32),
                                kk > 0);
        return;
    }
    const unsigned long long a = wg_desc(ds_tile + rows + key0, BLOCK_N * 128, 1024),
                             b = wg_desc(k_dq, BLOCK_N * 128, 1024);
#pragma unroll
    for (int kk = 0; kk < DQ_STEPS; kk++)
        wg_ss<N, 1, 1>::run(dq, wg_desc_add<!SPLIT_COLS>(a, kk * 2048), wg_desc_add<!SPLIT_COLS>(b, kk * 2048), kk > 0);
}
template <int R, int KR, int VR>
FT_DEVICE void dq_product(float (&dq)[R], float (&dk)[KR], float (&dv)[VR], const dkdv_block &blk, unsigned ds_tile,
                          int cw)
{
    issue_dq(dq, blk, ds_tile, cw);
    wg_commit();
    wg_wait<0>();
    wg_pin(dq);
    wg_pin(dv);
    wg_pin(dk);
}

// DQ_SPLIT_KEYS: the second warpgroup hands its half of dQ to the first through shared memory
// (same thread order, so thread t adds thread t's); the first adds it. Returns 1 in the
// warpgroup that then holds the sum and writes the tile. Both meet at the hand-off (a bar.arrive
// would spare the second the wait, but racecheck does not follow it; the two run in step anyway);
// the half is rewritten only after the next tile's dS^T meeting, which the first warpgroup
// reaches after reading it.
template <int R>
FT_DEVICE bool add_dq_halves(float (&dq)[R], const dkdv_block &blk, const dkdv_thread &th)
{
    if (!DQ_SPLIT_KEYS)
        return true;
    const unsigned mine = blk.dq_half() + 16 * (th.t % 128);
    if (th.cw == 1) {
#pragma unroll
        for (int c = 0; c < R / 4; c++)
            st_shared_f32x4(mine + c * 2048, dq[4 * c], dq[4 * c + 1], dq[4 * c + 2], dq[4 * c + 3]);
    }
    // One barrier instruction for both warpgroups (two, one in a branch, were what synccheck
    // reported as divergence; see consumers_meet).
    named_barrier_sync(2, CONSUMER_THREADS);
    if (th.cw == 1)
        return false;
#pragma unroll
    for (int c = 0; c < R / 4; c++) {
        const float4 x = ld_shared_f32x4(mine + c * 2048);
        dq[4 * c] += x.x;
        dq[4 * c + 1] += x.y;
        dq[4 * c + 2] += x.z;
        dq[4 * c + 3] += x.w;
    }
    return true;
}

// A full dQ tile in shared memory, in thread order for the bulk reduce: the warpgroup's region
// (warpgroup 1's after warpgroup 0's 128 * DQ_COLS0 / 8 chunks; its columns, or with the rows
// split its rows), 16-byte chunk c * 128 + its thread. dq: N = 2R columns, of which the
// warpgroup's own are written. DQ_TRANSPOSED: all 2R (queries) of each of its 64 columns, the
// second region after the first's 128 * R / 4 chunks.
template <int R>
FT_DEVICE void dq_to_tile(unsigned dq_tile, const float (&dq)[R], const dkdv_thread &th, int panel = 0)
{
    constexpr int N = 2 * R;
    const int cols = DQ_TRANSPOSED ? N : (th.cw == 0 ? DQ_COLS0 : DQ_COLS1) - 64 * panel;
    const int region = DQ_TRANSPOSED ? th.cw * (R / 4) : th.cw * DQ_COLS0 / 8 + 8 * panel;
    const unsigned mine = dq_tile + 16 * (128 * region + th.t % 128);
#pragma unroll
    for (int c = 0; c < N / 8; c++)
        if (c < cols / 8)
            st_shared_f32x4(mine + c * 2048, dq[4 * c], dq[4 * c + 1], dq[4 * c + 2], dq[4 * c + 3]);
}

// The last, partial dQ tile, row-major (HEAD_DIM floats a row): element dq[4j+e] is query row
// wrow + 8*(e/2) of the tile (+ 64*cw with the rows split), column DQ_COLS0*cw (0 with the rows
// split) + 8j + 2qd + e%2; DQ_TRANSPOSED the other way round (query row 8j + 2qd + e%2, column
// DQ_COLS0*cw + wrow + 8*(e/2): single floats, four lanes a bank, on the last tile only). Into
// dq_accum by atomics, rows past seqlen_q left out (inline), or to a shared tile the producer
// adds (rows past it not added).
template <bool ATOMIC, int R>
FT_DEVICE void dq_rows(float *dst, const float (&dq)[R], const dkdv_thread &th, int valid_rows, int panel = 0)
{
    constexpr int N = 2 * R;   // columns (DQ_TRANSPOSED: queries)
    if constexpr (DQ_TRANSPOSED) {
#pragma unroll
        for (int j = 0; j < N / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int row = 8 * j + 2 * th.qd + (e & 1);
                if (ATOMIC && row >= valid_rows)
                    continue;
                float *p = dst + row * HEAD_DIM + DQ_COLS0 * th.cw + th.wrow + 8 * (e >> 1);
                if (ATOMIC)
                    atomicAdd(p, dq[4 * j + e]);
                else
                    *p = dq[4 * j + e];
            }
        return;
    }
    const int cols = (th.cw == 0 ? DQ_COLS0 : DQ_COLS1) - 64 * panel;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = th.wrow + 8 * half + (DQ_SPLIT_ROWS ? 64 * th.cw : 0);
        if (ATOMIC && row >= valid_rows)
            continue;
        float *p = dst + row * HEAD_DIM + (DQ_SPLIT_ROWS ? 0 : DQ_COLS0 * th.cw + 64 * panel) + 2 * th.qd;
#pragma unroll
        for (int j = 0; j < N / 8; j++)
            if (j < cols / 8) {
                if (ATOMIC)
                    red_add_f32x2(p + 8 * j, dq[4 * j + 2 * half], dq[4 * j + 2 * half + 1]);
                else
                    *(float2 *)(p + 8 * j) = make_float2(dq[4 * j + 2 * half], dq[4 * j + 2 * half + 1]);
            }
    }
}

// A pair of adjacent columns into global memory: 16-bit elements (the gradients), or fp32 (a
// split share's partial sums, SPLITS > 1).
FT_DEVICE void store_pair(elem_t *dst, float a, float b)
{
    *(unsigned *)dst = pack2(a, b);
}
FT_DEVICE void store_pair(float *dst, float a, float b)
{
    *(float2 *)dst = make_float2(a, b);
}

// Writes a 64-key slab's accumulators (rows `row`, `row` + 8 of the thread; COLS columns) as
// pairs (store_pair) times `scale` to global rows past which `valid` keys stop. With PADDED,
// only the first `data` columns (a multiple of 8; the head dim's data left from dst's column).
template <int COLS, bool PADDED, typename T>
FT_DEVICE void store_slab(T *dst, long long ld, const float (&c)[COLS / 2], int row, int quad, int valid, float scale,
                          int data)
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = row + 8 * half;
        if (!EVEN_N && r >= valid)
            continue;
#pragma unroll
        for (int j = 0; j < COLS / 8; j++)
            if (!PADDED || 8 * j < data)
                store_pair(dst + r * ld + 8 * j + 2 * quad, c[4 * j + 2 * half] * scale,
                           c[4 * j + 2 * half + 1] * scale);
    }
}

// Epilogue: dK * scale and dV of consumer CW, 16-bit pairs straight from the accumulators (its
// own columns when they are split).
template <int CW>
FT_DEVICE void store_dk_dv(const ft_bwd_args &args, const dkdv_block &blk, const dkdv_thread &th,
                           const float (&dk)[dk_cols(CW) / 2], const float (&dv)[dv_cols(CW) / 2])
{
    constexpr int DK_COLS = dk_cols(CW), DV_COLS = dv_cols(CW);
    const int k_col = dk_col0(CW), v_col = dv_col0(CW);
    if (SPLITS > 1) {   // this share's sums, for ft_bwd_dkdv_reduce
        const long long row = (blk.part * args.part_rows + (long long)blk.bh * args.seqlen_k) + blk.n0;
        store_slab<DK_COLS, false>(args.dk_part + row * HEAD_DIM + k_col, HEAD_DIM, dk, th.krow, th.qd, blk.keys_in,
                                   (float)args.softmax_scale, 0);
        store_slab<DV_COLS, false>(args.dv_part + row * HEAD_DIM_V + v_col, HEAD_DIM_V, dv, th.krow, th.qd,
                                   blk.keys_in, 1.f, 0);
        return;
    }
    const int k0 = blk.k0();
    elem_t *dk_out =
        (elem_t *)args.dk + seq_offset(args.dk_stride, blk.b, blk.h, k0) + blk.n0 * args.dk_stride[2] + k_col;
    elem_t *dv_out =
        (elem_t *)args.dv + seq_offset(args.dv_stride, blk.b, blk.h, k0) + blk.n0 * args.dv_stride[2] + v_col;
    store_slab<DK_COLS, QK_DATA < HEAD_DIM>(dk_out, args.dk_stride[2], dk, th.krow, th.qd, blk.keys_in,
                                            (float)args.softmax_scale, QK_DATA - k_col);
    store_slab<DV_COLS, V_DATA < HEAD_DIM_V>(dv_out, args.dv_stride[2], dv, th.krow, th.qd, blk.keys_in, 1.f,
                                             V_DATA - v_col);
}

// The epilogue through shared memory (dkdv_consumer, one group of products a tile): dK times the
// scale, then dV, each of the whole key tile, staged in the dS^T tiles by stmatrix (store_acc's
// panels) and written out in 16-byte chunks, consecutive threads on consecutive chunks of a row,
// so a warp writes whole rows: a quarter of the stores of the accumulators' 4-byte pairs, and
// whole sectors. The pairs' stores took a large share of the stall samples at head dim 128,
// causal, N 1024 (notes/kernels.md, "persistent blocks"). The caller's meeting comes first (every consumer's
// last products, which read the dS^T tiles, done); the dS^T tiles are written again only after
// the next meeting. A split share's fp32 partials (SPLITS > 1) go as pairs. dK and dV must be
// 16-byte aligned with row strides of a multiple of 8 elements, as Q and dO must for their tensor
// maps (the runtime checks every 16-bit tensor so: rt_check.c).
constexpr bool STAGED_EPILOGUE = bwd_wgmma_staged_epilogue(BLOCK_N, NUM_WARPS, HEAD_DIM, SPLITS);
static_assert(!STAGED_EPILOGUE || (BLOCK_N * ft_panel_cols(HEAD_DIM) * 2 <= BUFFERS * DS_BYTES &&
                                   BLOCK_N * ft_panel_cols(HEAD_DIM_V) * 2 <= BUFFERS * DS_BYTES),
              "dK and dV of a key tile fit the dS^T tiles");

// Rows [0, valid) of a staged tile (COLS columns; store_acc's layout) to dst, row stride ld; with
// PADDED only the chunks of the first `data` columns.
template <int COLS, bool PADDED>
FT_DEVICE void unstage_rows(elem_t *dst, long long ld, unsigned tile, int valid, int data, int t)
{
    constexpr int CHUNKS = COLS / 8;
    for (int i = t; i < BLOCK_N * CHUNKS; i += CONSUMER_THREADS) {
        const int row = i / CHUNKS, c = i % CHUNKS;
        if ((!EVEN_N && row >= valid) || (PADDED && 8 * c >= data))
            continue;
        *(float4 *)(dst + row * ld + 8 * c) = ld_shared_f32x4(tile + panel_offset<BLOCK_N>(row, c));
    }
}

FT_DEVICE void stage_and_store_dk_dv(const ft_bwd_args &args, const dkdv_block &blk, const dkdv_thread &th,
                                     const float (&dk)[DK_REGS], const float (&dv)[DV_REGS])
{
    const unsigned tile = blk.ds_smem(0);
    if constexpr (KEY_MAPS) {   // a consumer thread hands each panel to the copy engine
        store_acc(tile, dk, th, (float)args.softmax_scale);
        fence_proxy_async();   // this thread's rows, before the copy engine reads them
        named_barrier_sync(1, CONSUMER_THREADS);   // every warpgroup's rows staged
        const bool issuer = th.t == 0;
        if (issuer) {
#pragma unroll
            for (int p = 0; p < D_PANELS; p++)
                tma_store_4d(&args.dk_map, tile + p * (BLOCK_N * 128), 64 * p, blk.n0, blk.h, blk.b);
            bulk_commit();
            bulk_wait_read<0>();
        }
        named_barrier_sync(1, CONSUMER_THREADS);   // read out: the tile takes dV
        store_acc(tile, dv, th, 1.f);
        fence_proxy_async();
        named_barrier_sync(1, CONSUMER_THREADS);
        if (issuer) {
#pragma unroll
            for (int p = 0; p < DV_PANELS; p++)
                tma_store_4d(&args.dv_map, tile + p * (BLOCK_N * 128), 64 * p, blk.n0, blk.h, blk.b);
            bulk_commit();
            bulk_wait_read<0>();   // before the next unit's dS^T (after the consumers meet) or the exit
        }
        return;
    }
    const int k0 = blk.k0();
    elem_t *dk_out = (elem_t *)args.dk + seq_offset(args.dk_stride, blk.b, blk.h, k0) + blk.n0 * args.dk_stride[2];
    elem_t *dv_out = (elem_t *)args.dv + seq_offset(args.dv_stride, blk.b, blk.h, k0) + blk.n0 * args.dv_stride[2];
    const int t = (int)opaque((unsigned)th.t);   // else a persistent loop holds the chunks' addresses throughout
    store_acc(tile, dk, th, (float)args.softmax_scale);
    named_barrier_sync(1, CONSUMER_THREADS);   // every warpgroup's rows staged
    unstage_rows<HEAD_DIM, (QK_DATA < HEAD_DIM)>(dk_out, args.dk_stride[2], tile, blk.keys_in, QK_DATA, t);
    named_barrier_sync(1, CONSUMER_THREADS);   // read out: the tile takes dV
    store_acc(tile, dv, th, 1.f);
    named_barrier_sync(1, CONSUMER_THREADS);
    unstage_rows<HEAD_DIM_V, (V_DATA < HEAD_DIM_V)>(dv_out, args.dv_stride[2], tile, blk.keys_in, V_DATA, t);
}

template <int R> FT_DEVICE void zero(float (&x)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++)
        x[i] = 0.f;
}

// ---- the inline pipeline: every thread computes; thread 0 also issues the loads and the dQ
// reduces between the block barriers of each tile.
FT_DEVICE void dkdv_inline(const ft_bwd_args &args, const dkdv_block &blk)
{
    const dkdv_thread th = consumer_thread(threadIdx.x);
    const int steps = blk.steps();
    group_step load = blk.first_step();   // the next step to load

    // That step's query tile into ring slot st: Q and dO by the copy engine (thread 0), L and delta by
    // cp.async from the last BLOCK_M threads (not thread 0, whose semaphore release, DQ_MODE
    // ordered, would otherwise wait for these loads too). Rows past seqlen_q get L = +inf (so
    // P = 0) and delta = 0.
    auto issue_q_tile = [&](int st) {
        const group_step s = load;
        blk.advance(load);
        if (threadIdx.x == 0)
            issue_q_do(args, blk, s, st);
        const int m0 = s.mt * BLOCK_M;
        float *ld = blk.ld(st);
        const int r = threadIdx.x - (NUM_THREADS - BLOCK_M);
        if (r >= 0) {
            if (EVEN_M || m0 + r < blk.seqlen_q(args)) {
                cp_async_4(smem_addr(ld + r), blk.lse(args, s.head) + m0 + r, 4);
                cp_async_4(smem_addr(ld + BLOCK_M + r), blk.delta(args, s.head) + m0 + r, 4);
            } else {
                ld[r] = FT_INF_F;
                ld[BLOCK_M + r] = 0.f;
            }
        }
    };

    // Pipeline: group 0 = K, V and the first query tile; then one group per further tile, one
    // commit per iteration even when nothing is left to load, so wait<NUM_STAGES-2> always
    // means "the current tile has landed".
    load_key_tile<NUM_THREADS>(args, blk, threadIdx.x);
    if (steps > 0)
        issue_q_tile(0);
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < NUM_STAGES - 1; s++) {
        if (s < steps)
            issue_q_tile(s);
        cp_async_commit();
    }

    const float scale_log2 = softmax_log2_scale(args);
    float dk[DK_REGS], dv[DV_REGS];
    zero(dk);
    zero(dv);

    int st = 0;                           // ring slot of the current tile
    group_step cur = blk.first_step();    // the current step
    group_step pending = { -1, 0 };       // the step whose full dQ tile is written and not yet handed on (head -1: none)
    group_step passing = { -1, 0 };       // DQ_MODE ordered: the step whose reduce is in flight (thread 0)
    for (int i = 0; i < steps; i++, blk.advance(cur)) {
        cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
        mbar_wait(blk.full_bar(st), (i / NUM_STAGES) & 1);   // Q, dO of step i landed
        fence_proxy_async();   // cp.async and the dQ stores wrote through the generic proxy;
                               // wgmma and the bulk reduce read through the async one
        __syncthreads();       // step i visible to all; every warp is done with step i-1
        if (threadIdx.x == 0 && pending.head >= 0) {
            if (ORDERED)
                await_turn(args, blk, pending);
            bulk_reduce_add_f32(blk.dq_accum(args, pending.head) + (long long)pending.mt * BLOCK_M * HEAD_DIM,
                                blk.dq_smem(0), DQ_TILE_BYTES);
            bulk_commit();
            passing = pending;
        }
        pending.head = -1;
        if (NUM_STAGES > 1) {
            if (i + NUM_STAGES - 1 < steps)
                issue_q_tile(st == 0 ? NUM_STAGES - 1 : st - 1);
            cp_async_commit();
        }
        const int m0 = cur.mt * BLOCK_M;
        float ds[S_REGS];
        unsigned dsa[M_STEPS][4];
        tile_gradients(ds, dsa, dk, dv, args, blk, th, st, m0, scale_log2, [] {});
        store_ds(blk.ds_smem(0), dsa, th);   // meanwhile
        fence_proxy_async();   // the stores above, before wgmma reads them
        if (NUM_STAGES == 1) {
            wg_wait<0>();      // dV, dK done: slot 0 is free for the refill below
            wg_pin(dv);
            wg_pin(dk);
        }                      // (else they run on behind the barrier, up to dQ's wait)
        if (threadIdx.x == 0) {
            if (!ORDERED) {
                bulk_wait_read<0>();   // the reduce issued at this tile's start is done reading the
                                       // dQ tile (half a tile ago: seldom a wait): it may be rewritten
            } else if (passing.head >= 0) {
                bulk_wait<0>();        // ordered: done adding, too, so the next key tile down may
                pass_turn(args, blk, passing);
                passing.head = -1;
            }
        }
        __syncthreads();       // every warpgroup's dS^T is in place; slot st is no longer read
        if (NUM_STAGES == 1) {
            if (i + 1 < steps)
                issue_q_tile(0);   // overlaps the dQ step
            cp_async_commit();
        }

        const bool full_tile = EVEN_M || m0 + BLOCK_M <= blk.seqlen_q(args);
        if (ORDERED && !full_tile) {   // the last, partial tile's atomics wait their turn
            if (threadIdx.x == 0)
                await_turn(args, blk, cur);
            __syncthreads();
        }
        float dq[DQ_REGS];
        dq_product(dq, dk, dv, blk, blk.ds_smem(0), th.cw);
        const bool writes = add_dq_halves(dq, blk, th);
        if (full_tile) {
            if (writes)
                dq_to_tile(blk.dq_smem(0), dq, th);   // added at the next barrier
            pending = cur;
        } else {
            if (writes)
                dq_rows<true>(blk.dq_accum(args, cur.head) + (long long)m0 * HEAD_DIM, dq, th, blk.seqlen_q(args) - m0);
            if (ORDERED) {
                __threadfence();   // every thread's adds, before thread 0 passes the turn
                __syncthreads();
                if (threadIdx.x == 0)
                    sem_release_value(blk.sems(args, cur.head) + cur.mt, blk.key_tile + 1);
            }
        }
        st = (st + 1 == NUM_STAGES) ? 0 : st + 1;
    }
    cp_async_wait<0>();
    // The last full dQ tile, then every reduce complete before the block's shared memory goes.
    if (pending.head >= 0) {
        fence_proxy_async();
        __syncthreads();
        if (threadIdx.x == 0) {
            if (ORDERED)
                await_turn(args, blk, pending);
            bulk_reduce_add_f32(blk.dq_accum(args, pending.head) + (long long)pending.mt * BLOCK_M * HEAD_DIM,
                                blk.dq_smem(0), DQ_TILE_BYTES);
            bulk_commit();
        }
    }
    if (threadIdx.x == 0) {
        bulk_wait<0>();
        if (ORDERED && pending.head >= 0)
            pass_turn(args, blk, pending);
    }
    store_dk_dv<0>(args, blk, th, dk, dv);
}

// ---- the producer pipeline: warpgroup 0 loads and adds dQ, the consumers only compute.
// Every role walks the block's units alike (one, or PERSISTENT's) and counts the query tiles of
// those before the current one (g): tile i of a unit is the block's tile g + i, whose turn of the
// ring (slot, phase) and of the dQ tiles it takes. The ring and the dQ warp thus run on from one
// unit into the next: the next unit's first tiles load while the consumers store dK and dV.

// PERSISTENT: the block's unit k + 1 (k >= 1; unit 0 is its first, first_unit's) lies in slot
// (k - 1) % UNIT_SLOTS, at that slot's use (k - 1) / UNIT_SLOTS. The producer's warp 0 takes its
// number off the global count once it has issued unit k's last loads (the consumers are then at
// most NUM_STAGES tiles from its end), so it is there when they and the dQ warp end unit k; past
// the last unit it reads unit_end (PACKED_WALK: the number decoded, packed_unit's, or -1 past the
// last, unit_in). Taken as unit k starts, a block held its next unit a whole unit
// ahead, out of the walk's reach: with a group's long units (4 heads' query tiles at 32/8 heads)
// the tail ran slower than one block a unit (notes/kernels.md).
FT_DEVICE int publish_next_unit(const ft_bwd_args &args, const dkdv_block &blk, int k, int lane)
{
    const int sl = (k - 1) % UNIT_SLOTS, use = (k - 1) / UNIT_SLOTS;
    int next = 0;
    if (lane == 0) {
        mbar_wait(blk.unit_empty_bar(sl), (use & 1) ^ 1);   // every reader is done with its last use
        if constexpr (PACKED_WALK)
            next = packed_unit(args, blk, grid_blocks_here() + atomicAdd(args.dq_ticket, 1));
        else
            next = min(grid_blocks_here() + atomicAdd(args.dq_ticket, 1), unit_end(args));
        *blk.unit_idx(sl) = next;
        mbar_arrive(blk.unit_full_bar(sl));   // releases the store
    }
    return __shfl_sync(0xffffffffu, next, 0);
}
FT_DEVICE int read_next_unit(const dkdv_block &blk, int k)
{
    const int sl = (k - 1) % UNIT_SLOTS, use = (k - 1) / UNIT_SLOTS;
    mbar_wait(blk.unit_full_bar(sl), use & 1);
    const int next = *(volatile int *)blk.unit_idx(sl);
    mbar_arrive(blk.unit_empty_bar(sl));
    return next;
}

// The ring, tile t into slot t % NUM_STAGES once the consumers are done with the tile before it
// there (the first pass finds every slot empty: parity 1 of a fresh barrier), in two hands so that
// neither holds the other's registers: warp 0's lane 0 has the copy engine bring Q and dO (its
// arrival expects their bytes), and warp 2 writes L and delta by its lanes (32 arrivals, each
// releasing its stores). L's and delta's rows are one offset into both (two pointers carried
// across the loop spilled in 24 registers), moved to the next head's as the walk does.
FT_DEVICE void load_unit_qdo(const ft_bwd_args &args, const dkdv_block &blk, int g)
{
    group_step s = blk.first_step();
#pragma unroll 1
    for (int t = g; t < g + blk.steps(); t++, blk.advance(s)) {   // the block's tile t
        const int st = t % NUM_STAGES;
        mbar_wait(blk.empty_bar(st), ((t / NUM_STAGES) & 1) ^ 1);
        issue_q_do(args, blk, s, st);
    }
}
FT_DEVICE void load_unit_ld(const ft_bwd_args &args, const dkdv_block &blk, int g, int lane)
{
    group_step s = blk.first_step();
    long long row = blk.first_row(args, 0);
#pragma unroll 1   // unrolled by the ring's depth, its remainder's bookkeeping spilled 24 registers
    for (int t = g; t < g + blk.steps(); t++) {   // the block's tile t
        const int st = t % NUM_STAGES, m0 = s.mt * BLOCK_M;
        mbar_wait(blk.empty_bar(st), ((t / NUM_STAGES) & 1) ^ 1);
        float *ld = blk.ld(st);
        const float *lse = (const float *)args.lse + row + m0, *delta = (const float *)args.delta + row + m0;
#pragma unroll
        for (int r = lane; r < BLOCK_M; r += 32) {
            const bool in = EVEN_M || m0 + r < blk.seqlen_q(args);
            ld[r] = in ? l_scaled(lse[r]) : l_scaled(FT_INF_F);
            ld[BLOCK_M + r] = in ? delta[r] : 0.f;
        }
        mbar_arrive(blk.full_bar(st));   // releases the stores above
        blk.advance(s);
        if (s.mt == blk.walk_start())   // a new head
            row += blk.head_rows(args);
    }
}

// DQ_INIT store: whether this block's share of query tile mt comes first, to be stored rather
// than added (dq_accum holds whatever was there). Ordered: the first turn is the highest key
// tile's that sees the tile (await_turn has passed). Atomic: the first ticket's (the tile's
// semaphore counts the key tiles; the ticket is taken while the consumers still work on the
// tile, so its round trip is hidden); a later one waits until the first has marked its store
// landed (STORED). The ticket's holder stores as soon as its dQ tile is in: it waits on nothing
// another block holds, so no block waits forever.
FT_DEVICE bool first_share(const dkdv_block &blk, int *sems, int mt, int ticket)
{
    if (ORDERED)
        return !(blk.up_begin <= mt && mt < blk.up_end);
    if (ticket == 0)
        return true;
    sem_wait_at_least(sems + mt, STORED);
    fence_proxy_async_global();   // the store, then our bulk reduce
    return false;
}

// Warp 1's (one lane's) share of a unit: dQ, tile t from source t % DQ_SOURCES (a dQ tile,
// or with the columns split the ring slot) into dq_accum (the partial tile's valid rows only), in
// its turn (DQ_MODE ordered), stored where it comes first (DQ_INIT store); the source is free
// again once the copy engine has read it. The head's rows of dq_accum and its semaphores move on
// as in warp 2.
FT_DEVICE void add_unit_dq(const ft_bwd_args &args, const dkdv_block &blk, int g)
{
    float *dq_rows = blk.dq_accum(args, 0);
    int *sems = ORDERED || STORE_FIRST ? blk.sems(args, 0) : nullptr;
    int mt = blk.walk_start();
    for (int t = g; t < g + blk.steps(); t++) {   // the block's tile t
        const int src = t % DQ_SOURCES, m0 = mt * BLOCK_M;
        const int rows = EVEN_M ? BLOCK_M : min(BLOCK_M, blk.seqlen_q(args) - m0);
        const int ticket = STORE_FIRST && !ORDERED ? sem_take(sems + mt) : 0;
        mbar_wait(blk.dq_full_bar(src), (t / DQ_SOURCES) & 1);
        if (ORDERED)
            await_turn(blk, sems, mt);
        const bool store = STORE_FIRST && first_share(blk, sems, mt, ticket);
        float *dst = dq_rows + (long long)m0 * HEAD_DIM;
        if (store)
            bulk_store(dst, blk.dq_source(t), rows * HEAD_DIM * 4);
        else
            bulk_reduce_add_f32(dst, blk.dq_source(t), rows * HEAD_DIM * 4);
        bulk_commit();
        if (ORDERED) {
            bulk_wait<0>();   // added, so the next key tile down may
            pass_turn(blk, sems, mt);
        } else {
            bulk_wait_read<0>();
        }
        mbar_arrive(DQ_IN_SLOT ? blk.empty_bar(src) : blk.dq_empty_bar(src));
        if (!ORDERED && store) {   // the others may add once the store has landed
            bulk_wait<0>();
            fence_proxy_async_global();
            sem_release_add(sems + mt, STORED);
        }
        // advance()'s rule on a bare tile index (one step function shared by both, as a
        // group_step or not, moved the non-staggered SASS: 8 instructions, 2 more spills).
#if STAGGER
        if (++mt == blk.m_tiles)
            mt = blk.mt_begin;
        if (mt == blk.walk_start()) {   // a new head
#else
        if (++mt == blk.m_tiles) {   // a new head
            mt = blk.mt_begin;
#endif
            dq_rows += (long long)blk.head_rows(args) * HEAD_DIM;
            if (ORDERED || STORE_FIRST)
                sems += (args.seqlen_q + FT_DQ_SEM_ROWS - 1) / FT_DQ_SEM_ROWS;
        }
    }
}

FT_DEVICE void dkdv_producer(const ft_bwd_args &args, dkdv_block blk)
{
    setmaxnreg_dec<PRODUCER_NREG>();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (!PERSISTENT) {
        describe_block(blk, args, 0);   // after the split, so that nothing is carried across it
        if (warp == 0 && lane == 0) {
            load_unit_qdo(args, blk, 0);
        } else if (warp == 2) {
            load_unit_ld(args, blk, 0, lane);
        } else if (warp == 1 && lane == 0) {
            add_unit_dq(args, blk, 0);
            bulk_wait<0>();
        }
        return;
    }
    if (warp > 2 || (warp == 1 && lane > 0))
        return;
    // (A loop a role, not one with the roles inside: each then holds only its own role's registers.)
    int g = 0;
    if (warp == 0) {
        for (int u = first_unit(blk.first_unit_idx()), k = 1; unit_in(args, u); k++) {
            describe_block(blk, args, u);   // after the split, so that nothing is carried across it
            if (lane == 0)
                load_unit_qdo(args, blk, g);
            g += blk.steps();
            u = publish_next_unit(args, blk, k, lane);
        }
        return;
    }
    if (warp == 2) {
        for (int u = first_unit(blk.first_unit_idx()), k = 1; unit_in(args, u); k++) {
            describe_block(blk, args, u);
            load_unit_ld(args, blk, g, lane);
            g += blk.steps();
            u = read_next_unit(blk, k);
        }
        return;
    }
    for (int u = first_unit(blk.first_unit_idx()), k = 1; unit_in(args, u); k++) {
        describe_block(blk, args, u);
        add_unit_dq(args, blk, g);
        g += blk.steps();
        u = read_next_unit(blk, k);
    }
    bulk_wait<0>();
}

// SPLIT_COLS: the consumers meet on an mbarrier (meetings counts its phases in each thread): the
// two warpgroups run different code (dkdv_split<CW>), and two instructions of one named barrier
// are what compute-sanitizer's synccheck reports as divergence (bar.sync is the aligned form,
// whose threads the PTX ISA has all execute one instruction).
FT_DEVICE void consumers_meet(const dkdv_block &blk, unsigned &meetings)
{
    mbar_arrive(blk.meet_bar());   // releases this thread's shared-memory writes
    mbar_wait(blk.meet_bar(), meetings++ & 1);
}

// A consumer's start (all kinds): its registers, the block's (first unit's) description, K and V
// of the key tile loaded by all the consumer threads, and their one meeting before the loop.
FT_DEVICE dkdv_thread consumer_start(const ft_bwd_args &args, dkdv_block &blk, unsigned &meetings)
{
    setmaxnreg_inc<CONSUMER_NREG>();
    describe_block(blk, args, first_unit(blk.first_unit_idx()));
    const dkdv_thread th = consumer_thread(threadIdx.x - 128);
    if constexpr (KEY_MAPS) {
        if (th.t == 0)
            copy_key_tile(args, blk);
        mbar_wait(blk.keys_bar(), 0);   // the first unit's phase (dkdv_consumer waits for the next ones)
    } else {
        load_key_tile<CONSUMER_THREADS>(args, blk, th.t);
        cp_async_wait<0>();
        fence_proxy_async();   // K and V came through the generic proxy; wgmma reads them
    }
    if constexpr (SPLIT_COLS)
        consumers_meet(blk, meetings);
    else
        named_barrier_sync(1, CONSUMER_THREADS);
    return th;
}

FT_DEVICE void dkdv_consumer(const ft_bwd_args &args, dkdv_block blk)
{
    unsigned meetings = 0;
    const dkdv_thread th = consumer_start(args, blk, meetings);

    const float scale_log2 = softmax_log2_scale(args);
    int g = 0;   // the block's query tiles before this unit's (dkdv_producer)
    // The last dQ tile written and not yet handed to the dQ warp (-1: none). Its fence waits for
    // the thread's 16-byte stores to land (MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S), and with DQ_FIRST
    // dK's product was done before they were: the fence, the arrive behind it and the wait for a
    // free dQ tile took a share of the stall samples at head dim 64, 128 rows, causal N 1024 (H200,
    // notes/kernels.md). Handed over once the next tile's S^T and dP^T are issued, the stores
    // drain under those products; the dQ warp still has a whole tile's time to read it.
    int dq_held = -1;
    const auto hand_dq = [&] {
        if (dq_held >= 0) {
            fence_proxy_async();   // the copy engine reads the tile
            mbar_arrive(blk.dq_full_bar(dq_held));
            dq_held = -1;
        }
    };
    for (int u = first_unit(blk.first_unit_idx()), k = 1;; k++) {
        float dk[DK_REGS], dv[DV_REGS];
        zero(dk);
        zero(dv);
        group_step s = blk.first_step();
        for (int i = 0; i < blk.steps(); i++, blk.advance(s)) {
            const int t = g + i, st = t % NUM_STAGES, buf = t % BUFFERS, m0 = s.mt * BLOCK_M;
            mbar_wait(blk.full_bar(st), (t / NUM_STAGES) & 1);   // Q, dO, L, delta of the tile
            float ds[S_REGS];
            unsigned dsa[M_STEPS][4];
            tile_gradients(ds, dsa, dk, dv, args, blk, th, st, m0, scale_log2, hand_dq);
            const unsigned ds_tile = blk.ds_smem(buf);
            if (BUFFERS == 1)   // (WIDE_KEYS) the other consumer's products of the last tile read it
                named_barrier_sync(1, CONSUMER_THREADS);
            // dS^T stored from its packed pairs (dK's A registers) where dK's product reads them:
            // the fp32 form dies at the packing, which spared registers (d64 128-row tiles: 68 ->
            // 16 bytes spilled). With DQ_MODE ordered the pairs' registers made the producer spill.
            if constexpr (DK_SS || ORDERED)
                store_ds(ds_tile, ds, th);
            else
                store_ds(ds_tile, dsa, th);
            fence_proxy_async();   // the stores above, before wgmma reads them
            // Every warpgroup's dS^T is in place. With two buffers, buffer buf was last read by
            // tile t-2's dQ products, which every warpgroup waited for before tile t-1's meeting here.
            named_barrier_sync(1, CONSUMER_THREADS);
            float dq[DQ_REGS];
            // LATE_DK: dK after the meeting, before dQ or (DQ_FIRST) after it, under dQ's store.
            const unsigned stage = blk.slot(st), ds_rows = ds_tile + th.cw * 64 * 128;
            auto late_dk = [&] {
                DK_SS ? issue_dk_ss(dk, ds_rows, stage) : issue_dk<0>(dk, dsa, stage);
                wg_commit();
            };
            if (LATE_DK && !DQ_FIRST) {
                wg_fence();
                late_dk();
            }
            if (WIDE_KEYS) {   // dQ a 64-column panel at a time: the first consumer's one, the second's two
                const int dqt = t % DQ_TILES;
                const bool full_tile = EVEN_M || m0 + BLOCK_M <= blk.seqlen_q(args);
                for (int q = 0; q <= th.cw; q++) {
                    issue_dq(dq, blk, ds_tile, th.cw, q);   // (fences first)
                    wg_commit();
                    if (DQ_FIRST && q == 0) {
                        late_dk();
                        wg_wait<1>();   // this panel (and dV) done; dK runs on under its store
                    } else {
                        wg_wait<0>();
                    }
                    wg_pin(dq);
                    wg_pin(dv);
                    if (q == 0)
                        mbar_wait(blk.dq_empty_bar(dqt), ((t / DQ_TILES) & 1) ^ 1);
                    if (full_tile)
                        dq_to_tile(blk.dq_smem(dqt), dq, th, q);
                    else
                        dq_rows<false>((float *)blk.generic(blk.dq_smem(dqt)), dq, th, blk.seqlen_q(args) - m0, q);
                }
                wg_wait<0>();   // dK done: Q, dO, L, delta of slot st read for the last time
                wg_pin(dk);
                mbar_arrive(blk.empty_bar(st));
                dq_held = dqt;   // handed over under the next tile's products (hand_dq)
                continue;
            }
            if (LATE_DK) {
                issue_dq(dq, blk, ds_tile, th.cw);   // (fences first)
                wg_commit();
                if (DQ_FIRST)
                    late_dk();
                wg_wait<DQ_FIRST ? 1 : 0>();   // dV and dQ done (and dK, unless DQ_FIRST)
                wg_pin(dq);
                wg_pin(dv);
                if (!DQ_FIRST) {
                    wg_pin(dk);
                    mbar_arrive(blk.empty_bar(st));
                }
            } else {
                dq_product(dq, dk, dv, blk, ds_tile, th.cw);
                mbar_arrive(blk.empty_bar(st));   // Q, dO, L, delta of slot st read for the last time
            }
            const int dqt = t % DQ_TILES;   // the dQ tile (one per dS^T buffer, or one)
            if (add_dq_halves(dq, blk, th)) {
                mbar_wait(blk.dq_empty_bar(dqt), ((t / DQ_TILES) & 1) ^ 1);
                if (EVEN_M || m0 + BLOCK_M <= blk.seqlen_q(args))
                    dq_to_tile(blk.dq_smem(dqt), dq, th);
                else
                    dq_rows<false>((float *)blk.generic(blk.dq_smem(dqt)), dq, th, blk.seqlen_q(args) - m0);
            }
            dq_held = dqt;   // handed over under the next tile's products (hand_dq)
            if (DQ_FIRST) {
                wg_wait<0>();   // dK done
                wg_pin(dk);
                mbar_arrive(blk.empty_bar(st));   // Q, dO, L, delta of slot st read for the last time
            }
        }
        hand_dq();   // the unit's last dQ tile
        g += blk.steps();
        const int next = PERSISTENT ? read_next_unit(blk, k) : 0;
        const bool more = PERSISTENT && unit_in(args, next);
        if (more || STAGED_EPILOGUE)   // every consumer's products (which read K, V, the dS^T tiles) are done
            named_barrier_sync(1, CONSUMER_THREADS);
        if (more) {   // the next unit's K and V, under this unit's dK and dV stores
            dkdv_block up = blk;
            describe_block(up, args, next);
            if (!KEY_MAPS)   // (t opaque: else the first load's offsets, the same, stay live across the loop)
                load_key_tile<CONSUMER_THREADS>(args, up, (int)opaque((unsigned)th.t));
            else if (th.t == 0)
                copy_key_tile(args, up);
        }
        describe_block(blk, args, u);   // again: cheaper than holding the epilogue's indices across the loop
        if (STAGED_EPILOGUE)
            stage_and_store_dk_dv(args, blk, consumer_thread(threadIdx.x - 128), dk, dv);
        else
            store_dk_dv<0>(args, blk, consumer_thread(threadIdx.x - 128), dk, dv);
        if (!more)
            break;
        u = next;
        describe_block(blk, args, u);
        if (KEY_MAPS) {
            mbar_wait(blk.keys_bar(), k & 1);   // unit k + 1's K and V (unit 1 took phase 0)
        } else {
            cp_async_wait<0>();
            fence_proxy_async();   // K and V came through the generic proxy; wgmma reads them
        }
        named_barrier_sync(1, CONSUMER_THREADS);
    }
}

// Consumer CW with the columns split (SPLIT_COLS: head dims 192 and 256; split_gradients).
// DQ_IN_SLOT: a tile's dQ goes into its ring slot: its Q and dO are no longer read once this
// warpgroup's products are done and the other's S^T or dP^T was (before the hand-off waited
// for), and the slot's region of a consumer (thread order, as dq_to_tile writes) is the panels
// only it reads (q_panel). The dQ warp adds it from there and only then frees the slot for the
// producer. Else (192 over 128: dQ is larger than a slot's Q and dO) the slot is freed once this
// warpgroup's products are done, and dQ goes to the dQ tile once the dQ warp has read the last.
template <int CW>
FT_DEVICE void dkdv_split(const ft_bwd_args &args, dkdv_block blk)
{
    unsigned meetings = 0;
    const dkdv_thread th = consumer_start(args, blk, meetings);

    const float scale_log2 = softmax_log2_scale(args);
    float dk[dk_cols(CW) / 2], dv[dv_cols(CW) / 2];
    zero(dk);
    zero(dv);
    group_step s = blk.first_step();
    for (int i = 0; i < blk.steps(); i++, blk.advance(s)) {
        const int st = i % NUM_STAGES, m0 = s.mt * BLOCK_M;
        mbar_wait(blk.full_bar(st), (i / NUM_STAGES) & 1);   // Q, dO, L, delta of the tile
        split_gradients<CW>(dk, dv, args, blk, th, i, st, m0, scale_log2);
        float dq[bwd_wgmma_dq_cols(BLOCK_M, HEAD_DIM, NUM_WG, CW) / 2];
        dq_product(dq, dk, dv, blk, blk.ds_smem(0), CW);
        const bool full_tile = EVEN_M || m0 + BLOCK_M <= blk.seqlen_q(args);
        unsigned dq_tile = blk.slot(st);
        if (!DQ_IN_SLOT) {
            mbar_arrive(blk.empty_bar(st));   // Q, dO, L, delta of slot st read for the last time
            mbar_wait(blk.dq_empty_bar(0), (i & 1) ^ 1);
            dq_tile = blk.dq_smem(0);
        } else if (!full_tile) {   // row-major rows cross both regions: both warpgroups' products must be done
            consumers_meet(blk, meetings);
        }
        if (full_tile)
            dq_to_tile(dq_tile, dq, th);
        else
            dq_rows<false>((float *)blk.generic(dq_tile), dq, th, blk.seqlen_q(args) - m0);
        fence_proxy_async();   // the copy engine reads the tile
        mbar_arrive(blk.dq_full_bar(DQ_IN_SLOT ? st : 0));
    }
    describe_block(blk, args, 0);
    store_dk_dv<CW>(args, blk, consumer_thread(threadIdx.x - 128), dk, dv);
}

// args is __grid_constant__: the copy engine reads the tensor maps in it where they lie.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
ft_bwd_dkdv(const __grid_constant__ ft_bwd_args args)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    dkdv_block blk;
    blk.k_smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
    blk.base = smem_raw + (blk.k_smem - smem_addr(smem_raw));
    if (VARLEN && !ORDERED && !PERSISTENT) {   // (one block a unit: DQ_MODE ordered takes its tile from a ticket)
        int bh, key_tile, part;
        ft_schedule_block(blockIdx.x, blockIdx.y, SPLITS, &bh, &key_tile, &part);
        if (past_keys(args, key_tile, bh))
            return;   // the whole block, before any barrier
    }
    if (threadIdx.x == 0) {
        init_barriers(blk, args.dq_ticket);
        if (PACKED_WALK) {
            *blk.cursor() = ft_packed_start(args.cu_seqlens_k, args.batch, BLOCK_N);
            *blk.packed_group() = order_heads(args);
            *blk.first_unit_idx() = packed_unit(args, blk, (int)blockIdx.x);
        }
    }
    __syncthreads();   // the barriers exist before anyone waits on them; the ticket (the first unit) is known
    if (PACKED_WALK && *blk.first_unit_idx() < 0)
        return;   // past the packed batch's units: the whole block, nothing in flight
    if (VARLEN && ORDERED) {   // the tile is known only now: the whole block leaves, nothing in flight
        int key_tile, bh, part;
        block_tile(blk, args, 0, key_tile, bh, part);
        if (past_keys(args, key_tile, bh))
            return;
    }
    if constexpr (!PRODUCER) {
        describe_block(blk, args, 0);
        dkdv_inline(args, blk);
    } else if (threadIdx.x < 128) {
        dkdv_producer(args, blk);
    } else {
        if constexpr (SPLIT_COLS) {
            if (threadIdx.x < 256)
                dkdv_split<0>(args, blk);
            else
                dkdv_split<1>(args, blk);
        } else
            dkdv_consumer(args, blk);
    }
}

// ---- ft_bwd_dq_convert: dq = scale * dq_accum ------------------------------------------------
// dq = 0 for the query rows [m0, + BLOCK_M) of query head row bh (of batch * heads), within the
// sequence, its data columns.
FT_DEVICE void zero_dq_rows(const ft_bwd_args &args, const ft_seq &sq, int bh, int m0)
{
    constexpr int CPR = HEAD_DIM / 8;   // 16-byte chunks a row
    const int b = bh / args.heads, h = bh % args.heads;
    const int rows = min(BLOCK_M, sq.seqlen_q - m0);
    elem_t *dq = (elem_t *)args.dq + seq_offset(args.dq_stride, b, h, sq.q0) + m0 * args.dq_stride[2];
    for (int c = threadIdx.x; c < rows * CPR; c += NUM_THREADS) {
        const int row = c / CPR, col = (c % CPR) * 8;
        if (QK_DATA == HEAD_DIM || col < QK_DATA)
            *(uint4 *)(dq + row * args.dq_stride[2] + col) = make_uint4(0, 0, 0, 0);
    }
}

// DQ_TRANSPOSED: a full tile's chunk c of consumer w's thread t (warp ww, lane 4i + qd) holds
// columns 64w + 16ww + i and + 8 of queries 8c + 2qd and + 1 (dq_to_tile). So a unit (w, ww, qd,
// c) reads chunk c of the eight threads i = 0..7 (x[i]: 128 bytes) and writes two queries' 16
// columns: x[i].x, .z for the first query, .y, .w for the second. A warp takes one c: it reads
// that chunk of every thread (4 KB, whole sectors) and writes 8 rows' 256 bytes.
FT_DEVICE void convert_transposed(const float4 *src, elem_t *dq, long long ld, float scale)
{
    constexpr int CHUNKS = BLOCK_M / 8, UNITS = DQ_REGIONS * 4 * 4 * CHUNKS;
    static_assert(!DQ_TRANSPOSED || UNITS * 128 == DQ_TILE_BYTES, "every chunk of the tile is read once");
    for (int u = threadIdx.x; u < UNITS; u += NUM_THREADS) {
        const int ww = u % 4, w = (u / 4) % DQ_REGIONS, qd = (u / (4 * DQ_REGIONS)) % 4, c = u / (16 * DQ_REGIONS);
        const float4 *chunk = src + (w * CHUNKS + c) * 128 + 32 * ww + qd;
        float4 x[8];
#pragma unroll
        for (int i = 0; i < 8; i++)
            x[i] = chunk[4 * i];
        const int q = 8 * c + 2 * qd, col = DQ_COLS0 * w + 16 * ww;
#pragma unroll
        for (int half = 0; half < 2; half++) {   // columns col + 8*half: .x/.y, then .z/.w
            if (QK_DATA < HEAD_DIM && col + 8 * half >= QK_DATA)
                continue;   // padding past the head dim's data
            float a[8], b[8];
#pragma unroll
            for (int i = 0; i < 8; i++) {
                a[i] = (half ? x[i].z : x[i].x) * scale;
                b[i] = (half ? x[i].w : x[i].y) * scale;
            }
            *(uint4 *)(dq + q * ld + col + 8 * half) =
                make_uint4(pack2(a[0], a[1]), pack2(a[2], a[3]), pack2(a[4], a[5]), pack2(a[6], a[7]));
            *(uint4 *)(dq + (q + 1) * ld + col + 8 * half) =
                make_uint4(pack2(b[0], b[1]), pack2(b[2], b[3]), pack2(b[4], b[5]), pack2(b[6], b[7]));
        }
    }
}

// A full query tile of dq_accum holds ft_bwd_dkdv's accumulators in thread order (as its dQ
// store writes them): warpgroup 0's region, then (DQ_REGIONS 2) warpgroup 1's, its DQ_COLS1 columns from DQ_COLS0
// (DQ_SPLIT_ROWS: all the columns of rows 64 on);
// in a region, 16-byte chunk c*128 + t is registers 4c..4c+3 of the warpgroup's thread t. A last
// partial tile is row-major (common/ft_bwd_steps.cuh converts it). VARLEN: full and partial are
// the sequence's (dkdv's choice), its rows at seq_row. DQ_INIT store: a tile no key tile reached
// holds nothing of this backward's; its dQ is zero.
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_dq_convert(const ft_bwd_args args)
{
    int bh, m_tile, part;   // the query head row (batch * heads) and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &m_tile, &part);
    const int m0 = m_tile * BLOCK_M;
    const ft_seq sq = seq_of(args, bh / args.heads);
    if (VARLEN && m0 >= sq.seqlen_q)
        return;   // past the sequence's queries (the grid is sized by the longest)
    if (STORE_FIRST && query_sems(args, bh)[m_tile] == 0) {
        zero_dq_rows(args, sq, bh, m0);
        return;
    }
    if (!EVEN_M && m0 + BLOCK_M > sq.seqlen_q) {
        bwd_dq_convert_rows<NUM_THREADS, BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M>(args);
        return;
    }
    const int b = bh / args.heads, h = bh % args.heads;
    const float scale = (float)args.softmax_scale;
    const long long row0 = seq_row(args, sq, b, h, bh);
    const float *rows = (const float *)args.dq_accum + (row0 + m0) * HEAD_DIM;
    const float4 *src = (const float4 *)rows;
    elem_t *dq = (elem_t *)args.dq + seq_offset(args.dq_stride, b, h, sq.q0) + m0 * args.dq_stride[2];
    const long long ld = args.dq_stride[2];
    if constexpr (DQ_TRANSPOSED) {
        convert_transposed(src, dq, ld, scale);
        return;
    }
    // Chunk c of thread t holds rows r and r + 8, columns col0 + 8c + 2(t%4) and the next: the
    // four threads t0..t0+3 of a lane quad together hold 8 whole columns of both rows. So each
    // converting thread takes one (quad, c): 64 contiguous bytes in, two 16-byte rows out;
    // consecutive threads take consecutive c, so a warp writes whole 128-byte row segments.
    constexpr int C0 = DQ_COLS0 / 8, C1 = DQ_COLS1 / 8;   // chunks per dkdv thread of each warpgroup
    constexpr int UNITS0 = 32 * C0;                       // (quad, chunk) units of warpgroup 0
    for (int i = threadIdx.x; i < DQ_TILE_BYTES / 64; i += NUM_THREADS) {
        const bool second = DQ_REGIONS == 2 && i >= UNITS0;
        const int u = second ? i - UNITS0 : i, chunks = second ? C1 : C0;
        const int c = u % chunks, t0 = 4 * (u / chunks);
        const int r = 16 * ((t0 / 32) % 4) + (t0 % 32) / 4 + (second && DQ_SPLIT_ROWS ? 64 : 0);
        const int col = (second && !DQ_SPLIT_ROWS ? DQ_COLS0 : 0) + 8 * c;
        if (QK_DATA < HEAD_DIM && col >= QK_DATA)
            continue;   // padding past the head dim's data
        const float4 *region = src + (second ? 128 * C0 : 0);
        float4 x[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            x[k] = region[c * 128 + t0 + k];
        *(uint4 *)(dq + r * ld + col) =
            make_uint4(pack2(x[0].x * scale, x[0].y * scale), pack2(x[1].x * scale, x[1].y * scale),
                       pack2(x[2].x * scale, x[2].y * scale), pack2(x[3].x * scale, x[3].y * scale));
        *(uint4 *)(dq + (r + 8) * ld + col) =
            make_uint4(pack2(x[0].z * scale, x[0].w * scale), pack2(x[1].z * scale, x[1].w * scale),
                       pack2(x[2].z * scale, x[2].w * scale), pack2(x[3].z * scale, x[3].w * scale));
    }
}
