// families/fwd_mma.cu: FlashAttention forward on tensor cores (f16/bf16, mma.sync.m16n8k16, sm_80+;
// f32 as TF32, m16n8k8: below).
// One thread block per (query tile, batch*head). Q is read once into registers; K/V tiles
// stream through a NUM_STAGES-deep cp.async ring in swizzled shared memory; S = Q K^T and
// O += P V run on mma.sync with fp32 accumulators; the online softmax stays in registers and
// P never leaves them (the S accumulators are repacked as the A operand of P V).
// Variable-length batches (VARLEN): the block takes its sequence's lengths, rows and band from
// seq_of; a tile past its sequence's end returns at once, and rows and keys past it are masked
// as a dense tail tile's (loads zero-filled, scores -inf, rows not stored).
// Decode shapes, few query rows over many keys:
// - SPLITS > 1: blocks x * SPLITS + s (s < SPLITS) share query tile x, each a contiguous share of
//   its key tiles (split_walk); each writes its rows' O / rowsum and log2 L to the partials, and
//   ft_fwd_combine (common/ft_combine.cuh) weighs them into O and L.
// - PACK_GQA: grid.y is batch*heads_k, and row p of the tiles is query row p / G of query head
//   kvh * G + p % G (G = heads / heads_k, kvh the block's K/V head): a group's heads share each
//   K/V tile, read once instead of G times.
// f32 (DTYPE 0) runs the same walk on TF32 tensor cores: each operand split into a TF32 high part
// and remainder and each product made of three TF32 products (mma_tf32, arch/sm80.cuh), one with
// ALLOW_TF32. A shared tile of COLS floats is laid out as a 16-bit tile of 2 COLS columns, so the
// swizzle, the copies and ldmatrix serve it unchanged: ldmatrix's 8x8 16-bit matrix is an 8x4
// one of floats, which is the TF32 fragment's layout, for Q (A) and K (B). V's B fragment wants
// (key, column) pairs down a column, which ldmatrix.trans cannot give 32-bit elements, so each
// lane reads its two floats of V; and P's accumulators are the A fragment of an 8-key step with
// the keys of a step taken in the order 0, 2, 4, 6, 1, 3, 5, 7 (a0 = key 2q, a2 = key 2q + 1),
// which V's reads follow. SPLIT_SMEM: the block splits each K/V tile once, after it lands, into
// planes of high and low parts in shared memory (the raw tile's layout), which every warp then
// reads, instead of each warp splitting the fragments it reads (8 warps: 8 times over).

// ---- traits (traits/fwd_mma.h): tunables come from the generator's #defines ----------------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr int WARP_ROWS = BLOCK_M / NUM_WARPS;                    // query rows each warp owns
constexpr int ROW_TILES = fwd_mma_row_tiles(BLOCK_M, NUM_WARPS);  // 16-row mma tiles per warp
constexpr int KEY_TILES = BLOCK_N / 8;                            // 8-key column tiles of S
constexpr bool TF32 = DTYPE == FT_DTYPE_F32;
constexpr int UNITS = ft_tile_units(DTYPE);                  // 16-bit units an element takes in a tile
constexpr int QK_COLS = HEAD_DIM * UNITS, V_COLS = HEAD_DIM_V * UNITS;   // tile widths in 16-bit units
constexpr int DK_STEPS = (QK_DATA * UNITS + 15) / 16;             // k-steps of Q K^T (padding past the data skipped)
constexpr int DV_TILES = TF32 ? (V_DATA + 7) / 8 : (V_DATA + 15) / 16 * 2;   // 8-wide column tiles of O (the same)
constexpr bool Q_IN_REGS = fwd_mma_q_in_regs(HEAD_DIM, DTYPE);
// Shared memory: the Q tile, then NUM_STAGES x (K tile, V tile).
constexpr int Q_TILE_ELEMS = BLOCK_M * HEAD_DIM;
constexpr int K_TILE_ELEMS = BLOCK_N * HEAD_DIM;
constexpr int V_TILE_ELEMS = BLOCK_N * HEAD_DIM_V;
constexpr int STAGE_ELEMS = K_TILE_ELEMS + V_TILE_ELEMS;
// SPLIT_SMEM (f32): then the planes of one K/V tile, high parts and (three products) low parts.
constexpr int SPLIT_PLANES = fwd_mma_split_planes(SPLIT_SMEM, ALLOW_TF32);
constexpr int PLANE_BYTES = STAGE_ELEMS * 2 * UNITS;
constexpr int SMEM_END = (Q_TILE_ELEMS + (NUM_STAGES + SPLIT_PLANES) * STAGE_ELEMS) * 2 * UNITS;

constexpr int RULE = fwd_mma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, CAUSAL, DTYPE, ALLOW_TF32,
                                  SPLIT_SMEM);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16 || TF32, "DTYPE: fwd_mma takes f16, bf16 or f32");
static_assert(RULE != FWD_MMA_BAD_TF32, "ALLOW_TF32, SPLIT_SMEM: 0 in f16 and bf16");
static_assert(RULE != FWD_MMA_BAD_BLOCK_M, "BLOCK_M must be a multiple of 16*NUM_WARPS");
static_assert(RULE != FWD_MMA_BAD_BLOCK_N, "BLOCK_N must be a multiple of 16");
static_assert(RULE != FWD_MMA_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be multiples of 32");
static_assert(RULE != FWD_MMA_BAD_REGISTERS, "BLOCK_M, BLOCK_N, NUM_WARPS: fragments would spill");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES must be 1..4");
static_assert(SMEM_END == FT_SMEM_BYTES_ft_fwd, "shared memory: the layout differs from traits/fwd_mma.h");
static_assert(!PACK_GQA || !EVEN_M, "EVEN_M must be 0 with PACK_GQA (a tile's rows are a group's)");

// Elements a 16-byte copy moves: 8, or 4 floats.
constexpr int COPY_ELEMS = FT_PIECE_ELEMS;

// Copies a ROWS x COLS tile (row stride `stride` elements, `valid` rows in range, DATA columns
// of data) into a swizzled shared tile with 16-byte cp.async; rows past `valid` and columns
// past DATA are zero-filled.
template <int ROWS, int COLS, int DATA, bool EVEN>
FT_DEVICE void load_tile(elem_t *smem, const elem_t *gmem, long long stride, int valid)
{
    constexpr int CHUNKS = COLS / COPY_ELEMS;
    constexpr int ITERS = (ROWS * CHUNKS + NUM_THREADS - 1) / NUM_THREADS;
    // Past 8 copies a thread, unrolling them all kept every copy's address live across the main
    // loop: one warp with 64x128 K/V tiles spilled 424 bytes (sm_90).
#pragma unroll(ITERS > 8 ? 4 : ITERS)
    for (int it = 0; it < ITERS; it++) {
        const int i = it * NUM_THREADS + threadIdx.x;
        if ((ROWS * CHUNKS) % NUM_THREADS != 0 && i >= ROWS * CHUNKS)
            break;
        const int row = i / CHUNKS;
        const int col = (i % CHUNKS) * COPY_ELEMS;
        const bool in = (EVEN || row < valid) && (DATA == COLS || col < DATA);
        const elem_t *src = in ? gmem + row * stride + col : gmem;
        cp_async_16(smem_addr((unsigned short *)smem + swz<COLS * UNITS>(row, col * UNITS)), src, in ? 16 : 0);
    }
}

#if DTYPE == FT_DTYPE_F32
// SPLIT_SMEM: the K/V tile of a stage (at stage_addr) split into the planes at planes_addr, each
// 16-byte piece by one thread: high parts, then (three products) low parts a plane further.
FT_DEVICE void split_stage(unsigned stage_addr, unsigned planes_addr)
{
    split_pieces<STAGE_ELEMS * 4, NUM_THREADS>(stage_addr, planes_addr, PLANE_BYTES, threadIdx.x);
}
// A fragment element of a split tile: its high and low parts read from the planes (SPLIT_SMEM), or
// the raw float read and split here.
FT_DEVICE tf32x2 split_at(unsigned addr)
{
    if (SPLIT_SMEM)
        return { ld_shared_tile_b32(addr), ALLOW_TF32 ? 0u : ld_shared_tile_b32(addr + PLANE_BYTES) };
    return tf32_split_bits(ld_shared_tile_b32(addr));
}
#endif

// A packed group's Q tile (PACK_GQA): row i is packed row p = m0 + i, query row p / G of the
// group's head p % G (q: the group's first head, its sequence's first row; hs: the head
// stride); rows past `rows` (the sequence's seqlen_q * G) and columns past QK_DATA zero-filled.
FT_DEVICE void load_packed_q(elem_t *smem, const elem_t *q, long long hs, long long rs, int m0, int G, int rows)
{
    constexpr int CHUNKS = HEAD_DIM / COPY_ELEMS;
#pragma unroll
    for (int it = 0; it < (BLOCK_M * CHUNKS + NUM_THREADS - 1) / NUM_THREADS; it++) {
        const int i = it * NUM_THREADS + threadIdx.x;
        if ((BLOCK_M * CHUNKS) % NUM_THREADS != 0 && i >= BLOCK_M * CHUNKS)
            break;
        const int row = i / CHUNKS;
        const int col = (i % CHUNKS) * COPY_ELEMS;
        const int p = m0 + row;
        const bool in = p < rows && (QK_DATA == HEAD_DIM || col < QK_DATA);
        const int qrow = p / G;
        const elem_t *src = in ? q + (p - qrow * G) * hs + qrow * rs + col : q;
        cp_async_16(smem_addr((unsigned short *)smem + swz<QK_COLS>(row, col * UNITS)), src, in ? 16 : 0);
    }
}

// Where a thread's row of the epilogue goes: its query head and query row (PACK_GQA unpacks
// row p of the group of K/V head kvh; else the block's head h and row p).
struct out_row {
    int head, row;
};
FT_DEVICE out_row unpack_row(int p, int h, int G)
{
    if (!PACK_GQA)
        return { h, p };
    const int qrow = p / G;
    return { h * G + p - qrow * G, qrow };
}

// The band of the block's sequence (CAUSAL): a variable-length batch's from seq_of; a dense
// batch's read from the argument block where it is used, as before seq_of: copied to registers
// it made head dim 256 spill on sm_80.
FT_DEVICE int band_lo(const ft_fwd_args &args, const ft_seq &sq)
{
    return VARLEN ? sq.lo : args.mask_lo;
}
FT_DEVICE int band_hi(const ft_fwd_args &args, const ft_seq &sq)
{
    return VARLEN ? sq.hi : args.mask_hi;
}

// One block per SM at least: lets ptxas use up to 255 registers rather than guess an occupancy
// target and spill (it capped D=64, 8 warps at 128 registers and spilled 4 bytes on sm_90).
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_fwd(const ft_fwd_args args)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    elem_t *q_smem = (elem_t *)smem_raw;
    elem_t *kv_smem = q_smem + Q_TILE_ELEMS;

    int bh, m_block, split;   // bh: b * heads + h, or with PACK_GQA b * heads_k + the K/V head h
    ft_schedule_block(blockIdx.x, blockIdx.y, SPLITS, &bh, &m_block, &split);
    const int b = bh / (PACK_GQA ? args.heads_k : args.heads);
    const int h = bh % (PACK_GQA ? args.heads_k : args.heads);
    const int G = PACK_GQA ? kv_group(args) : 1;   // query heads a tile packs
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int group = lane / 4;   // row within an 8-row half of the mma tile
    const int quad = lane % 4;    // column pair within an 8-column tile

    const int m0 = m_block * BLOCK_M;   // packed rows with PACK_GQA
    const ft_seq sq = seq_of(args, b);
    const int rows = PACK_GQA ? sq.seqlen_q * G : sq.seqlen_q;
    if ((VARLEN || PACK_GQA) && m0 >= rows)
        return;   // the grid covers the longest sequence; before any barrier
    const int kvh = PACK_GQA ? h : kv_head(args, h);
    // The tile's first row; with PACK_GQA the first query row of the group's first head.
    const elem_t *q = (const elem_t *)args.q + (PACK_GQA ? seq_offset(args.q_stride, b, h * G, sq.q0)
                                                         : seq_offset(args.q_stride, b, h, sq.q0) + m0 * args.q_stride[2]);
    const elem_t *k = (const elem_t *)args.k + seq_offset(args.k_stride, b, kvh, sq.k0);
    const elem_t *v = (const elem_t *)args.v + seq_offset(args.v_stride, b, kvh, sq.k0);
    const long long ks = args.k_stride[2], vs = args.v_stride[2];
    const int seqlen_k = sq.seqlen_k;
    // The query rows of the tile and of this warp's part of it: with PACK_GQA those its packed
    // rows unpack to, for the band.
    const int warp_p0 = m0 + warp * WARP_ROWS;
    const int tile_q1 = PACK_GQA ? min((m0 + BLOCK_M - 1) / G + 1, sq.seqlen_q) : min(m0 + BLOCK_M, sq.seqlen_q);
    const int warp_q0 = PACK_GQA ? warp_p0 / G : warp_p0;
    const int warp_q1 = PACK_GQA ? (warp_p0 + WARP_ROWS - 1) / G + 1 : warp_p0 + WARP_ROWS;

    // Key tiles to visit, counted from the first; k and v point at it (walk_keys), and with
    // SPLITS this block's share of them.
    key_walk kw = walk_row_keys<BLOCK_N>(band_lo(args, sq), band_hi(args, sq), PACK_GQA ? m0 / G : m0, tile_q1,
                                         seqlen_k, k, ks, v, vs);
    if (SPLITS > 1)
        split_walk<BLOCK_N>(kw, split, SPLITS, k, ks, v, vs);
    const int n_tiles = kw.n_tiles, n_begin = kw.n_begin, keys = kw.keys;

    if (PACK_GQA)
        load_packed_q(q_smem, q, args.q_stride[1], args.q_stride[2], m0, G, rows);
    else
        load_tile<BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M>(q_smem, q, args.q_stride[2], sq.seqlen_q - m0);
    cp_async_commit();
    // Prologue: the first NUM_STAGES-1 K/V tiles. A group is committed for every slot, even
    // an empty one, so that wait_group<NUM_STAGES-2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < NUM_STAGES - 1; s++) {
        if (s < n_tiles) {
            elem_t *stage = kv_smem + s * STAGE_ELEMS;
            const int n0 = s * BLOCK_N;
            load_tile<BLOCK_N, HEAD_DIM, QK_DATA, EVEN_N>(stage, k + n0 * ks, ks, keys - n0);
            load_tile<BLOCK_N, HEAD_DIM_V, V_DATA, EVEN_N>(stage + K_TILE_ELEMS, v + n0 * vs, vs, keys - n0);
        }
        cp_async_commit();
    }

    const float scale_log2 = softmax_log2_scale(args);
    unsigned qf[ROW_TILES][Q_IN_REGS ? DK_STEPS : 1][4];   // Q as A fragments (f32: the floats' bits)
    float o[ROW_TILES][DV_TILES][4];
    float row_max[ROW_TILES][2], row_sum[ROW_TILES][2];   // [.][0]: row group, [.][1]: group+8
#pragma unroll
    for (int r = 0; r < ROW_TILES; r++) {
#pragma unroll
        for (int j = 0; j < DV_TILES; j++)
            o[r][j][0] = o[r][j][1] = o[r][j][2] = o[r][j][3] = 0.f;
        row_max[r][0] = row_max[r][1] = -FT_INF_F;
        row_sum[r][0] = row_sum[r][1] = 0.f;
    }
    const int warp_row0 = warp * WARP_ROWS;      // first row of this warp within the tile
    // A packed tile's query rows of this thread's rows g and g + 8 of each 16-row mma tile.
    int mask_row[PACK_GQA ? ROW_TILES : 1][2];
#pragma unroll
    for (int r = 0; r < (PACK_GQA ? ROW_TILES : 1); r++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            mask_row[r][half] = (warp_p0 + r * 16 + group + half * 8) / G;
    // ldmatrix x4 address pattern: lane supplies row (lane % 8) of matrix (lane / 8).
    const int lm_row = lane % 8, lm_mat = lane / 8;
    // Per-lane ldmatrix addresses of the first fragment of each operand; the rest are swz_step.
    // Q (A operand, 16x16 at rows r0, cols d0): matrices (r0,d0) (r0+8,d0) (r0,d0+8) (r0+8,d0+8).
    // (Columns in 16-bit units: in f32 (r0,d0) (r0+8,d0) (r0,d0+4) (r0+8,d0+4) in floats.)
    const unsigned q_lane = smem_addr(q_smem) +
        2 * swz<QK_COLS>(warp_row0 + (lm_mat & 1) * 8 + lm_row, (lm_mat >> 1) * 8);
    // K^T (B operand) from K rows without transposition: matrices (keys n,d) (n,d+8) (n+8,d)
    // (n+8,d+8) give b0,b1 of key tiles n and n+8.
    const unsigned k_lane = 2 * swz<QK_COLS>((lm_mat >> 1) * 8 + lm_row, (lm_mat & 1) * 8);
    // V (B operand) with ldmatrix.trans: matrices (keys k,d) (k+8,d) (k,d+8) (k+8,d+8) give
    // b0,b1 of column tiles d and d+8. In f32 a lane reads b0 = V[2q][g] and b1 = V[2q + 1][g] of
    // each 8-key step and 8-column tile (v_lane, v_lane1): over a warp, rows 0-7 of one step and
    // two 16-byte chunks of each, which the swizzle spreads over all 32 banks.
    const unsigned v_lane = TF32 ? 2 * (K_TILE_ELEMS * UNITS + swz<V_COLS>(2 * quad, 2 * group))
                                 : 2 * (K_TILE_ELEMS + swz<HEAD_DIM_V>((lm_mat & 1) * 8 + lm_row, (lm_mat >> 1) * 8));
    const unsigned v_lane1 = 2 * (K_TILE_ELEMS * UNITS + swz<V_COLS>(2 * quad + 1, 2 * group));
    const unsigned kv_addr = smem_addr(kv_smem);
    const unsigned planes_addr = kv_addr + NUM_STAGES * STAGE_ELEMS * 2 * UNITS;   // SPLIT_SMEM's

    for (int t = 0; t < n_tiles; t++) {
        if (NUM_STAGES == 1) {
            __syncthreads();   // everyone is done with the single buffer
            const int n0 = t * BLOCK_N;
            load_tile<BLOCK_N, HEAD_DIM, QK_DATA, EVEN_N>(kv_smem, k + n0 * ks, ks, keys - n0);
            load_tile<BLOCK_N, HEAD_DIM_V, V_DATA, EVEN_N>(kv_smem + K_TILE_ELEMS, v + n0 * vs, vs, keys - n0);
            cp_async_commit();
            cp_async_wait<0>();
            __syncthreads();
        } else {
            cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
            __syncthreads();   // tile t visible to all; buffer of tile t-1 free for reuse
            const int next = t + NUM_STAGES - 1;
            if (next < n_tiles) {
                elem_t *stage = kv_smem + (next % NUM_STAGES) * STAGE_ELEMS;
                const int n0 = next * BLOCK_N;
                load_tile<BLOCK_N, HEAD_DIM, QK_DATA, EVEN_N>(stage, k + n0 * ks, ks, keys - n0);
                load_tile<BLOCK_N, HEAD_DIM_V, V_DATA, EVEN_N>(stage + K_TILE_ELEMS, v + n0 * vs, vs, keys - n0);
            }
            cp_async_commit();
        }
        const unsigned raw_addr = kv_addr + (NUM_STAGES == 1 ? 0 : (t % NUM_STAGES) * STAGE_ELEMS * 2 * UNITS);
#if DTYPE == FT_DTYPE_F32
        if (SPLIT_SMEM) {
            // The barrier above freed the planes (every warp is past tile t-1's products).
            split_stage(raw_addr, planes_addr);
            __syncthreads();
        }
#endif
        // Where the products read K and V: the raw tile, or SPLIT_SMEM's high plane.
        const unsigned stage_addr = SPLIT_SMEM ? planes_addr : raw_addr;
        if (Q_IN_REGS && t == 0) {
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
                for (int kk = 0; kk < DK_STEPS; kk++)
                    ldmatrix_x4(qf[r][kk][0], qf[r][kk][1], qf[r][kk][2], qf[r][kk][3],
                                swz_step<QK_COLS>(q_lane, kk * 2, r * 16));
        }
        const int n0 = t * BLOCK_N;

        // S = Q K^T.
        float s[ROW_TILES][KEY_TILES][4];
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
            for (int j = 0; j < KEY_TILES; j++)
                s[r][j][0] = s[r][j][1] = s[r][j][2] = s[r][j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < DK_STEPS; kk++) {
            if (!Q_IN_REGS) {
#pragma unroll
                for (int r = 0; r < ROW_TILES; r++)
                    ldmatrix_x4(qf[r][0][0], qf[r][0][1], qf[r][0][2], qf[r][0][3],
                                swz_step<QK_COLS>(q_lane, kk * 2, r * 16));
            }
#if DTYPE == FT_DTYPE_F32
            tf32x2 qs[ROW_TILES][4];   // this k-step's Q, split
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    qs[r][e] = tf32_split_bits(qf[r][Q_IN_REGS ? kk : 0][e]);
#endif
#pragma unroll
            for (int j = 0; j < KEY_TILES; j += 2) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4(b0, b1, b2, b3, swz_step<QK_COLS>(stage_addr + k_lane, kk * 2, j * 8));
#if DTYPE == FT_DTYPE_F32
                tf32x2 k0, k1, k2, k3;
                if (SPLIT_SMEM) {   // the high parts read above, the low parts a plane further
                    unsigned l0 = 0, l1 = 0, l2 = 0, l3 = 0;
                    if (!ALLOW_TF32)
                        ldmatrix_x4(l0, l1, l2, l3, swz_step<QK_COLS>(stage_addr + PLANE_BYTES + k_lane, kk * 2, j * 8));
                    k0 = { b0, l0 }, k1 = { b1, l1 }, k2 = { b2, l2 }, k3 = { b3, l3 };
                } else {
                    k0 = tf32_split_bits(b0), k1 = tf32_split_bits(b1), k2 = tf32_split_bits(b2), k3 = tf32_split_bits(b3);
                }
#pragma unroll
                for (int r = 0; r < ROW_TILES; r++) {
                    mma_tf32(s[r][j], qs[r], k0, k1);
                    mma_tf32(s[r][j + 1], qs[r], k2, k3);
                }
#else
#pragma unroll
                for (int r = 0; r < ROW_TILES; r++) {
                    mma_16816(s[r][j], qf[r][Q_IN_REGS ? kk : 0], b0, b1);
                    mma_16816(s[r][j + 1], qf[r][Q_IN_REGS ? kk : 0], b2, b3);
                }
#endif
            }
        }

#if SOFTCAP
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
            cap_scores<KEY_TILES * 4>(&s[r][0][0], args);
#endif
        // Mask keys past seqlen_k and those the band hides; only tiles that cross a boundary
        // of the warp's rows pay for it (band_lo, band_hi: where the band is read).
        const bool tail = !EVEN_N && n0 + BLOCK_N > keys;
        const bool band = tile_needs_mask(band_lo(args, sq), band_hi(args, sq), warp_q0, warp_q1, n_begin + n0,
                                          n_begin + n0 + BLOCK_N);
        if (tail || band) {
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++) {
                if (PACK_GQA)
                    mask_rows<KEY_TILES>(&s[r][0][0], n_begin + n0, seqlen_k, mask_row[r][0], mask_row[r][1], quad,
                                         band_lo(args, sq), band_hi(args, sq));
                else
                    mask_scores<KEY_TILES>(&s[r][0][0], n_begin + n0, seqlen_k, m0 + warp_row0 + r * 16 + group,
                                           quad, band_lo(args, sq), band_hi(args, sq));
            }
        }

        // Online softmax, row by row.
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
            for (int half = 0; half < 2; half++)
                softmax_step<KEY_TILES, DV_TILES>(&s[r][0][0], &o[r][0][0], row_max[r][half], row_sum[r][half], half,
                                                  scale_log2);

#if DTYPE == FT_DTYPE_F32
        // O += P V in 8-key steps: key tile kk's accumulators are the A fragment with the step's
        // keys in the order 0, 2, 4, 6, 1, 3, 5, 7 (a0 = c0, a1 = c2, a2 = c1, a3 = c3), so b0 is
        // key 2q's V and b1 key 2q + 1's. The tile's product goes into accumulators of its own,
        // added to O with one rounded add: the tensor cores' accumulation rounds toward zero, and
        // over a whole row of keys (three products every 8 keys) that bias grew with the length
        // (O's error at N 16384 was 50x the CUDA-core kernel's: notes/fp32.md); this way each
        // element takes a tile's worth of them, and the sum over tiles rounds to nearest.
        float ot[ROW_TILES][DV_TILES][4];
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
            for (int j = 0; j < DV_TILES; j++)
                ot[r][j][0] = ot[r][j][1] = ot[r][j][2] = ot[r][j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < KEY_TILES; kk++) {
            tf32x2 pf[ROW_TILES][4];
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++) {
                pf[r][0] = tf32_split(s[r][kk][0]);
                pf[r][1] = tf32_split(s[r][kk][2]);
                pf[r][2] = tf32_split(s[r][kk][1]);
                pf[r][3] = tf32_split(s[r][kk][3]);
            }
#pragma unroll
            for (int j = 0; j < DV_TILES; j++) {
                const tf32x2 b0 = split_at(swz_step<V_COLS>(stage_addr + v_lane, 2 * j, kk * 8));
                const tf32x2 b1 = split_at(swz_step<V_COLS>(stage_addr + v_lane1, 2 * j, kk * 8));
#pragma unroll
                for (int r = 0; r < ROW_TILES; r++)
                    mma_tf32(ot[r][j], pf[r], b0, b1);
            }
        }
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
            for (int j = 0; j < DV_TILES; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    o[r][j][e] += ot[r][j][e];
#else
        // O += P V. P's accumulators for key tiles 2kk, 2kk+1 are exactly the A fragment of a
        // 16-key step.
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; kk++) {
            unsigned pf[ROW_TILES][4];
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++) {
                pf[r][0] = pack2(s[r][2 * kk][0], s[r][2 * kk][1]);
                pf[r][1] = pack2(s[r][2 * kk][2], s[r][2 * kk][3]);
                pf[r][2] = pack2(s[r][2 * kk + 1][0], s[r][2 * kk + 1][1]);
                pf[r][3] = pack2(s[r][2 * kk + 1][2], s[r][2 * kk + 1][3]);
            }
#pragma unroll
            for (int j = 0; j < DV_TILES; j += 2) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3, swz_step<HEAD_DIM_V>(stage_addr + v_lane, j, kk * 16));
#pragma unroll
                for (int r = 0; r < ROW_TILES; r++) {
                    mma_16816(o[r][j], pf[r], b0, b1);
                    mma_16816(o[r][j + 1], pf[r], b2, b3);
                }
            }
        }
#endif
    }
    cp_async_wait<0>();

    // Epilogue: O / rowsum in the input dtype, and L = ln(sum) + max in natural log. The
    // sequence is read again: a variable-length one's rows kept in registers across the loop
    // made head dim 256 spill (sm_90).
    const ft_seq se = seq_of(args, b);
    if (SPLITS == 1 && !PACK_GQA) {
        elem_t *o_out = (elem_t *)args.o + seq_offset(args.o_stride, b, h, se.q0);
        float *lse = (float *)args.lse + seq_row(args, se, b, h, bh);
        const float sink2 = sink_log2(args, h);
#pragma unroll
        for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int row = m0 + warp_row0 + r * 16 + group + half * 8;
                store_row<DV_TILES, V_DATA>(o_out + row * args.o_stride[2], lse + row, &o[r][0][0], row_max[r][half],
                                    row_sum[r][half], half, quad, EVEN_M || row < se.seqlen_q, sink2);
            }
        return;
    }
    // Packed rows or split partials: each row placed by its own query head and row.
    const int se_rows = PACK_GQA ? se.seqlen_q * G : se.seqlen_q;
#pragma unroll
    for (int r = 0; r < ROW_TILES; r++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int p = m0 + warp_row0 + r * 16 + group + half * 8;
            const out_row at = unpack_row(p, h, G);
            const long long lse_row = seq_row(args, se, b, at.head, (long long)b * args.heads + at.head) + at.row;
            const bool in_range = (EVEN_M && !PACK_GQA) || p < se_rows;
            if (SPLITS > 1) {
                const long long part = split * args.part_rows + lse_row;
                store_split_row<DV_TILES, V_DATA>(args.o_part + part * HEAD_DIM_V, args.lse_part + part, &o[r][0][0],
                                                  row_max[r][half], row_sum[r][half], half, quad, in_range);
            } else {
                elem_t *dst = (elem_t *)args.o + seq_offset(args.o_stride, b, at.head, se.q0) +
                              at.row * args.o_stride[2];
                store_row<DV_TILES, V_DATA>(dst, (float *)args.lse + lse_row, &o[r][0][0], row_max[r][half],
                                            row_sum[r][half], half, quad, in_range, sink_log2(args, at.head));
            }
        }
}
