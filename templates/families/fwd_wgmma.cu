// families/fwd_wgmma.cu: FlashAttention forward on Hopper's warpgroup tensor cores (f16/bf16,
// f32 as TF32; wgmma.mma_async, sm_90a only). Each warpgroup (4 warps, 128 threads) owns 64 query rows.
// Q and the streamed K/V tiles sit in shared memory in the layout wgmma reads directly
// (128-byte swizzled panels), so no ldmatrix is needed: S = Q K^T takes both operands from
// shared memory, and O += P V takes P from the S accumulators in registers (the accumulator
// layout of a 64xN tile is the register A layout of the next product) and V transposed from
// shared memory. The online softmax is the one of fwd_mma, in registers.
// Two pipelines, chosen by NUM_WARPS (traits/fwd_wgmma.h):
//   inline (NUM_WARPS = BLOCK_M / 16): every warp loads K/V tiles by cp.async into the ring and
//     computes; a block barrier a tile guards the ring (both warpgroups in step).
//   producer (one more warpgroup, warpgroup 0): one of its threads loads the ring by the copy
//     engine (TMA), K and V of a slot each with a full mbarrier (the bytes landed) and an empty
//     one (every consumer is done with them). The consumers never meet after Q is in: each
//     waits only for its data. Registers move to the consumers (setmaxnreg). Two tunables shape
//     the consumers' schedule:
//     OVERLAP 1: tile t's S = Q K^T is issued with tile t-1's O += P V, and t's softmax runs
//       while that P V is in flight (two score tiles live: S of t, P of t-1).
//     PINGPONG 1: the consumers (two, or three at BLOCK_M 192) issue their products in turns
//       (named barriers), so that one's softmax runs under the others' products rather than
//       all at once.
//     Q comes by the copy engine too, on mbarriers of its own. PERSISTENT 1: the launcher
//       starts only the blocks that fit the GPU at once and each loops over query tiles
//       gridDim.x apart (tile_schedule), the producer loading the next tile's Q, K and V while
//       the consumers finish this one; the ring's slots and phases run on across tiles. With
//       two Q tiles, O leaves by the copy engine from its tile's Q place (ASYNC_O), so the
//       consumers start the next tile while it is written.
//     MULTICAST 1: the blocks of two adjacent query tiles of a head run as a cluster and share
//       each K/V tile's load: each producer brings half of its keys into both blocks (the copy
//       engine's multicast), so the L2 serves a tile once for the pair.
// Variable-length batches (VARLEN 1): a tile's sequence (seq_of) gives its lengths, band and
// first rows; the copy engine's maps are one packed sequence, so its boxes are placed at the
// sequence's first row (map_batch). A query tile past its sequence's end is no tile at all: a
// block of the plain grid given one returns at once, and the persistent walk takes only the
// sequences' own tiles (tile_schedule; its consumers read each tile from the producer). Boxes
// may read past a sequence's end into the next one's rows, which are masked (keys) or never
// stored (queries) as rows past seqlen are in a dense batch; an O box never crosses the end
// (store_o_async).
// f32 (DTYPE f32, a producer required): tiles of 32 floats a panel row, k-steps of 8 floats;
// each product three TF32 products of operands split into a high part and a remainder (one
// with ALLOW_TF32; traits/fwd_wgmma.h), or with BF16_PARTS six 16-bit products of three
// bfloat16 parts (the split in place a row at a time, V read as it lies: issue_scores_parts,
// issue_pv_parts, split_rows_bf16; what follows here is the TF32 form's). The consumers split
// their Q rows in place once Q lands (the high parts where it lay, the remainders in a plane
// beside it); the producer's warps 1-3 split each K tile the same way, and write each V tile
// transposed into planes of high parts and remainders (V^T: the .tf32 forms read B K-major
// only, and P V's K is the keys), then marks the slot ready (K and V ready mbarriers), which is
// what the consumers wait for. P's A registers come from S's accumulators in the key order 0,2,4,6,1,3,5,7 of each
// 8-key step (what a thread holds: keys 2q, 2q+1 as columns q, q+4), and V^T's keys are written
// in the same order, so the product is unchanged.

// ---- traits (traits/fwd_wgmma.h): tunables come from the generator's #defines --------------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr int NUM_WG = fwd_wgmma_consumers(BLOCK_M);       // consumer warpgroups, 64 rows each
constexpr bool PRODUCER = fwd_wgmma_has_producer(BLOCK_M, NUM_WARPS);   // warpgroup 0 loads K and V
constexpr int CONSUMER_THREADS = NUM_WG * 128;
constexpr bool F32 = DTYPE == FT_DTYPE_F32;
constexpr int FORM = fwd_wgmma_form(ALLOW_TF32, BF16_PARTS);   // f32: TF32 products, three or one, or bf16 parts
constexpr bool PARTS = fwd_wgmma_parts(DTYPE, FORM) != 0;      // f32 in three bfloat16 parts (BF16_PARTS)
constexpr int S_REGS = BLOCK_N / 2;        // fp32 S accumulators per thread (64 x BLOCK_N / 128)
constexpr int O_REGS = HEAD_DIM_V / 2;     // fp32 O accumulators per thread
// A k-step's elements: 32 bytes (16 halves, 8 floats), or BF16_PARTS 16 columns (of each part).
constexpr int K_STEP = PARTS ? 16 : 32 / (int)sizeof(elem_t);
constexpr int P_STEPS = BLOCK_N / K_STEP;  // k-steps of P V
constexpr int QK_STEPS = (QK_DATA + K_STEP - 1) / K_STEP;   // k-steps of Q K^T (padding past the data skipped)
// Narrow panels (traits): Q, K and V in 64-byte rows of 32 columns, 64-byte swizzle, where head
// dim 96 fills three; else 128-byte rows (64 16-bit columns, 32 floats), 128-byte swizzle. P's
// tile (P_SMEM) keeps 128-byte rows either way.
constexpr bool NARROW = fwd_wgmma_narrow(BLOCK_M, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, DTYPE);
constexpr int ROW_BYTES = fwd_wgmma_row_bytes(BLOCK_M, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, DTYPE);
constexpr int PANEL_COLS = ROW_BYTES / (int)sizeof(elem_t);   // a panel row's elements
constexpr int PANEL_STEPS = ROW_BYTES / 32;                   // k-steps (32 bytes) a panel row holds
constexpr int ATOM_BYTES = 8 * ROW_BYTES;                     // 8 rows: one swizzle pattern
// f32: the planes of Q and K (high parts, and remainders unless ALLOW_TF32), and of V^T; with
// BF16_PARTS the three parts of Q, K and V.
constexpr int PLANES = fwd_wgmma_planes(DTYPE, FORM);
// Shared memory: 1024 bytes of alignment slack, the Q tile, NUM_STAGES x (K tile, V tile), each
// stored as panels of PANEL_COLS columns (panel_offset in arch/sm90.cuh for 128-byte rows); with a
// producer, 1024 bytes of mbarriers (K full, V full, K empty, V empty a slot). In 128-byte rows
// head dim 96 takes two panels (narrow panels, beside a producer, take three exactly), the second
// half unused: cp.async leaves it unwritten, the copy engine fills it with zeros (its box runs
// past the tensor), and no product reads it (Q K^T's k-steps and P V's columns stop at 96).
// Columns past a padded head dim's data (DATA_DIM) get zeros both ways.
// f32: Q and K take PLANES planes each (Q_PLANE_BYTES, K_PLANE_BYTES apart), and a stage holds
// after V as it lands V^T in PLANES planes of HEAD_DIM_V rows by BLOCK_N keys, in panels of 32
// keys (VT_PANEL_BYTES apart).
// BF16_PARTS: Q, K and V land as floats (Q_PLANE_BYTES, K_PLANE_BYTES and V_BYTES of them), each
// 64 columns' two float panels followed by a free third (landing_panel): a tile takes half as
// much again, and once split a group's three panels hold its high, middle and low parts.
constexpr int D_PANELS = fwd_wgmma_panel_cols(HEAD_DIM, DTYPE, NARROW) / PANEL_COLS;
constexpr int DV_PANELS = fwd_wgmma_panel_cols(HEAD_DIM_V, DTYPE, NARROW) / PANEL_COLS;
constexpr int Q_PLANE_BYTES = BLOCK_M * D_PANELS * ROW_BYTES;
constexpr int K_PLANE_BYTES = BLOCK_N * D_PANELS * ROW_BYTES;
constexpr int Q_BYTES = PARTS ? Q_PLANE_BYTES / 2 * 3 : PLANES * Q_PLANE_BYTES;
constexpr int K_BYTES = PARTS ? K_PLANE_BYTES / 2 * 3 : PLANES * K_PLANE_BYTES;
constexpr int V_BYTES = BLOCK_N * DV_PANELS * ROW_BYTES;   // as V lands
constexpr int V_ROOM = PARTS ? V_BYTES / 2 * 3 : V_BYTES;
constexpr int VT_PANEL_BYTES = HEAD_DIM_V * 128;
constexpr int VT_PLANE_BYTES = F32 && !PARTS ? BLOCK_N / 32 * VT_PANEL_BYTES : 0;
constexpr int STAGE_BYTES = K_BYTES + V_ROOM + PLANES * VT_PLANE_BYTES;
// The panel of a Q, K or V tile that landed panel p (PANEL_COLS columns) goes to: BF16_PARTS
// leaves every third free for its group's low parts.
FT_DEVICE constexpr int landing_panel(int p) { return PARTS ? 3 * (p / 2) + p % 2 : p; }
static_assert(!PARTS || (D_PANELS % 2 == 0 && DV_PANELS % 2 == 0), "BF16_PARTS: whole groups of 64 columns");
constexpr int PANEL_BYTES = BLOCK_N * ROW_BYTES;   // a panel of a K or V tile: one copy-engine box
constexpr int BAR_BYTES = PRODUCER ? 1024 : 0;
// Q tiles: two where a persistent block's next Q fits beside this one's (traits), else one.
constexpr int Q_TILES =
    fwd_wgmma_q_tiles(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, NUM_STAGES, PERSISTENT, DTYPE, FORM, P_SMEM);
// P_SMEM: each consumer warpgroup's P tile (64 rows by BLOCK_N keys) after the mbarriers, as Q is
// laid out (64-key panels of 64 rows, 128-byte rows, swizzled): the A of an SS P V.
constexpr int P_BYTES = (int)fwd_wgmma_p_bytes(BLOCK_M, BLOCK_N, P_SMEM) / NUM_WG;   // a warpgroup's
constexpr int SMEM_END = 1024 + Q_TILES * Q_BYTES + NUM_STAGES * STAGE_BYTES + BAR_BYTES + NUM_WG * P_BYTES;
// O staged in the tile's Q place and written by the copy engine (traits): then one thread of each
// consumer warpgroup gives the Q place back, once the engine has read it; else every consumer
// thread does, with the tile's last scores.
constexpr bool ASYNC_O =
    fwd_wgmma_async_o(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, NUM_STAGES, PERSISTENT, DTYPE, FORM, P_SMEM);
constexpr int Q_EMPTY_COUNT = ASYNC_O ? NUM_WG : CONSUMER_THREADS;
// MULTICAST: a cluster of CLUSTER blocks (adjacent query tiles of one head, the same key tiles),
// each block's producer loading KV_BOX_ROWS keys of every K/V tile (its rank's share) into all of
// them: a slot frees only when every consumer of the cluster is done with it (its empty barriers
// then count one arrival a consumer warpgroup of the cluster, producer_ring::release_slot), and
// each block's full barrier expects the whole tile, its share and the others'.
constexpr int CLUSTER = fwd_wgmma_cluster(MULTICAST);
constexpr int KV_BOX_ROWS = BLOCK_N / CLUSTER;
static_assert(CLUSTER == (MULTICAST ? 2 : 1), "MULTICAST: __cluster_dims__ (ft_fwd) says 2 blocks");
static_assert(KV_BOX_ROWS % 8 == 0, "MULTICAST: each share of a key tile starts on a whole swizzle pattern");
constexpr int EMPTY_COUNT = MULTICAST ? NUM_WG * CLUSTER : CONSUMER_THREADS;
constexpr int MIN_BLOCKS =
    fwd_wgmma_min_blocks(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, NUM_STAGES, DTYPE, FORM);
constexpr int PRODUCER_NREG = fwd_wgmma_producer_regs(DTYPE);
constexpr int CONSUMER_NREG = fwd_wgmma_consumer_regs(BLOCK_M, NUM_WARPS, DTYPE);

constexpr int RULE = fwd_wgmma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, NUM_STAGES, OVERLAP, PINGPONG,
                                    PERSISTENT, DTYPE, FORM, MULTICAST, CAUSAL, VARLEN, P_SMEM);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16 || F32, "DTYPE: fwd_wgmma takes f16, bf16 or f32");
static_assert(RULE != FWD_WGMMA_BAD_TF32, "ALLOW_TF32: 0 in f16 and bf16");
static_assert(RULE != FWD_WGMMA_BAD_F32, "f32 needs a producer warpgroup and BLOCK_N a multiple of 32");
static_assert(RULE != FWD_WGMMA_BAD_WARPS, "NUM_WARPS must be BLOCK_M/16 (consumers only) or BLOCK_M/16 + 4 (and a "
                                           "producer warpgroup)");
static_assert(RULE != FWD_WGMMA_BAD_BLOCK_M, "BLOCK_M must be 64, 128 or 192 (64 rows a consumer warpgroup)");
static_assert(RULE != FWD_WGMMA_BAD_BLOCK_N, "BLOCK_N must be a multiple of 16 from 64 to 192 (f32: of 32 from 32 "
                                             "to 128)");
static_assert(RULE != FWD_WGMMA_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be 64, 96, 128, 192 or 256 (f32: to 128)");
static_assert(RULE != FWD_WGMMA_BAD_REGISTERS, "BLOCK_N, HEAD_DIM_V, NUM_WARPS: accumulators would spill");
static_assert(RULE != FWD_WGMMA_BAD_OVERLAP, "OVERLAP needs a producer warpgroup");
static_assert(RULE != FWD_WGMMA_BAD_PINGPONG, "PINGPONG needs a producer warpgroup and two or three consumers");
static_assert(RULE != FWD_WGMMA_BAD_PERSISTENT, "PERSISTENT needs a producer warpgroup");
static_assert(RULE != FWD_WGMMA_BAD_MULTICAST, "MULTICAST needs 16-bit, a producer, one block a tile, no mask, a dense "
                                               "batch");
static_assert(RULE != FWD_WGMMA_BAD_P_SMEM, "P_SMEM needs 16-bit and a producer warpgroup");
static_assert(RULE != FWD_WGMMA_BAD_PARTS, "BF16_PARTS needs f32 without TF32, a producer, key tiles of 32 or 64 and "
                                           "head dims 64 or 128");
static_assert(!NARROW || (PRODUCER && !F32 && !ASYNC_O),
              "narrow panels: the copy engine lands them, and the consumers write no 128-byte pattern into them");
static_assert(Q_BYTES % 1024 == 0 && STAGE_BYTES % 1024 == 0 && PANEL_BYTES % ATOM_BYTES == 0 &&
                  (BLOCK_M * ROW_BYTES) % ATOM_BYTES == 0,
              "every panel starts on a whole swizzle pattern, and P's tiles after them on 1024 bytes");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES must be 1..4");
static_assert(SMEM_END == FT_SMEM_BYTES_ft_fwd, "shared memory: the layout differs from traits/fwd_wgmma.h");
static_assert(!VARLEN || (!EVEN_M && !EVEN_N), "EVEN_M, EVEN_N: a variable-length batch's tails are masked");
// Named barriers beside the block's (0): the PINGPONG turns, one a consumer, then each consumer's
// ASYNC_O store (its 128 threads), then (f32) each consumer's Q split.
constexpr int TURN_BARRIER = 2, O_BARRIER = TURN_BARRIER + NUM_WG, Q_SPLIT_BARRIER = O_BARRIER + NUM_WG;

// The query tiles a block works on, one after the other: one (grid.x the tiles of a head, with
// MULTICAST rounded up to whole clusters, grid.y batch*heads), or PERSISTENT every gridDim.x-th of all batch*heads*m_tiles. Under a mask
// the query tiles run last-first: the later rows see more keys, and the longest tiles should
// start first so that the last ones to finish are short. PERSISTENT walks groups of heads whose
// K and V fit in 16 MB of L2 together (at most 8), a query tile of every head of the group
// before the next query tile, so that the blocks at work at once share a few heads' K and V in
// L2. Under a mask a persistent block takes its tiles in pairs of one head, the last query tile
// with the first, the second last with the second, ...: a causal pair sees the same number of
// keys whichever it is, so blocks dealt pairs in turn finish together. Dealt single tiles in
// turn, the most loaded of 132 blocks had far more than the mean at head dim 128 (a
// simulation of the key tiles visited), and the causal forward lost to one block a tile there.
// Only the position lives in registers (the consumers have none to spare: sizes kept in the
// struct spilled 88 bytes at head dim 128); the rest is recomputed from args at each take.
// VARLEN: a persistent block walks the packed batch's own units instead (traits/ft_packed.h),
// heaviest first over the sequences' tile counts, dealt round by round as a snake (the walk over
// the longest sequence's tiles, a sequence's tiles past its count skipped, left blocks idle on
// uneven lengths); its units are the same tiles and causal pairs, and the block keeps the walk's
// cursor. Each tile is decided here alone: the producer and the consumers (and f32's preparing
// warps) take the same ones, except that a packed batch's consumers read the producer's
// (TILE_IN_Q_PLACE).
struct tile_schedule {
    int next;      // the unit (a tile, or under a mask a pair; VARLEN persistent: the round) to take next
    bool second;   // under a mask: the short tile of the pair taken last comes next
#if VARLEN
    ft_packed_cursor cursor;
#endif
    FT_DEVICE explicit tile_schedule(const ft_fwd_args &args)
        : next(PERSISTENT && !VARLEN ? (int)blockIdx.x : 0), second(false)
    {
#if VARLEN
        cursor = ft_packed_start(args.cu_seqlens_q, args.batch, BLOCK_M);
#else
        (void)args;
#endif
    }
    // The query tiles of sequence b: a dense batch's all have m_tiles.
    FT_DEVICE static int seq_tiles(const ft_fwd_args &args, int b, int m_tiles)
    {
#if VARLEN
        return ft_packed_tiles(args.cu_seqlens_q, b, BLOCK_M);
#else
        return m_tiles;
#endif
    }
    // VARLEN, one tile a block: whether the block's is one (else the block does nothing).
    FT_DEVICE static bool block_has_tile(const ft_fwd_args &args)
    {
        int bh, tile, part;
        ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
        return tile < seq_tiles(args, bh / args.heads, (int)gridDim.x);
    }
    // The next tile as (query tile, batch*head), or false when the block is done. gridDim.x is the
    // tiles of a head only without clusters, which take no mask nor packed batch (the traits).
    static_assert(!MULTICAST || (!CAUSAL && !VARLEN && !PERSISTENT), "MULTICAST: gridDim.x is whole clusters");
    FT_DEVICE bool take(const ft_fwd_args &args, int &m_tile, int &bh)
    {
        const int m_tiles = PERSISTENT ? (args.seqlen_q + BLOCK_M - 1) / BLOCK_M : (int)gridDim.x;
        if (!PERSISTENT) {
            if (next > 0)
                return false;
            int tile, part;
            ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
            m_tile = CAUSAL ? seq_tiles(args, bh / args.heads, m_tiles) - 1 - tile : tile;
            next = 1;
            return true;   // VARLEN: ft_fwd returned where it is none (block_has_tile)
        }
        const int stride = VARLEN ? 1 : (int)gridDim.x;   // rounds, or unit numbers
        const int taken = second ? next - stride : next;   // the unit of this tile (VARLEN: its round)
        const int group = l2_head_group((long long)args.seqlen_k * (HEAD_DIM + HEAD_DIM_V) * (int)sizeof(elem_t));   // K and V
        int u;   // a head's query tile, or under a mask its pair
#if VARLEN
        int seq, head;
        if (!ft_packed_unit(&cursor, args.cu_seqlens_q, args.batch, BLOCK_M, CAUSAL, args.heads, group,
                            ft_packed_deal(taken, (int)blockIdx.x, (int)gridDim.x), &seq, &u, &head))
            return false;
        bh = seq * args.heads + head;
#else
        const int units = CAUSAL ? (m_tiles + 1) / 2 : m_tiles;   // pairs, or tiles
        const int bh_count = args.batch * args.heads;
        if (!second && taken >= units * bh_count)
            return false;
        ft_schedule_grouped(taken, group, units, bh_count, &u, &bh);
#endif
        if (!CAUSAL) {
            m_tile = u;
            next += stride;
        } else if (second) {   // the pair's short tile
            m_tile = u;
            second = false;
        } else {
            m_tile = seq_tiles(args, bh / args.heads, m_tiles) - 1 - u;
            next += stride;
            second = u < m_tile;   // a pair, not the middle tile of an odd count
        }
        return true;
    }
};

// What a block works on for one query tile: the tile, head, and the key tiles it visits,
// counted from the first (walk_keys: k and v point at it).
// Of its sequence (seq_of) a consumer keeps only what each key tile needs, its band (VARLEN;
// a dense batch's is the argument block's) and its last key (n_begin + keys); the rest is read
// again from the argument block where used (kept whole, it spilled 160-register consumers).
struct fwd_block {
    int m0, b, h, bh;
    const elem_t *k, *v;
    long long ks, vs;
    int n_tiles, n_begin, keys;
#if VARLEN
    int lo, hi;
#endif
};
FT_DEVICE fwd_block describe_block(const ft_fwd_args &args, int m_tile, int bh)
{
    fwd_block fb;
    fb.m0 = m_tile * BLOCK_M;
    fb.bh = bh;
    fb.b = fb.bh / args.heads;
    fb.h = fb.bh % args.heads;
    const ft_seq sq = seq_of(args, fb.b);
#if VARLEN
    fb.lo = sq.lo;
    fb.hi = sq.hi;
#endif
    fb.k = (const elem_t *)args.k + seq_offset(args.k_stride, fb.b, kv_head(args, fb.h), sq.k0);
    fb.v = (const elem_t *)args.v + seq_offset(args.v_stride, fb.b, kv_head(args, fb.h), sq.k0);
    fb.ks = args.k_stride[2];
    fb.vs = args.v_stride[2];
    const key_walk kw = walk_keys<BLOCK_M, BLOCK_N>(sq.lo, sq.hi, fb.m0, sq.seqlen_q, sq.seqlen_k, fb.k, fb.ks, fb.v,
                                                    fb.vs);
    fb.n_tiles = kw.n_tiles;
    fb.n_begin = kw.n_begin;
    fb.keys = kw.keys;
    return fb;
}

// K/V tile t (of those the block visits) into the stage at `stage` by THREADS threads (t: this
// one's index), with cp.async (the caller commits); keys past the sequence's are zero-filled.
template <int THREADS>
FT_DEVICE void load_kv(unsigned stage, const fwd_block &fb, int t, int thread)
{
    const int n0 = t * BLOCK_N;
    load_panels<BLOCK_N, HEAD_DIM, QK_DATA, EVEN_N, THREADS>(stage, fb.k + n0 * fb.ks, fb.ks, fb.keys - n0, thread);
    load_panels<BLOCK_N, HEAD_DIM_V, V_DATA, EVEN_N, THREADS>(stage + K_BYTES, fb.v + n0 * fb.vs, fb.vs, fb.keys - n0, thread);
}

// The thread's place in its consumer warpgroup: warp w of the consumers owns rows 16w..16w+15 of
// the tile, lane group g rows g and g + 8 of those, quad q its columns.
struct fwd_thread {
    int wg, row0, group, quad;
};
FT_DEVICE fwd_thread consumer_thread(int t)
{
    fwd_thread th;
    // From lane 0: the compiler then knows it is the warp's, so the products' descriptors (from
    // the warpgroup's Q rows) live in uniform registers, not in 16 vector ones moved over at
    // each k-step (R2UR; the SASS of 128 x 128 at head dim 128, notes/kernels.md).
    th.wg = __shfl_sync(0xffffffffu, t / 128, 0);
    th.row0 = (t / 32) * 16;
    th.group = (t % 32) / 4;
    th.quad = t % 4;
    return th;
}

// S = Q K^T for the warpgroup's 64 rows, issued (the caller fences before and commits after):
// K_STEP columns of the head dim per step (32 bytes); a panel is PANEL_STEPS steps. Each step's
// descriptors are the first's plus a constant (wg_desc_add), not built again (masks and shifts).
// f32: Q_lo K_hi + Q_hi K_lo + Q_hi K_hi a step (the remainders' planes lie Q_PLANE_BYTES and
// K_PLANE_BYTES past the high parts'; Q_hi K_hi alone with ALLOW_TF32), the two small products
// into an accumulator of their own without OVERLAP (s_lo, S_APART; land_scores adds it).
// The tensor cores' accumulation truncates each product's sum to the accumulator's precision,
// relative to what the accumulator holds: with all three products in one accumulator S took 48
// such truncations at head dim 128, each at S's own size, and O's error against float64 was
// twice the CUDA-core kernel's (2.02x at head dim 128, causal N 4096: notes/fp32.md). Apart,
// the small products' truncations are at 2^-11 of S's size, and S takes a third of them.
// With OVERLAP a tile's S is in flight beside the last tile's P V, its accumulator apart and P's
// two parts: a second score accumulator there spilled (NVRTC: 64 keys, or three consumers).
// BF16_PARTS: a k-step (16 columns, a quarter of a group's panel row) is four products into
// three accumulators: Q_hi K_hi alone (the large products); Q_hi against [K_mid; K_lo] and Q_mid
// against [K_hi; K_mid] (two key tiles tall: a group's three panels lie one after another) into
// one of twice the width, whose halves sum the products 2^-8 of the large ones' size (hm + mh)
// and those of 2^-16 (hl + mm); Q_lo K_hi (lh) alone. Each accumulator's truncations are then at
// its own size; land_scores adds them, the small ones first. Operand reads: 14 KB a k-step for
// the warpgroup at 32-key tiles, where six products apart read 18 KB. (Q_hi against all three
// planes with Q_mid and Q_lo adding into parts of its accumulator read 12 KB, but ptxas
// serializes wgmma whose accumulators partly overlap: a wait after every product.)
constexpr bool S_APART = F32 && PLANES == 2 && !OVERLAP;
constexpr int S_ACC_REGS = S_REGS * (PARTS ? 4 : S_APART ? 2 : 1);   // S, and its small products apart
template <int FROM, int N> FT_DEVICE float (&acc_part(float (&acc)[S_ACC_REGS]))[N]
{
    return *reinterpret_cast<float(*)[N]>(&acc[FROM]);
}
// (A template, so that the widths it names exist only where BF16_PARTS takes it.)
template <int BN> FT_DEVICE void issue_scores_parts(float (&sacc)[S_ACC_REGS], unsigned q_wg, unsigned k_tile)
{
    const unsigned long long q0 = wg_desc<ROW_BYTES>(q_wg, 16, ATOM_BYTES);
    const unsigned long long k0 = wg_desc<ROW_BYTES>(k_tile, 16, ATOM_BYTES);
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; kk++) {
        const unsigned at = (kk / PANEL_STEPS) * 3, col = (kk % PANEL_STEPS) * 32;   // the group's first panel
        const unsigned long long q = wg_desc_add(q0, at * (BLOCK_M * ROW_BYTES) + col);
        const unsigned long long k = wg_desc_add(k0, at * PANEL_BYTES + col);
        wg_ss<BN, 0>::run(acc_part<0, BN / 2>(sacc), q, k, kk > 0);
        wg_ss<2 * BN, 0>::run(acc_part<BN / 2, BN>(sacc), q, wg_desc_add(k, PANEL_BYTES), kk > 0);
        wg_ss<2 * BN, 0>::run(acc_part<BN / 2, BN>(sacc), wg_desc_add(q, BLOCK_M * ROW_BYTES), k, 1);
        wg_ss<BN, 0>::run(acc_part<3 * BN / 2, BN / 2>(sacc), wg_desc_add(q, 2 * BLOCK_M * ROW_BYTES), k, kk > 0);
    }
}
FT_DEVICE void issue_scores(float (&sacc)[S_ACC_REGS], unsigned q_wg, unsigned k_tile)
{
    if constexpr (PARTS) {
        issue_scores_parts<BLOCK_N>(sacc, q_wg, k_tile);
        return;
    }
    float(&s)[S_REGS] = acc_part<0, S_REGS>(sacc);
    float(&s_lo)[S_REGS] = acc_part<S_APART ? S_REGS : 0, S_REGS>(sacc);
    const unsigned long long q0 = wg_desc<ROW_BYTES>(q_wg, 16, ATOM_BYTES), k0 = wg_desc<ROW_BYTES>(k_tile, 16, ATOM_BYTES);
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; kk++) {
        const unsigned col = (kk % PANEL_STEPS) * 32;   // byte offset within the panel row
        const unsigned long long q = wg_desc_add(q0, (kk / PANEL_STEPS) * (BLOCK_M * ROW_BYTES) + col);
        const unsigned long long k = wg_desc_add(k0, (kk / PANEL_STEPS) * PANEL_BYTES + col);
#if DTYPE == FT_DTYPE_F32
        if (PLANES == 2) {
            float(&small)[S_REGS] = S_APART ? s_lo : s;
            wg_ss_tf32<BLOCK_N>::run(small, wg_desc_add(q, Q_PLANE_BYTES), k, kk > 0);
            wg_ss_tf32<BLOCK_N>::run(small, q, wg_desc_add(k, K_PLANE_BYTES), 1);
        }
        wg_ss_tf32<BLOCK_N>::run(s, q, k, PLANES == 2 && !S_APART ? 1 : kk > 0);
#else
        wg_ss<BLOCK_N, 0>::run(s, q, k, kk > 0);
#endif
    }
}
// An accumulator apart, landed (the caller waits): pinned behind the wait, then added into sum
// with rounded adds (S's small products, a key tile's P V).
template <int R> FT_DEVICE void add_landed(float (&sum)[R], float (&apart)[R])
{
    wg_pin(apart);
#pragma unroll
    for (int i = 0; i < R; i++)
        sum[i] += apart[i];
}
// S once its products have landed (the caller waits): pinned, and the small products added
// (S_APART; BF16_PARTS all three accumulators of them, the smaller first).
FT_DEVICE void land_scores(float (&sacc)[S_ACC_REGS])
{
    wg_pin(sacc);
    float(&s)[S_REGS] = acc_part<0, S_REGS>(sacc);
    if constexpr (PARTS) {
#pragma unroll
        for (int i = 0; i < S_REGS; i++)
            s[i] += sacc[S_REGS + i] + (sacc[2 * S_REGS + i] + sacc[3 * S_REGS + i]);
    } else if constexpr (S_APART) {
        add_landed(s, acc_part<S_REGS, S_REGS>(sacc));
    }
}

// P as the A registers of P V, k-step kk's in part[.][kk]: 16-bit pairs (one part); in f32 with
// BF16_PARTS three bfloat16 parts in pairs (as 16-bit P), else the high parts and remainders
// (PLANES parts) of S's floats in the key order of the file's head: a[0], a[1] keys 2q of rows
// g, g + 8 (column q), a[2], a[3] keys 2q + 1 (column q + 4).
struct p_operand {
    unsigned part[PLANES][P_STEPS][4];
};
FT_DEVICE void p_from_scores(p_operand &p, const float (&s)[S_REGS])
{
#if DTYPE == FT_DTYPE_F32
    if constexpr (PARTS) {   // 16-key steps as 16-bit P (wg_acc_to_a's pairs), each pair in three parts
#pragma unroll
        for (int kk = 0; kk < P_STEPS; kk++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                bf16_parts2(s[8 * kk + 2 * e], s[8 * kk + 2 * e + 1], p.part[0][kk][e], p.part[PLANES - 2][kk][e],
                            p.part[PLANES - 1][kk][e]);
        return;
    }
#pragma unroll
    for (int kk = 0; kk < P_STEPS; kk++) {
        tf32x2 a[4];
        c_to_a_tf32(a, *reinterpret_cast<const float(*)[4]>(&s[4 * kk]));
#pragma unroll
        for (int e = 0; e < 4; e++) {
            p.part[0][kk][e] = a[e].hi;
            if (PLANES == 2)
                p.part[PLANES - 1][kk][e] = a[e].lo;
        }
    }
#else
    wg_acc_to_a(p.part[0], s);
#endif
}

// O += P V, issued. 16-bit: key tiles 2kk and 2kk+1 of S form the A registers of k-step kk; V
// is read N-major (transposed): 16 keys per step are 16 panel rows (2048 bytes, narrow 1024), its
// panels PANEL_BYTES apart (the descriptor's leading byte offset: from one panel's columns to the
// next's along N). f32: V^T is read K-major from its planes (v_tile: the high parts'; the
// remainders' VT_PLANE_BYTES on), 8 keys (32 bytes) a step, its 32-key panels VT_PANEL_BYTES
// apart; P_lo V_hi + P_hi V_lo + P_hi V_hi a step (P_hi V_hi alone with ALLOW_TF32).
// Past 128 columns of V (192, 256) the product is issued in chunks of 128 columns, each into
// its own run of O's registers (columns 128c.. are registers 64c..).
constexpr int PV_CHUNK = HEAD_DIM_V > 128 ? 128 : HEAD_DIM_V;
constexpr int PV_CHUNKS = (HEAD_DIM_V + 127) / 128;
// BF16_PARTS: V's three planes read as 16-bit V is (N-major, 16 keys a step), plane x of a group
// at its panel x, the groups three panels apart along N; the five small part products of every
// k-step first, then the large ones (P_hi V_hi), into the tile's accumulator apart: its
// truncations at its own size are then one a k-step.
template <int N> FT_DEVICE void issue_pv_parts(float (&oc)[N / 2], const p_operand &p, unsigned v_tile)
{
    const unsigned long long v0 = wg_desc<ROW_BYTES>(v_tile, 3 * PANEL_BYTES, ATOM_BYTES);
    constexpr int P_PART[5] = { 0, 1, 0, 2, 1 }, V_PART[5] = { 1, 0, 2, 0, 1 };   // hm, mh, hl, lh, mm
#pragma unroll
    for (int i = 0; i < 5; i++)
#pragma unroll
        for (int kk = 0; kk < P_STEPS; kk++)
            wg_rs<N, 1>::run(oc, p.part[P_PART[i]][kk], wg_desc_add(v0, V_PART[i] * PANEL_BYTES + kk * 16 * ROW_BYTES),
                             i > 0 || kk > 0);
#pragma unroll
    for (int kk = 0; kk < P_STEPS; kk++)
        wg_rs<N, 1>::run(oc, p.part[0][kk], wg_desc_add(v0, kk * 16 * ROW_BYTES), 1);
}
template <int C>
FT_DEVICE void issue_pv_chunk(float (&o)[O_REGS], const p_operand &p, unsigned p_wg, unsigned v_tile, bool fresh)
{
    constexpr int N = HEAD_DIM_V - C * 128 < PV_CHUNK ? HEAD_DIM_V - C * 128 : PV_CHUNK;
    float(&oc)[N / 2] = *reinterpret_cast<float(*)[N / 2]>(&o[C * 64]);
#if DTYPE == FT_DTYPE_F32
    (void)p_wg;   // (P_SMEM is 16-bit only)
    if constexpr (PARTS) {   // always into a fresh accumulator (PV_APART)
        issue_pv_parts<N>(oc, p, v_tile);
        return;
    }
    const unsigned long long v0 = wg_desc(v_tile + C * 128 * 128, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < P_STEPS; kk++) {
        const unsigned long long v = wg_desc_add(v0, (kk / 4) * VT_PANEL_BYTES + (kk % 4) * 32);
        const int first = fresh && kk == 0 ? 0 : 1;   // 0: the product overwrites (a fresh accumulator)
        if (PLANES == 2) {
            wg_rs_tf32<N>::run(oc, p.part[1][kk], v, first);
            wg_rs_tf32<N>::run(oc, p.part[0][kk], wg_desc_add(v, VT_PLANE_BYTES), 1);
        }
        wg_rs_tf32<N>::run(oc, p.part[0][kk], v, PLANES == 2 ? 1 : first);
    }
#else
    const unsigned long long v0 = wg_desc<ROW_BYTES>(v_tile + C * (128 / PANEL_COLS) * PANEL_BYTES, PANEL_BYTES, ATOM_BYTES);
    const unsigned long long p0 = wg_desc(p_wg, 16, 1024);   // P_SMEM: P's 16 keys a k-step, 64 a panel
#pragma unroll
    for (int kk = 0; kk < P_STEPS; kk++) {
        if constexpr (P_SMEM)
            wg_ss<N, 1>::run(oc, wg_desc_add(p0, (kk / 4) * (64 * 128) + (kk % 4) * 32),
                             wg_desc_add(v0, kk * 16 * ROW_BYTES), 1);
        else
            wg_rs<N, 1>::run(oc, p.part[0][kk], wg_desc_add(v0, kk * 16 * ROW_BYTES), 1);
    }
#endif
}
FT_DEVICE void issue_pv(float (&o)[O_REGS], const p_operand &p, unsigned p_wg, unsigned v_tile, bool fresh = false)
{
    issue_pv_chunk<0>(o, p, p_wg, v_tile, fresh);
    if constexpr (PV_CHUNKS > 1)
        issue_pv_chunk<1>(o, p, p_wg, v_tile, fresh);
}

// f32 with three products: a key tile's P V lands in an accumulator of its own (pv, overwritten
// by the tile's first product), added to O with rounded adds once it has landed. The tensor
// cores' accumulation truncates: added into O a k-step at a time, O's error grew with the keys
// (2.9e-5 at N 4096, 1.2e-4 at 16384 against float64, the same for every tile; the sweep's
// checks refused them), as it did on mma.sync (fwd_mma's rounded add). 16-bit, and f32 with
// ALLOW_TF32 (one product, whose own rounding, about 3e-4, the truncation adds little to against
// TF32's threshold of 2e-3): P V into O directly, which keeps O_REGS registers and as many adds a
// tile off the consumers.
constexpr bool PV_APART = F32 && (PLANES == 2 || PARTS);
FT_DEVICE void issue_pv_into(float (&o)[O_REGS], float (&pv)[O_REGS], const p_operand &p, unsigned p_wg,
                              unsigned v_tile)
{
    if constexpr (PV_APART)
        issue_pv(pv, p, p_wg, v_tile, true);
    else
        issue_pv(o, p, p_wg, v_tile);
}
FT_DEVICE void land_pv(float (&o)[O_REGS], float (&pv)[O_REGS])
{
    if constexpr (PV_APART)
        add_landed(o, pv);
    else
        wg_pin(o);
}
static_assert(PV_CHUNKS <= 2, "HEAD_DIM_V: P V in at most two chunks of 128 columns");

// P_SMEM: the thread's P (its S accumulators' rows row0 + g and + 8, keys 8j + 2q and + 1, packed
// to 16-bit pairs) into the warpgroup's P tile, where P V reads it as its A. The caller has waited
// for the last P V, which read the tile. Each warp writes, and its share of P V reads, only its own
// 16 rows (a wgmma's M is split over its warpgroup's warps, 16 rows each), so a warp's own fence
// and sync order its stores before its products, as in FlashAttention-3 (no warpgroup barrier).
FT_DEVICE void store_p(unsigned p_wg, const float (&s)[S_REGS], const fwd_thread &th)
{
    const int row = th.row0 % 64 + th.group;
#pragma unroll
    for (int j = 0; j < BLOCK_N / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int r = row + 8 * half;
            st_shared_b32(p_wg + panel_offset<64>(r, j) + 4 * th.quad, pack2(s[4 * j + 2 * half], s[4 * j + 2 * half + 1]));
        }
    fence_proxy_async();   // plain stores, read next by wgmma
    __syncwarp();
}
// P for the tile's P V: as the A registers (p_from_scores), or P_SMEM in the warpgroup's P tile.
FT_DEVICE void make_p(p_operand &p, unsigned p_wg, const float (&s)[S_REGS], const fwd_thread &th)
{
    if constexpr (P_SMEM)
        store_p(p_wg, s, th);
    else
        p_from_scores(p, s);
}

// Keeps P's registers live (and unmoved) until here: an RS product reads them while in flight.
FT_DEVICE void pin_a(p_operand &p)
{
    if constexpr (!P_SMEM) {   // (P_SMEM: P V read P from shared memory, no registers to keep)
#pragma unroll
        for (int i = 0; i < PLANES; i++)
#pragma unroll
            for (int kk = 0; kk < P_STEPS; kk++)
                asm volatile("" : "+r"(p.part[i][kk][0]), "+r"(p.part[i][kk][1]), "+r"(p.part[i][kk][2]),
                             "+r"(p.part[i][kk][3])::"memory");
    }
}

// Tile t's scores as the softmax takes them: capped (SOFTCAP), then the keys past the
// sequence's and those the band hides masked (VARLEN: the keys past them are the next
// sequence's, read by the copy engine's boxes). S element s[4j+e] is row g + 8*(e/2), key
// 8j + 2q + e%2 of the tile.
FT_DEVICE void mask_tile(float (&s)[S_REGS], const ft_fwd_args &args, const fwd_block &fb, const fwd_thread &th,
                         int t)
{
#if SOFTCAP
    cap_scores<S_REGS>(s, args);
#endif
    const int n0 = t * BLOCK_N;
#if VARLEN
    const int lo = fb.lo, hi = fb.hi, seqlen_k = fb.n_begin + fb.keys, r0 = fb.m0 + th.row0;
#else
    const int lo = args.mask_lo, hi = args.mask_hi, seqlen_k = args.seqlen_k, r0 = fb.m0 + th.row0;
#endif
    const bool tail = !EVEN_N && n0 + BLOCK_N > fb.keys;
    const bool band = tile_needs_mask(lo, hi, r0, r0 + 16, fb.n_begin + n0, fb.n_begin + n0 + BLOCK_N);
    if (tail || band)
        mask_scores<BLOCK_N / 8>(s, fb.n_begin + n0, seqlen_k, r0 + th.group, th.quad, lo, hi);
}

// Where a consumer finds tile t's K and V, how it waits for them, and how it gives them back:
// inline_ring for the inline pipeline (the block barrier of its loop does all of that),
// producer_ring for the producer's mbarriers, with the PINGPONG turns.
struct inline_ring {
    unsigned kv_smem;
    FT_DEVICE unsigned k_tile(int t) const { return kv_smem + (NUM_STAGES == 1 ? 0 : (t % NUM_STAGES) * STAGE_BYTES); }
    FT_DEVICE unsigned v_tile(int t) const { return k_tile(t) + K_BYTES; }   // 16-bit only (a producer's in f32)
    FT_DEVICE void wait_k(int) const {}
    FT_DEVICE void wait_v(int) const {}
    FT_DEVICE void free_k(int) const {}
    FT_DEVICE void free_v(int) const {}
    FT_DEVICE void take_turn() const {}
    FT_DEVICE void pass_turn() const {}
};

// The producer's mbarriers: a ring slot's are K full, V full, K empty, V empty and (f32) K ready,
// V ready, 8 bytes each (at most 4 slots of 32 bytes, f32 64); from byte 512, a Q tile's full
// and empty.
// Full: the copy engine's bytes landed; ready (f32): the producer's warpgroup has split K and
// transposed V (what the consumers wait for); empty: every consumer is done with the slot.
FT_DEVICE unsigned ring_bar(unsigned bars, int st, int which) { return bars + (F32 ? 64 : 32) * st + 8 * which; }
enum { FULL_K, FULL_V, EMPTY_K, EMPTY_V, READY_K, READY_V };
constexpr int K_LANDED = F32 ? READY_K : FULL_K, V_LANDED = F32 ? READY_V : FULL_V;   // what consumers wait for
FT_DEVICE unsigned q_full_bar(unsigned bars, int qt) { return bars + 512 + 16 * qt; }
FT_DEVICE unsigned q_empty_bar(unsigned bars, int qt) { return bars + 520 + 16 * qt; }
// A packed batch's persistent walk is decoded by the producer alone (a scan of the batch's
// lengths a tile: on the consumers' path it would delay every tile): it writes each tile's
// (query tile, batch*head) beside its Q tile's barriers before Q's full arrival, which releases
// it, and the consumers read it once Q has landed; after the last tile, query tile -1 with an arrival
// and no bytes. Every consumer thread arrives on the place's pair-read mbarrier once it has read
// the pair, and the producer waits for that before it writes the place's next: Q's empty barrier
// alone ordered the reads only through a named barrier and one issuer's arrival (ASYNC_O), a
// chain compute-sanitizer's racecheck reported as a hazard (notes/kernels.md).
constexpr bool TILE_IN_Q_PLACE = VARLEN && PERSISTENT;
FT_DEVICE unsigned q_tile_pair(unsigned bars, int qt) { return bars + 768 + 8 * qt; }
FT_DEVICE unsigned pair_read_bar(unsigned bars, int qt) { return bars + 800 + 8 * qt; }

// Where the producer and the consumers are in their common sequence: the query tiles the block
// has taken (Q tile `tiles % Q_TILES`, phase (tiles / Q_TILES) & 1) and the key tiles loaded
// for them (ring slot `keys % NUM_STAGES`, phase (keys / NUM_STAGES) & 1), both running on
// across the block's tiles.
struct ring_position {
    int tiles = 0, keys = 0;
    unsigned o_pending = 0;   // ASYNC_O: the Q empty mbarrier of the place the last O left from
    FT_DEVICE int q_tile() const { return tiles % Q_TILES; }
    FT_DEVICE unsigned q_phase() const { return (tiles / Q_TILES) & 1; }
};

// PINGPONG: consumer w waits at named barrier TURN_BARRIER + w for its turn to issue products
// and, having issued them, arrives at the next one's (w + 1, the last at consumer 0's), so issues
// go round. The turns run on across the block's query tiles: the last consumer opens the block
// with an arrival for consumer 0 and consumer 0 closes it with a last wait (fwd_consumer), so
// each barrier sees as many arrivals as waits, and one consumer's epilogue and next first scores
// run under the others' last products. (Turns opened afresh each tile made the consumers meet at
// every tile's start, the tensor cores idle through the epilogues.) A barrier hears only from the
// consumer before it, which cannot arrive twice before it is waited for: its next arrival needs
// its next turn, which needs the turn of this barrier's consumer.
// Tile t of the walk is ring entry kv0 + t; once the scores of the tile's last key tile have
// landed, a persistent block gives Q back too (the producer may load the next). With ASYNC_O the
// place holds O until the copy engine has read it: its warpgroup's first thread gives the
// previous tile's place back once this tile's first scores are in (by then the engine is long
// done; it waits for it all the same).
struct producer_ring {
    unsigned kv_smem, bars;
    int wg;
    int kv0, last;        // the query tile's first ring entry, and its last key tile
    unsigned q_empty;     // the query tile's Q empty mbarrier
    unsigned o_pending;   // ASYNC_O: the previous tile's Q empty mbarrier, or 0
    bool o_issuer;        // ASYNC_O: this thread issued its warpgroup's O stores
    // Ring entry of tile t: a block of one query tile starts the ring at 0, a constant.
    FT_DEVICE int entry(int t) const { return (PERSISTENT ? kv0 : 0) + t; }
    FT_DEVICE unsigned k_tile(int t) const { return kv_smem + (entry(t) % NUM_STAGES) * STAGE_BYTES; }
    // V as P V reads it: as it landed (16-bit), its parts where it landed (BF16_PARTS), or its V^T
    // planes (f32).
    FT_DEVICE unsigned v_tile(int t) const { return k_tile(t) + K_BYTES + (F32 && !PARTS ? V_BYTES : 0); }
    FT_DEVICE unsigned slot_bar(int t, int which) const { return ring_bar(bars, entry(t) % NUM_STAGES, which); }
    FT_DEVICE unsigned phase(int t) const { return (entry(t) / NUM_STAGES) & 1; }
    FT_DEVICE void wait_k(int t) const { mbar_wait(slot_bar(t, K_LANDED), phase(t)); }
    FT_DEVICE void wait_v(int t) const { mbar_wait(slot_bar(t, V_LANDED), phase(t)); }
    // MULTICAST: threads 0 and 1 of the warpgroup arrive for all of it, on their own block's
    // barrier and on the other's (a warpgroup's products complete as a whole: once this thread
    // has waited for them, none of the warpgroup's reads of the slot is pending).
    FT_DEVICE void release_slot(unsigned bar) const
    {
        if (!MULTICAST)
            mbar_arrive(bar);
        else if (threadIdx.x % 128 < CLUSTER)
            mbar_arrive_cluster(bar, threadIdx.x % 128);
    }
    FT_DEVICE void free_k(int t) const
    {
        release_slot(slot_bar(t, EMPTY_K));
        if (PERSISTENT && !ASYNC_O && t == last)   // a block of one tile never loads another Q
            mbar_arrive(q_empty);
        if (ASYNC_O && t == 0)
            release_o();
    }
    FT_DEVICE void release_o() const
    {
        if (o_pending && o_issuer) {
            bulk_wait_read<0>();
            mbar_arrive(o_pending);
        }
    }
    FT_DEVICE void free_v(int t) const { release_slot(slot_bar(t, EMPTY_V)); }
    FT_DEVICE void take_turn() const
    {
        if (PINGPONG)
            named_barrier_sync(TURN_BARRIER + wg, 256);
    }
    FT_DEVICE void pass_turn() const
    {
        if (PINGPONG)
            named_barrier_arrive(TURN_BARRIER + (wg + 1) % NUM_WG, 256);
    }
};

// One K/V tile for the warpgroup's 64 rows, step by step: S = Q K^T, the mask, the online
// softmax and O += P V, each product waited for (the tile's K and V are given back on return).
template <class Ring>
FT_DEVICE void attend_tile(float (&o)[O_REGS], float (&row_max)[2], float (&row_sum)[2], const ft_fwd_args &args,
                           const fwd_block &fb, const fwd_thread &th, unsigned q_wg, unsigned p_wg, Ring &ring, int t,
                           float scale_log2)
{
    float sacc[S_ACC_REGS];   // S, and its small products apart (S_APART, BF16_PARTS)
    float(&s)[S_REGS] = acc_part<0, S_REGS>(sacc);
    ring.wait_k(t);
    ring.take_turn();
    wg_fence();
    issue_scores(sacc, q_wg, ring.k_tile(t));
    wg_commit();
    ring.pass_turn();
    wg_wait_all();
    land_scores(sacc);
    ring.free_k(t);

    mask_tile(s, args, fb, th, t);
#pragma unroll
    for (int half = 0; half < 2; half++)
        softmax_step<BLOCK_N / 8, HEAD_DIM_V / 8>(s, o, row_max[half], row_sum[half], half, scale_log2);

    p_operand pf;
    make_p(pf, p_wg, s, th);
    ring.wait_v(t);
    ring.take_turn();
    wg_fence();
    float pv[O_REGS];   // three products only (issue_pv_into; unused otherwise)
    issue_pv_into(o, pv, pf, p_wg, ring.v_tile(t));
    wg_commit();
    ring.pass_turn();
    wg_wait_all();
    land_pv(o, pv);
    pin_a(pf);
    ring.free_v(t);
}

// Every tile of the block with OVERLAP: tile t's S = Q K^T and tile t-1's O += P V are issued
// together; t's mask and softmax run once S has landed, while P V is still in flight, and only
// the rescale of O waits for it. Two score tiles are live at once (S of t in fp32, P of t-1
// packed).
template <class Ring>
FT_DEVICE void attend_overlapped(float (&o)[O_REGS], float (&row_max)[2], float (&row_sum)[2],
                                 const ft_fwd_args &args, const fwd_block &fb, const fwd_thread &th, unsigned q_wg,
                                 unsigned p_wg, Ring &ring, float scale_log2)
{
    const int n = fb.n_tiles;
    if (n == 0)
        return;
    float sacc[S_ACC_REGS];   // S, and its small products apart (S_APART, BF16_PARTS)
    float(&s)[S_REGS] = acc_part<0, S_REGS>(sacc);
    float pv[O_REGS];   // three products only (issue_pv_into; unused otherwise)
    p_operand pf;
    ring.wait_k(0);
    ring.take_turn();
    wg_fence();
    issue_scores(sacc, q_wg, ring.k_tile(0));
    wg_commit();
    ring.pass_turn();
    wg_wait_all();
    land_scores(sacc);
    ring.free_k(0);
    mask_tile(s, args, fb, th, 0);
#pragma unroll
    for (int half = 0; half < 2; half++)   // O is still zero: nothing to rescale
        softmax_scores<BLOCK_N / 8>(s, row_max[half], row_sum[half], half, scale_log2);
    make_p(pf, p_wg, s, th);

    for (int t = 1; t < n; t++) {
        ring.wait_k(t);
        ring.wait_v(t - 1);
        ring.take_turn();
        wg_fence();
        issue_scores(sacc, q_wg, ring.k_tile(t));
        wg_commit();
        issue_pv_into(o, pv, pf, p_wg, ring.v_tile(t - 1));
        wg_commit();
        ring.pass_turn();
        wg_wait<1>();   // S of tile t has landed; P V of t-1 may still run
        land_scores(sacc);
        ring.free_k(t);
        mask_tile(s, args, fb, th, t);
        float correction[2];
#pragma unroll
        for (int half = 0; half < 2; half++)
            correction[half] = softmax_scores<BLOCK_N / 8>(s, row_max[half], row_sum[half], half, scale_log2);
        wg_wait<0>();
        land_pv(o, pv);
        pin_a(pf);
        ring.free_v(t - 1);
#pragma unroll
        for (int half = 0; half < 2; half++)
            rescale_row<HEAD_DIM_V / 8>(o, half, correction[half]);
        make_p(pf, p_wg, s, th);
    }

    ring.wait_v(n - 1);
    ring.take_turn();
    wg_fence();
    issue_pv_into(o, pv, pf, p_wg, ring.v_tile(n - 1));
    wg_commit();
    ring.pass_turn();
    wg_wait_all();
    land_pv(o, pv);
    pin_a(pf);
    ring.free_v(n - 1);
}

// L of the block's first row (the sequence read again here: the consumers do not hold it).
FT_DEVICE float *block_lse(const ft_fwd_args &args, const fwd_block &fb)
{
    return (float *)args.lse + seq_row(args, seq_of(args, fb.b), fb.b, fb.h, fb.bh);
}

// Epilogue: O / rowsum in the input dtype, and L = ln(sum) + max in natural log.
FT_DEVICE void store_o(const ft_fwd_args &args, const fwd_block &fb, const fwd_thread &th, const float (&o)[O_REGS],
                       const float (&row_max)[2], const float (&row_sum)[2])
{
    const ft_seq sq = seq_of(args, fb.b);
    elem_t *o_out = (elem_t *)args.o + seq_offset(args.o_stride, fb.b, fb.h, sq.q0);
    float *lse = block_lse(args, fb);
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = fb.m0 + th.row0 + th.group + half * 8;
        store_row<HEAD_DIM_V / 8, V_DATA>(o_out + row * args.o_stride[2], lse + row, o, row_max[half], row_sum[half], half,
                                  th.quad, (EVEN_M && !MULTICAST) || row < sq.seqlen_q, sink_log2(args, fb.h));
    }
}

// ASYNC_O epilogue: O / rowsum of the warpgroup's 64 rows into its rows of the tile's Q place
// (q_tile; the rows' last scores are in, so no product reads them), in the layout of the copy
// engine's boxes (64-column panels of BLOCK_M rows, 128-byte swizzle: 4-byte stores, the 8 rows
// of a store on 8 different chunks), then one thread of the warpgroup sends them to O, a box of
// 64 rows a panel, rows past seqlen_q left out. L as store_o.
// VARLEN: the map's rows run on into the next sequence's, so a warpgroup whose 64 rows cross its
// sequence's end writes them by plain stores instead (store_o, rows past the end left out); it
// still meets at its O barrier, so that its issuer gives the Q place back only once all its
// threads are past the tile, as after a box.
FT_DEVICE void store_o_async(const ft_fwd_args &args, const fwd_block &fb, const fwd_thread &th, const float (&o)[O_REGS],
                             const float (&row_max)[2], const float (&row_sum)[2], unsigned q_tile, bool issuer)
{
    if (VARLEN && fb.m0 + th.wg * 64 + 64 > seq_of(args, fb.b).seqlen_q) {
        store_o(args, fb, th, o, row_max, row_sum);
        named_barrier_sync(O_BARRIER + th.wg, 128);
        return;
    }
    float *lse = block_lse(args, fb);
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = th.row0 + th.group + half * 8;   // row of the tile
        const float inv = finish_row(lse + fb.m0 + r, row_max[half], row_sum[half], th.quad,
                                     EVEN_M || fb.m0 + r < seq_of(args, fb.b).seqlen_q, sink_log2(args, fb.h));
#pragma unroll
        for (int j = 0; j < HEAD_DIM_V / 8; j++) {
            const unsigned at = q_tile + (j / 8) * (BLOCK_M * 128) + r * 128 + (((j % 8) ^ (r % 8)) << 4) + th.quad * 4;
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(at),
                         "r"(pack2(o[j * 4 + half * 2] * inv, o[j * 4 + half * 2 + 1] * inv)) : "memory");
        }
    }
    fence_proxy_async();   // plain stores, read next by the copy engine
    named_barrier_sync(O_BARRIER + th.wg, 128);
    if (issuer) {
#pragma unroll
        for (int p = 0; p < DV_PANELS; p++)
            tma_store_4d(&args.o_map, q_tile + p * (BLOCK_M * 128) + th.wg * 64 * 128, 64 * p,
                         seq_of(args, fb.b).q0 + fb.m0 + th.wg * 64, fb.h, map_batch(fb.b));
        bulk_commit();
    }
}

// Q of the block's tile into shared memory by `THREADS` threads (t: this one's index), committed.
template <int THREADS>
FT_DEVICE void load_q(unsigned q_smem, const ft_fwd_args &args, const fwd_block &fb, int t)
{
    const ft_seq sq = seq_of(args, fb.b);
    const elem_t *q = (const elem_t *)args.q + seq_offset(args.q_stride, fb.b, fb.h, sq.q0) + fb.m0 * args.q_stride[2];
    load_panels<BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M, THREADS>(q_smem, q, args.q_stride[2], sq.seqlen_q - fb.m0, t);
    cp_async_commit();
}

// ---- the inline pipeline: every warp loads and computes; a block barrier a tile.
FT_DEVICE void fwd_inline(const ft_fwd_args &args, unsigned q_smem, unsigned kv_smem)
{
    tile_schedule sched(args);
    int m_tile, bh;
    sched.take(args, m_tile, bh);   // one tile (PERSISTENT needs a producer; ft_fwd returned if none)
    const fwd_block fb = describe_block(args, m_tile, bh);
    const fwd_thread th = consumer_thread(threadIdx.x);
    load_q<NUM_THREADS>(q_smem, args, fb, threadIdx.x);
    // Prologue: the first NUM_STAGES-1 K/V tiles; a group per slot, even an empty one, so that
    // wait_group<NUM_STAGES-2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < NUM_STAGES - 1; s++) {
        if (s < fb.n_tiles)
            load_kv<NUM_THREADS>(kv_smem + s * STAGE_BYTES, fb, s, threadIdx.x);
        cp_async_commit();
    }

    const float scale_log2 = softmax_log2_scale(args);
    float o[O_REGS];
#pragma unroll
    for (int i = 0; i < O_REGS; i++)
        o[i] = 0.f;
    float row_max[2] = { -FT_INF_F, -FT_INF_F }, row_sum[2] = { 0.f, 0.f };   // rows g, g+8
    // This warpgroup's 64 rows of Q: within a panel they start at row 64*wg.
    const unsigned q_wg = q_smem + th.wg * 64 * 128;
    inline_ring ring = { kv_smem };

    for (int t = 0; t < fb.n_tiles; t++) {
        if (NUM_STAGES == 1) {
            __syncthreads();   // everyone is done with the single buffer
            load_kv<NUM_THREADS>(kv_smem, fb, t, threadIdx.x);
            cp_async_commit();
            cp_async_wait<0>();
            fence_proxy_async();
            __syncthreads();
        } else {
            cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
            fence_proxy_async();
            __syncthreads();   // tile t visible to all; buffer of tile t-1 free for reuse
            const int next = t + NUM_STAGES - 1;
            if (next < fb.n_tiles)
                load_kv<NUM_THREADS>(kv_smem + (next % NUM_STAGES) * STAGE_BYTES, fb, next, threadIdx.x);
            cp_async_commit();
        }
        attend_tile(o, row_max, row_sum, args, fb, th, q_wg, 0, ring, t, scale_log2);
    }
    cp_async_wait<0>();
    store_o(args, fb, th, o, row_max, row_sum);
}

// ---- the producer pipeline: warpgroup 0 fills the ring, the consumers only compute (f32: its
// warps 1-3 prepare each tile as it lands, prepare_tiles).
// One thread of the producer issues each tile to the copy engine as soon as the consumers have
// given its place back, completing on the place's full mbarrier: for each query tile its Q (a
// box of BLOCK_M rows by PANEL_COLS columns a panel, rows past seqlen_q read as zeros), then its K and
// V tiles (boxes of BLOCK_N keys, keys past seqlen_k read as zeros). K and V have barriers of
// their own so that K of the next tile can land while V of this one is still being read. A
// fresh place passes its first wait at once (parity 1 of a new mbarrier).
#if DTYPE == FT_DTYPE_F32
FT_DEVICE void prepare_tiles(const ft_fwd_args &args, unsigned kv_smem, unsigned bars, int pt);
#endif
// One panel (PANEL_COLS columns) of a K or V tile whose first key is `key`, into the panel at dst: the box
// of the whole tile, or (MULTICAST) this block's share of its keys, into every block of the
// cluster at the share's place.
FT_DEVICE void load_kv_box(unsigned dst, const ft_tensor_map *map, unsigned bar, int col, int key, int hk, int batch)
{
    if constexpr (MULTICAST) {
        const int rank = (int)cluster_rank();
        tma_load_4d_multicast(dst + rank * (KV_BOX_ROWS * ROW_BYTES), map, bar, (1u << CLUSTER) - 1, col,
                              key + rank * KV_BOX_ROWS, hk, batch);
    } else {
        tma_load_4d(dst, map, bar, col, key, hk, batch);
    }
}
FT_DEVICE void fwd_producer(const ft_fwd_args &args, unsigned q_smem, unsigned kv_smem, unsigned bars)
{
    setmaxnreg_dec<PRODUCER_NREG>();
#if DTYPE == FT_DTYPE_F32
    if (threadIdx.x >= 32) {   // warps 1-3 split K and write V^T as the tiles land
        prepare_tiles(args, kv_smem, bars, threadIdx.x - 32);
        return;
    }
#endif
    if (threadIdx.x != 0)
        return;
    tile_schedule sched(args);
    ring_position pos;
    int m_tile, bh;
    while (sched.take(args, m_tile, bh)) {
        // Only what the copy engine needs (the producer keeps 24 registers): no pointers.
        const int m0 = m_tile * BLOCK_M, b = bh / args.heads, h = bh % args.heads, hk = kv_head(args, h);
        const ft_seq sq = seq_of(args, b);
        int t0, t1;
        key_tiles<BLOCK_M, BLOCK_N>(sq.lo, sq.hi, m0, sq.seqlen_q, sq.seqlen_k, t0, t1);
        // Q goes first (the first scores need it), except in a persistent block with one Q tile:
        // there its place frees only with the last scores of the block's previous query tile,
        // later than the first key tile's ring slot, so Q goes after that key tile.
        const int qt = pos.q_tile();
#if VARLEN
        // The Q box's first row in the packed map, computed once: with sq.q0 + m0 at each load both
        // stayed live and the producer's 24 registers spilled. (A dense batch's load keeps that
        // form, with which its SASS is unchanged; a hoisted row, even m0, reorders it.)
        const int q_row = sq.q0 + m0;
#endif
        const int q_at = PERSISTENT && Q_TILES == 1 ? 1 : 0;   // key tiles issued before Q
        const auto load_q = [&]() {
            mbar_wait(q_empty_bar(bars, qt), pos.q_phase() ^ 1);
            if (TILE_IN_Q_PLACE) {
                mbar_wait(pair_read_bar(bars, qt), pos.q_phase() ^ 1);
                st_shared_b32(q_tile_pair(bars, qt), (unsigned)m_tile);
                st_shared_b32(q_tile_pair(bars, qt) + 4, (unsigned)bh);
            }
            mbar_arrive_expect(q_full_bar(bars, qt), Q_PLANE_BYTES);
#pragma unroll
            for (int p = 0; p < D_PANELS; p++)
                tma_load_4d(q_smem + qt * Q_BYTES + landing_panel(p) * (BLOCK_M * ROW_BYTES), &args.q_map,
                            q_full_bar(bars, qt), PANEL_COLS * p,
#if VARLEN
                            q_row, h, map_batch(b));
#else
                            sq.q0 + m0, h, map_batch(b));
#endif
        };
        const int n = t1 - t0;
#if VARLEN
#pragma unroll 1   // unrolled twice, the packed rows spilled the producer's 24 registers (68 bytes)
#endif
        for (int t = 0; t < n; t++) {
            if (t == q_at)
                load_q();
            const int i = pos.keys + t, st = i % NUM_STAGES;
            const unsigned free_parity = ((i / NUM_STAGES) & 1) ^ 1;
            const unsigned stage = kv_smem + st * STAGE_BYTES;
            const int key = sq.k0 + (t0 + t) * BLOCK_N;   // the box's first row in the map (VARLEN: packed)
            mbar_wait(ring_bar(bars, st, EMPTY_K), free_parity);
            mbar_arrive_expect(ring_bar(bars, st, FULL_K), K_PLANE_BYTES);
#pragma unroll
            for (int p = 0; p < D_PANELS; p++)
                load_kv_box(stage + landing_panel(p) * PANEL_BYTES, &args.k_map, ring_bar(bars, st, FULL_K),
                            PANEL_COLS * p, key, hk, map_batch(b));
            mbar_wait(ring_bar(bars, st, EMPTY_V), free_parity);
            mbar_arrive_expect(ring_bar(bars, st, FULL_V), V_BYTES);
#pragma unroll
            for (int p = 0; p < DV_PANELS; p++)
                load_kv_box(stage + K_BYTES + landing_panel(p) * PANEL_BYTES, &args.v_map, ring_bar(bars, st, FULL_V),
                            PANEL_COLS * p, key, hk, map_batch(b));
        }
        if (n <= q_at)
            load_q();
        pos.tiles++;
        pos.keys += n;
    }
    if (TILE_IN_Q_PLACE) {   // no more tiles: the consumers' next Q place says so
        const int qt = pos.q_tile();
        mbar_wait(q_empty_bar(bars, qt), pos.q_phase() ^ 1);
        mbar_wait(pair_read_bar(bars, qt), pos.q_phase() ^ 1);
        st_shared_b32(q_tile_pair(bars, qt), ~0u);
        mbar_arrive(q_full_bar(bars, qt));
    }
}

#if DTYPE == FT_DTYPE_F32
// ---- f32: the splits and V^T, in shared memory, by the producer's warps 1-3 (Q and K split in
// place: split_pieces with the high parts where the floats were).
constexpr int PREP_THREADS = 96;

// V^T of a slot from V as it landed (v_raw: BLOCK_N rows of keys in panels of 32 floats,
// PANEL_BYTES apart, 128-byte swizzle), split into planes of high parts (vt) and remainders
// (VT_PLANE_BYTES on): row d of V^T holds column d of V, its keys in panels of 32 (VT_PANEL_BYTES
// apart, the same swizzle), each 8-key step's in the order 0,2,4,6,1,3,5,7 (the head's P order).
// A unit is one 16-byte piece (4 columns from 4dq) of keys 8j + h + 2i (i = 0..3): it reads 4
// pieces and writes a piece of 4 consecutive V^T keys to each of 4 rows. A warp's 16-byte
// accesses are served a quarter-warp (8 lanes, 128 bytes) at a time, so each 8 lanes must meet 8
// distinct chunks in both: a read's chunk is dq ^ (h + 2i) (mod 8, whatever j), a write's
// (2j + h) ^ (4dq + e). Lane lx = (x2 x1 x0) of a quarter takes h = x0, dq = 2 (x2 x1) + d0 and
// j = (x2 x1) ^ s (mod 4), both distinct over lx, the 8 quarters of two warps the 8 (d0, s):
// the 4 (dq, h) pairs of j's 4 lanes had put a quarter's reads on 2 chunks (Nsight Compute: 16
// wavefronts a read where 4 do, 9 % of the d128 forward's shared-memory wavefronts).
FT_DEVICE void transpose_v(unsigned v_raw, unsigned vt, int t)   // t: 0..PREP_THREADS-1
{
    constexpr int PANELS = HEAD_DIM_V / 32, UNITS = BLOCK_N * HEAD_DIM_V / 16;
    static_assert(HEAD_DIM_V % 32 == 0 && BLOCK_N % 32 == 0, "transpose_v: units in groups of 32 keys by 32 columns");
    static_assert(PREP_THREADS % 32 == 0, "transpose_v: whole warps of units");
#pragma unroll 1
    for (int u = t; u < UNITS; u += PREP_THREADS) {
        const int lx = u % 8, k = (u / 32) % 2 * 4 + (u / 8) % 4, group = u / 64;
        const int dq = 8 * (group % PANELS) + 2 * (lx >> 1) + (k & 1), h = lx & 1;
        const int j = 4 * (group / PANELS) + ((lx >> 1) ^ (k >> 1));
        float4 x[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int n = 8 * j + h + 2 * i;
            x[i] = ld_shared_f32x4(v_raw + (dq / 8) * PANEL_BYTES + n * 128 + (((dq % 8) ^ (n % 8)) << 4));
        }
        const unsigned row0 = vt + (j / 4) * VT_PANEL_BYTES;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int d = 4 * dq + e;
            const unsigned at = row0 + d * 128 + ((((2 * j + h) % 8) ^ (d % 8)) << 4);
            st_split4(at, at + VT_PLANE_BYTES, (&x[0].x)[e], (&x[1].x)[e], (&x[2].x)[e], (&x[3].x)[e]);
        }
    }
}

// The f32 producer's warps 1-3 (PREP_THREADS; warp 0's first thread issues the copy engine's
// loads as in 16-bit, fwd_producer): for each key tile the block walks, in the walk's order, wait
// for K to land, split it in place (split_pieces) and mark it ready, then the same for V (transpose_v).
// They never wait for a slot to be given back: the loads are issued only into free slots (the
// issuer waits), and a tile's planes are written only once its loads have landed, after the
// consumers gave the slot's previous tile back. (With the issuer among them, one stage and
// OVERLAP deadlocked: the issuer waited for V's slot while the consumers waited for the next K.)
FT_DEVICE void prepare_tiles(const ft_fwd_args &args, unsigned kv_smem, unsigned bars, int pt)
{
    tile_schedule sched(args);
    ring_position pos;
    int m_tile, bh;
    while (sched.take(args, m_tile, bh)) {
        const ft_seq sq = seq_of(args, bh / args.heads);
        int t0, t1;
        key_tiles<BLOCK_M, BLOCK_N>(sq.lo, sq.hi, m_tile * BLOCK_M, sq.seqlen_q, sq.seqlen_k, t0, t1);
#pragma unroll 1
        for (int t = 0; t < t1 - t0; t++) {
            const int i = pos.keys + t, st = i % NUM_STAGES;
            const unsigned parity = (i / NUM_STAGES) & 1;
            const unsigned stage = kv_smem + st * STAGE_BYTES;
            mbar_wait(ring_bar(bars, st, FULL_K), parity);
            if constexpr (PARTS)
                split_rows_bf16<D_PANELS / 2, PANEL_BYTES, BLOCK_N, PREP_THREADS>(stage, 0, pt);
            else
                split_pieces<K_PLANE_BYTES, PREP_THREADS>(stage, stage, K_PLANE_BYTES, pt);
            fence_proxy_async();   // plain stores, read next by wgmma
            mbar_arrive(ring_bar(bars, st, READY_K));
            mbar_wait(ring_bar(bars, st, FULL_V), parity);
            if constexpr (PARTS)
                split_rows_bf16<DV_PANELS / 2, PANEL_BYTES, BLOCK_N, PREP_THREADS>(stage + K_BYTES, 0, pt);
            else
                transpose_v(stage + K_BYTES, stage + K_BYTES + V_BYTES, pt);
            fence_proxy_async();
            mbar_arrive(ring_bar(bars, st, READY_V));
        }
        pos.keys += t1 - t0;
    }
}

// The consumer warpgroup's rows of its Q tile (64 a panel) split in place (split_pieces, or
// BF16_PARTS split_rows_bf16), then made visible to its products (the warpgroup meets: each
// thread split others' rows too).
FT_DEVICE void split_q(unsigned q_tile, const fwd_thread &th, int t)
{
    if constexpr (PARTS) {   // the rows' floats into their group's three part panels
        split_rows_bf16<D_PANELS / 2, BLOCK_M * ROW_BYTES, 64, 128>(q_tile, th.wg * 64, t);
    } else {
#pragma unroll
        for (int p = 0; p < D_PANELS; p++) {
            const unsigned rows = q_tile + p * (BLOCK_M * 128) + th.wg * 64 * 128;
            split_pieces<64 * 128, 128>(rows, rows, Q_PLANE_BYTES, t);
        }
    }
    fence_proxy_async();
    named_barrier_sync(Q_SPLIT_BARRIER + th.wg, 128);
}
#endif

// One query tile for a consumer warpgroup, its Q in place: walk its key tiles, write O and L.
FT_DEVICE void consume_tile(const ft_fwd_args &args, const fwd_block &fb, const fwd_thread &th, unsigned q_tile,
                            unsigned kv_smem, unsigned bars, ring_position &pos, float scale_log2, bool issuer)
{
    float o[O_REGS];
#pragma unroll
    for (int i = 0; i < O_REGS; i++)
        o[i] = 0.f;
    float row_max[2] = { -FT_INF_F, -FT_INF_F }, row_sum[2] = { 0.f, 0.f };
    // This warpgroup's 64 rows of the Q tile: within a panel they start at row 64*wg.
    const unsigned q_wg = q_tile + th.wg * 64 * ROW_BYTES;
    const unsigned p_wg = bars + BAR_BYTES + th.wg * P_BYTES;   // P_SMEM: the warpgroup's P tile
    producer_ring ring = { kv_smem, bars, th.wg, pos.keys, fb.n_tiles - 1, q_empty_bar(bars, pos.q_tile()),
                           pos.o_pending, issuer };
    if (PERSISTENT && !ASYNC_O && fb.n_tiles == 0)
        mbar_arrive(ring.q_empty);
    if (ASYNC_O && fb.n_tiles == 0)
        ring.release_o();
    if (OVERLAP) {
        attend_overlapped(o, row_max, row_sum, args, fb, th, q_wg, p_wg, ring, scale_log2);
    } else {
        for (int i = 0; i < fb.n_tiles; i++)
            attend_tile(o, row_max, row_sum, args, fb, th, q_wg, p_wg, ring, i, scale_log2);
    }
    if constexpr (ASYNC_O) {
        store_o_async(args, fb, th, o, row_max, row_sum, q_tile, issuer);
        pos.o_pending = ring.q_empty;
    } else {
        store_o(args, fb, th, o, row_max, row_sum);
    }
}

// The consumers: for each query tile of the schedule, wait for its Q, walk its key tiles (Q is
// given back with the last key tile's scores, K and V as they are done), write O and L. A tile
// with no visible key reads no Q and gives it back at once.
FT_DEVICE void fwd_consumer(const ft_fwd_args &args, unsigned q_smem, unsigned kv_smem, unsigned bars)
{
    setmaxnreg_inc<CONSUMER_NREG>();
    const fwd_thread th = consumer_thread(threadIdx.x - 128);
    const float scale_log2 = softmax_log2_scale(args);
    const bool issuer = (threadIdx.x - 128) % 128 == 0;   // ASYNC_O: the warpgroup's first thread
    tile_schedule sched(args);
    ring_position pos;
    int m_tile, bh;
    if (PINGPONG && th.wg == NUM_WG - 1)   // the block's turns open (producer_ring)
        named_barrier_arrive(TURN_BARRIER, 256);
    for (;;) {
        const int qt = pos.q_tile();
        if (TILE_IN_Q_PLACE) {   // the producer's tile, once its Q has landed
            mbar_wait(q_full_bar(bars, qt), pos.q_phase());
            m_tile = (int)ld_shared_b32(q_tile_pair(bars, qt));
            bh = (int)ld_shared_b32(q_tile_pair(bars, qt) + 4);   // (after the last tile: unused)
            mbar_arrive(pair_read_bar(bars, qt));
            if (m_tile < 0)
                break;
        } else if (!sched.take(args, m_tile, bh)) {
            break;
        }
        const fwd_block fb = describe_block(args, m_tile, bh);
        if (!TILE_IN_Q_PLACE)
            mbar_wait(q_full_bar(bars, qt), pos.q_phase());
#if DTYPE == FT_DTYPE_F32
        split_q(q_smem + qt * Q_BYTES, th, (threadIdx.x - 128) % 128);
#endif
        consume_tile(args, fb, th, q_smem + qt * Q_BYTES, kv_smem, bars, pos, scale_log2, issuer);
        pos.tiles++;
        pos.keys += fb.n_tiles;
    }
    if (PINGPONG && th.wg == 0)   // and close: the last consumer's last arrival
        named_barrier_sync(TURN_BARRIER, 256);
    if (ASYNC_O && issuer)
        bulk_wait<0>();   // the last O written before the block's shared memory goes
}

// Compiled for the occupancy the traits expect (MIN_BLOCKS): up to 255 registers a thread for
// two or three warpgroups, within 128 for one warpgroup on 64x64 tiles of head dim 64. args is
// __grid_constant__: the copy engine reads the tensor maps in it where they lie.
#if MULTICAST
#define FT_FWD_CLUSTER __cluster_dims__(2, 1, 1)   // CLUSTER (the launcher rounds grid.x up to it)
#else
#define FT_FWD_CLUSTER
#endif
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS) FT_FWD_CLUSTER
ft_fwd(const __grid_constant__ ft_fwd_args args)
{
    if (VARLEN && !PERSISTENT && !tile_schedule::block_has_tile(args))
        return;   // a tile past its sequence's end: nothing to do
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned q_smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const unsigned kv_smem = q_smem + Q_TILES * Q_BYTES;
    if constexpr (!PRODUCER) {
        fwd_inline(args, q_smem, kv_smem);
    } else {
        const unsigned bars = kv_smem + NUM_STAGES * STAGE_BYTES;
        if (threadIdx.x == 0) {
            for (int st = 0; st < NUM_STAGES; st++) {
                mbar_init(ring_bar(bars, st, FULL_K), 1);
                mbar_init(ring_bar(bars, st, FULL_V), 1);
                mbar_init(ring_bar(bars, st, EMPTY_K), EMPTY_COUNT);
                mbar_init(ring_bar(bars, st, EMPTY_V), EMPTY_COUNT);
#if DTYPE == FT_DTYPE_F32   // the producer's warps 1-3, once they have split K and transposed V
                mbar_init(ring_bar(bars, st, READY_K), PREP_THREADS);
                mbar_init(ring_bar(bars, st, READY_V), PREP_THREADS);
#endif
            }
            for (int qt = 0; qt < Q_TILES; qt++) {
                mbar_init(q_full_bar(bars, qt), 1);
                mbar_init(q_empty_bar(bars, qt), Q_EMPTY_COUNT);
                if (TILE_IN_Q_PLACE)
                    mbar_init(pair_read_bar(bars, qt), CONSUMER_THREADS);
            }
            mbar_init_fence();
        }
        __syncthreads();   // the barriers exist before anyone waits on them
        if (MULTICAST)
            cluster_sync();   // and before the other block arrives on them or loads into this one
        if (threadIdx.x < 128)
            fwd_producer(args, q_smem, kv_smem, bars);
        else
            fwd_consumer(args, q_smem, kv_smem, bars);
        if (MULTICAST)
            cluster_sync();   // the other block's consumers arrive here until their last tile
    }
}
