// families/bwd_mma.cu: FlashAttention backward on tensor cores (f16/bf16, mma.sync.m16n8k16, ldmatrix,
// cp.async; sm_80+; f32 as TF32, m16n8k8: below). Entries: ft_bwd_preprocess (delta =
// rowsum(dO*O)), ft_bwd_dkdv (one block per key tile of a K/V head: dK, dV over the query heads
// that read it, and with DQ_MODE 0 also dQ by fp32 atomics into dq_accum),
// ft_bwd_dq (DQ_MODE 1: one block per query tile, dQ without atomics) and ft_bwd_dq_convert
// (DQ_MODE 0: dq = softmax_scale * dq_accum).
//
// Design.
//  ft_bwd_dkdv: K and V of the key tile stay in swizzled shared memory; Q, dO and their rows'
//   L and delta stream through a NUM_STAGES-deep cp.async ring. Warp w owns KV_ROWS keys
//   (slab w % KV_WARPS_N) and computes S^T = K Q^T and dP^T = V dO^T for them, so P^T and dS^T
//   come out of the accumulators already as the A operand of dV += P^T dO and dK += dS^T Q: no
//   shared-memory round trip for P. When warps outnumber the 16-key slabs, the KV_DSPLIT warps
//   of a slab each keep 1/KV_DSPLIT of the dK/dV columns (this is what fits head dim 256) and
//   recompute the same S^T, dP^T, unless (SPLIT_QUERIES, f32) the two warps of a slab split the
//   queries and exchange P^T and dS^T through shared memory. DQ_MODE 0 stages dS^T in shared
//   memory and computes the tile's dQ = dS K with a query-row x head-dim warp grid, added with
//   fp32 atomics.
//  ft_bwd_dq: Q and dO stay in shared memory, K/V tiles stream; warp w owns Q_ROWS query rows
//   (w % Q_WARPS_M) and Q_KEYS keys of each tile (w / Q_WARPS_M); the Q_WARPS_N partial dQs
//   are summed through shared memory at the end.
//  dK and dQ are scaled by softmax_scale at the end (dq_accum holds dS K unscaled); exp2 runs
//   with log2(e) folded into the scale and into L.
//  Variable-length batches (VARLEN): each block takes its sequence's lengths, first rows and
//   band from seq_of and returns at once when its tile starts past the sequence's end; rows
//   past the end load as zeros with L = +inf and delta = 0 (never the next sequence's), and
//   nothing is stored past it. A key tile of a sequence without queries writes dK = dV = 0.
//
// Layout assumptions (the runtime guarantees them for this family): every row of q, k, v, o,
// dout, dq, dk, dv starts 16-byte aligned, i.e. 16-byte aligned base pointers and batch, head
// and sequence strides that are multiples of 8 elements (f32: 4); the head dim is contiguous.
//
// mma.sync m16n8k16 fragments (lane = 4*g + qd): A a0..a3 = (row g | g+8, col 2qd..+1 | +8);
// B b0,b1 = (k 2qd..+1 | +8, n g); C c0..c3 = (row g, col 2qd..+1), (row g+8, col 2qd..+1).
//
// f32 (DTYPE 0) runs the same kernels on TF32 tensor cores, each product three TF32 products of
// operands split into a high part and remainder (one with ALLOW_TF32; arch/sm80.cuh), as fwd_mma
// does. A tile of COLS floats is a 16-bit tile of 2 COLS columns, so the copies, the swizzle and
// ldmatrix's A B^T products (S^T, dP^T; S, dP) serve it unchanged (mma_abt). The products whose
// B is stored [k][n] (dV += P^T dO, dK += dS^T Q, dQ += dS K) read B a float a lane (kn_lanes:
// rows 2q and 2q + 1 of each 8-row k-step) and take the accumulators as A with the k-step's
// columns in the order 0, 2, 4, 6, 1, 3, 5, 7 (c_to_a_tf32); dS^T stages as floats. The tensor
// cores' accumulation rounds toward zero, so with three products a step's dK and dV (ft_bwd_dq: a
// key tile's dQ) gather in accumulators of their own and are added to the running sums with one
// rounded add: summed over a whole sequence in place, the error grew with its length
// (notes/fp32.md). With one product (ALLOW_TF32) they add into the sums directly (STEP_APART).
// SPLIT_SMEM 1 (f32): each step's Q and dO tiles are split into TF32 parts once, by every thread,
// when they have landed (high parts in place, remainders RED_OFFSET bytes on, after the stage's L
// and delta), and the products read both parts (QDO_LO below) instead of splitting what they read.

// ---- traits (traits/bwd_mma.h): tunables come from the generator's #defines ----------------
constexpr bool TF32 = DTYPE == FT_DTYPE_F32;
// f32 with three products: each step's dV, dK (and ft_bwd_dq's dQ) land in accumulators of the
// step's own, added to the running sums with rounded adds (the tensor cores' accumulation
// truncates, and over many steps that grew the error past float32's). With one product
// (ALLOW_TF32) its own rounding, about 3e-4, dwarfs that: the products go into the sums directly.
constexpr bool STEP_APART = TF32 && !ALLOW_TF32;
constexpr int UNITS = ft_tile_units(DTYPE);                          // 16-bit units an element takes in a tile
constexpr int QK_COLS = HEAD_DIM * UNITS, V_COLS = HEAD_DIM_V * UNITS;   // tile widths in 16-bit units
constexpr int COPY_ELEMS = FT_PIECE_ELEMS;                           // elements a 16-byte copy moves
// ft_bwd_dkdv:
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr int KV_WARPS_N = bwd_mma_kv_warps_n(NUM_WARPS, BLOCK_N);   // warps along the keys
constexpr int KV_DSPLIT = bwd_mma_kv_dsplit(NUM_WARPS, BLOCK_N);     // warps sharing a key slab
constexpr int KV_ROWS = bwd_mma_kv_rows(NUM_WARPS, BLOCK_N);         // keys per warp
constexpr int KV_DK_COLS = HEAD_DIM / KV_DSPLIT;                     // dK columns per warp
constexpr int KV_DV_COLS = HEAD_DIM_V / KV_DSPLIT;                   // dV columns per warp
constexpr int DP_CHUNK = bwd_mma_dp_chunk(NUM_WARPS, BLOCK_M, BLOCK_N, HEAD_DIM, HEAD_DIM_V, DTYPE);
constexpr int KV_T_COLS = KV_DK_COLS > KV_DV_COLS ? KV_DK_COLS : KV_DV_COLS;   // f32: a step's own accumulators
#define KD_GROUP(D) bwd_mma_kd_group(D, DTYPE)
// Query-row x (key | head-dim) warp grid: ft_bwd_dq, and the dQ step of ft_bwd_dkdv.
constexpr int Q_WARPS_M = bwd_mma_q_warps_m(NUM_WARPS, BLOCK_M);     // warps along the queries
constexpr int Q_WARPS_N = bwd_mma_q_warps_n(NUM_WARPS, BLOCK_M);     // ft_bwd_dq: ... along the keys
constexpr int Q_ROWS = BLOCK_M / Q_WARPS_M;                          // query rows per warp
constexpr int Q_KEYS = BLOCK_N / Q_WARPS_N;                          // ft_bwd_dq: keys per warp and tile
constexpr int DQS_WARPS_N = bwd_mma_dqs_warps_n(NUM_WARPS, BLOCK_M, HEAD_DIM, DTYPE);   // dQ step: warps along d
constexpr int Q_DCOLS = HEAD_DIM / DQS_WARPS_N;                      // dQ columns per warp in the dQ step
// Shared memory (bytes).
constexpr int DS_LD = bwd_mma_ds_ld(BLOCK_M, DTYPE);   // dS^T row stride (elements): padded against conflicts
constexpr int Q_TILE_BYTES = BLOCK_M * QK_COLS * 2;
constexpr int DO_TILE_BYTES = BLOCK_M * V_COLS * 2;
constexpr int K_TILE_BYTES = BLOCK_N * QK_COLS * 2;
constexpr int V_TILE_BYTES = BLOCK_N * V_COLS * 2;
// A stage: Q, dO, L, delta, and with SPLIT_SMEM's planes the remainders of Q and dO, in that order,
// so that a high part's remainder lies RED_OFFSET bytes on in either tile.
constexpr int SPLIT_PLANES = bwd_mma_split_planes(SPLIT_SMEM, ALLOW_TF32);
constexpr int RED_OFFSET = Q_TILE_BYTES + DO_TILE_BYTES + BLOCK_M * 4 * 2;
constexpr int DKDV_STAGE_BYTES = RED_OFFSET + SPLIT_PLANES * (Q_TILE_BYTES + DO_TILE_BYTES);
// How the products read Q and dO (arch/sm80.cuh's mma_abt, kn_lanes): -1 split as read, 0 high
// parts rounded in place (SPLIT_SMEM with ALLOW_TF32), else the remainders that many bytes on.
constexpr int QDO_LO = !SPLIT_SMEM ? -1 : SPLIT_PLANES ? RED_OFFSET : 0;
static_assert(RED_OFFSET % 128 == 0, "SPLIT_SMEM: a remainder plane keeps its tile's swizzle (128-byte groups)");
constexpr int DS_BYTES = DQ_MODE == 0 ? BLOCK_N * DS_LD * 2 * UNITS : 0;
constexpr int P_BYTES = SPLIT_QUERIES ? DS_BYTES : 0;   // P^T, laid out as dS^T (SPLIT_QUERIES)
constexpr int DKDV_SMEM_END = K_TILE_BYTES + V_TILE_BYTES + NUM_STAGES * DKDV_STAGE_BYTES + DS_BYTES + P_BYTES;
constexpr int DQ_RED_LD = HEAD_DIM + 8;      // fp32 dQ staging row stride (conflict-free float2)
constexpr int DQ_RED_BYTES = BLOCK_M * DQ_RED_LD * 4;
constexpr int DQ_MAIN_BYTES = Q_TILE_BYTES + DO_TILE_BYTES + NUM_STAGES * (K_TILE_BYTES + V_TILE_BYTES);
constexpr int DQ_SMEM_END = DQ_MAIN_BYTES > DQ_RED_BYTES ? DQ_MAIN_BYTES : DQ_RED_BYTES;

constexpr int RULE = bwd_mma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V, DQ_MODE, DTYPE,
                                  ALLOW_TF32, SPLIT_QUERIES, SPLIT_SMEM);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16 || TF32, "DTYPE: bwd_mma takes f16, bf16 or f32");
static_assert(RULE != BWD_MMA_BAD_TF32, "ALLOW_TF32: 0 in f16 and bf16");
static_assert(RULE != BWD_MMA_BAD_SPLIT_SMEM, "SPLIT_SMEM: 0 in f16 and bf16");
static_assert(RULE != BWD_MMA_BAD_SPLIT_QUERIES, "SPLIT_QUERIES: f32, two warps a key slab, DQ_MODE 0, BLOCK_M/2 a "
                                                 "multiple of 16");
static_assert(RULE != BWD_MMA_BAD_BLOCK_M, "BLOCK_M must be a multiple of 16");
static_assert(RULE != BWD_MMA_BAD_BLOCK_N, "BLOCK_N must be a multiple of 16");
static_assert(RULE != BWD_MMA_BAD_STAGES, "NUM_STAGES must be 1..3");
static_assert(RULE != BWD_MMA_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be multiples of 32");
static_assert(RULE != BWD_MMA_BAD_KV_WARPS, "NUM_WARPS must divide BLOCK_N/16 or be a multiple of it");
static_assert(RULE != BWD_MMA_BAD_KV_SPLIT,
              "NUM_WARPS > BLOCK_N/16 splits the head dims: HEAD_DIM, HEAD_DIM_V must be multiples of 16*NUM_WARPS/(BLOCK_N/16) (f32: 32*)");
static_assert(RULE != BWD_MMA_BAD_Q_WARPS, "NUM_WARPS must divide BLOCK_M/16 or be a multiple of it");
static_assert(RULE != BWD_MMA_BAD_DQ_SPLIT,
              "DQ_MODE 1 with NUM_WARPS > BLOCK_M/16 splits the keys: BLOCK_N must be a multiple of 16*NUM_WARPS/(BLOCK_M/16)");
static_assert(RULE != BWD_MMA_BAD_DQ_MODE, "DQ_MODE must be atomic or separate");
static_assert(RULE != BWD_MMA_BAD_SMEM, "shared memory over 227 KiB: lower BLOCK_M, BLOCK_N or NUM_STAGES");
static_assert(RULE != BWD_MMA_BAD_REGISTERS, "BLOCK_M, BLOCK_N, NUM_WARPS, head dims: registers would spill");
static_assert(DKDV_SMEM_END == FT_SMEM_BYTES_ft_bwd_dkdv, "shared memory: ft_bwd_dkdv's layout differs from traits/bwd_mma.h");
#if DQ_MODE == 1
static_assert(DQ_SMEM_END == FT_SMEM_BYTES_ft_bwd_dq, "shared memory: ft_bwd_dq's layout differs from traits/bwd_mma.h");
#endif

// ---- helpers local to this family ---------------------------------------------------------

// cp.async of a ROWS x COLS tile (row stride ld elements, `valid` rows in range, DATA columns of
// data) into the swizzled shared tile at dst; rows past `valid` (GUARD) and columns past DATA
// are zero-filled, and never read from memory. Each
// thread keeps one column and walks rows with a running pointer: an unrolled loop would make
// the compiler hold every chunk's 64-bit address across the main loop (it spilled).
template <int ROWS, int COLS, int DATA, bool GUARD>
FT_DEVICE void load_tile_async(unsigned dst, const elem_t *src, long long ld, int valid)
{
    constexpr int CPR = COLS / COPY_ELEMS;       // 16-byte chunks per row
    constexpr int RP = NUM_THREADS / CPR;        // rows per pass (CPR <= 64)
    static_assert(RP >= 1, "the block covers one row");
    const int t = threadIdx.x;
    if (RP * CPR != NUM_THREADS && t >= RP * CPR)
        return;
    const int col = (t % CPR) * COPY_ELEMS;
    const bool col_in = DATA == COLS || col < DATA;
    int row = t / CPR;
    const elem_t *p = src + row * ld + col;
    const long long step = RP * ld;
#pragma unroll 1
    for (; row < ROWS; row += RP, p += step) {
        const bool in = (!GUARD || row < valid) && col_in;
        cp_async_16(dst + toff<COLS * UNITS>(row, col * UNITS), in ? p : src, in ? 16 : 0);
    }
}

// Copies a swizzled ROWS x COLS shared tile (at tile) to global rows [0, valid), their first DATA
// columns, with 16-byte stores.
template <int ROWS, int COLS, int DATA, bool GUARD>
FT_DEVICE void store_tile(elem_t *dst, long long ld, const unsigned char *tile, int valid)
{
    constexpr int CPR = COLS / COPY_ELEMS;
    constexpr int CHUNKS = ROWS * CPR;
#pragma unroll
    for (int it = 0; it < (CHUNKS + NUM_THREADS - 1) / NUM_THREADS; it++) {
        const int c = it * NUM_THREADS + threadIdx.x;
        if (CHUNKS % NUM_THREADS != 0 && c >= CHUNKS)
            break;
        const int row = c / CPR, col = (c % CPR) * COPY_ELEMS;
        if ((!GUARD || row < valid) && (DATA == COLS || col < DATA))
            *(uint4 *)(dst + row * ld + col) = *(const uint4 *)(tile + toff<COLS * UNITS>(row, col * UNITS));
    }
}

// Two consecutive elements (row, col..+1) of a swizzled shared tile of COLS elements, from floats.
template <int COLS> FT_DEVICE void put2(unsigned char *tile, int row, int col, float lo, float hi)
{
    store2((elem_t *)(tile + toff<COLS * UNITS>(row, col * UNITS)), lo, hi);
}

// Writes zeros to rows [0, valid) of a ROWS x COLS global tile, their first DATA columns.
template <int ROWS, int COLS, int DATA, bool GUARD>
FT_DEVICE void zero_tile(elem_t *dst, long long ld, int valid)
{
    constexpr int CPR = COLS / COPY_ELEMS;
    constexpr int CHUNKS = ROWS * CPR;
#pragma unroll
    for (int it = 0; it < (CHUNKS + NUM_THREADS - 1) / NUM_THREADS; it++) {
        const int c = it * NUM_THREADS + threadIdx.x;
        if (CHUNKS % NUM_THREADS != 0 && c >= CHUNKS)
            break;
        const int row = c / CPR, col = (c % CPR) * COPY_ELEMS;
        if ((!GUARD || row < valid) && (DATA == COLS || col < DATA))
            *(uint4 *)(dst + row * ld + col) = make_uint4(0u, 0u, 0u, 0u);
    }
}

#if DTYPE == FT_DTYPE_F32
// f32: a step's own accumulators (t), zeroed, and added to the running sums with rounded adds.
template <int I, int J, int JT> FT_DEVICE void zero_acc(float (&t)[I][JT][4])
{
#pragma unroll
    for (int i = 0; i < I; i++)
#pragma unroll
        for (int j = 0; j < J; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                t[i][j][e] = 0.f;
}
// SPLIT_QUERIES: accumulator tiles c (this warp's keys from row0, every query of the tile) back
// from a [key][query] float tile of row stride DS_LD, where the slab's warps left them (each its
// half of the queries, in the same C layout: rows g and g + 8, columns 2q and 2q + 1).
template <int I, int J> FT_DEVICE void load_c_tiles(float (&c)[I][J][4], const float *tile, int row0, int g, int qd)
{
#pragma unroll
    for (int i = 0; i < I; i++)
#pragma unroll
        for (int j = 0; j < J; j++) {
            const float2 top = *(const float2 *)(tile + (row0 + 16 * i + g) * DS_LD + 8 * j + 2 * qd);
            const float2 bottom = *(const float2 *)(tile + (row0 + 16 * i + g + 8) * DS_LD + 8 * j + 2 * qd);
            c[i][j][0] = top.x, c[i][j][1] = top.y, c[i][j][2] = bottom.x, c[i][j][3] = bottom.y;
        }
}
// ... and the way there: this warp's tiles c of KV rows from row0 and J 8-query columns from col0.
template <int I, int J> FT_DEVICE void store_c_tiles(float *tile, const float (&c)[I][J][4], int row0, int col0, int g,
                                                     int qd)
{
#pragma unroll
    for (int i = 0; i < I; i++)
#pragma unroll
        for (int j = 0; j < J; j++) {
            *(float2 *)(tile + (row0 + 16 * i + g) * DS_LD + col0 + 8 * j + 2 * qd) = make_float2(c[i][j][0], c[i][j][1]);
            *(float2 *)(tile + (row0 + 16 * i + g + 8) * DS_LD + col0 + 8 * j + 2 * qd) = make_float2(c[i][j][2], c[i][j][3]);
        }
}

template <int I, int J, int JA, int JT> FT_DEVICE void add_acc(float (&acc)[I][JA][4], const float (&t)[I][JT][4])
{
#pragma unroll
    for (int i = 0; i < I; i++)
#pragma unroll
        for (int j = 0; j < J; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] += t[i][j][e];
}

// acc += the C tiles c times B (mma_c_kn over STEPS k-steps, N8 columns): through the step's own
// t with three products (STEP_APART), straight into acc with one.
template <int STEPS, int N8, int R, int AT, int TT, int CT, int BC, int LO>
FT_DEVICE void add_step_product(float (&acc)[R][AT][4], float (&t)[R][TT][4], const float (&c)[R][CT][4],
                                const kn_lanes<BC, LO> &b)
{
    if constexpr (STEP_APART) {
        zero_acc<R, N8>(t);
        mma_c_kn<STEPS, N8>(t, c, b, 0);
        add_acc<R, N8>(acc, t);
    } else {
        mma_c_kn<STEPS, N8>(acc, c, b, 0);
    }
}
#endif

// ---- ft_bwd_dkdv's steps on a warp's accumulator tiles -------------------------------------
// A warp's tiles hold its KV_ROWS keys (rows kr0 + 16i + g, + 8) by J 8-query columns (8j + 2qd,
// + 1), the first of them query q_first of the sequence; l and d point at those columns' L and
// delta in shared memory.

// S^T -> P^T = exp2(S^T * scale*log2e - L*log2e) (SOFTCAP: of the capped scores), then, where the
// tile may cross the band or the keys' end (`masked`), zero outside it: a key past keys_in, or a
// query the key is hidden from (q_end: past the step's queries).
template <int J>
FT_DEVICE void scores_to_p(float (&s)[KV_ROWS / 16][J][4], const float *l, float scale_log2, bool masked, int lo,
                           int hi, int n0, int nq, int keys_in, int kr0, int q_first, int q_end, int g, int qd)
{
#pragma unroll
    for (int j = 0; j < J; j++) {
        const float2 l2 = *(const float2 *)(l + 8 * j + 2 * qd);
        const float nl0 = -l2.x * (float)FT_LOG2E, nl1 = -l2.y * (float)FT_LOG2E;
#pragma unroll
        for (int i = 0; i < KV_ROWS / 16; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[i][j][e] = fast_exp2(fmaf(s[i][j][e], scale_log2, (e & 1) ? nl1 : nl0));
    }
    if (!masked)
        return;
#pragma unroll
    for (int i = 0; i < KV_ROWS / 16; i++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            mask_key_row<J>(&s[i][0][0], half, lo, hi, n0, kr0 + 16 * i + g + 8 * half, nq, keys_in, q_first, q_end,
                            qd);
}

// dP^T -> dS^T = P^T * (dP^T - delta) (SOFTCAP: times the cap's slope) in place, for J columns of
// dp against P^T's columns from p_col0.
template <int J, int PJ>
FT_DEVICE void grads_to_ds(float (&dp)[KV_ROWS / 16][J][4], const float (&p)[KV_ROWS / 16][PJ][4], int p_col0,
                           const float *d, const float *l, float scale_log2, int qd)
{
#pragma unroll
    for (int j = 0; j < J; j++) {
        const float2 d2 = *(const float2 *)(d + 8 * j + 2 * qd);
#pragma unroll
        for (int i = 0; i < KV_ROWS / 16; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                dp[i][j][e] = p[i][p_col0 + j][e] * (dp[i][j][e] - ((e & 1) ? d2.y : d2.x));
#if SOFTCAP
        const float2 l2 = *(const float2 *)(l + 8 * j + 2 * qd);
        const float nl[2] = { -l2.x * (float)FT_LOG2E, -l2.y * (float)FT_LOG2E };
#pragma unroll
        for (int i = 0; i < KV_ROWS / 16; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                dp[i][j][e] *= cap_slope(p[i][p_col0 + j][e], nl[e & 1], 1.f / scale_log2);
#else
        (void)l, (void)scale_log2;
#endif
    }
}

// ---- ft_bwd_preprocess: delta = rowsum(dO * O) (common/ft_bwd_steps.cuh) -------------------
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_preprocess(const ft_bwd_args args)
{
    bwd_preprocess_rows<NUM_THREADS, BLOCK_M, HEAD_DIM_V, V_DATA, EVEN_M>(args);
}

// ---- ft_bwd_dkdv -----------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_bwd_dkdv(const ft_bwd_args args)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, qd = lane % 4;   // mma fragment row group and column pair
    // The block's K/V head row (batch * heads_k) and key tile (ft_schedule.h).
    int bh, key_tile, part;
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &key_tile, &part);
    const ft_seq sq = seq_of(args, bh / args.heads_k);   // the block's sequence: lengths, rows, band
    const int nq = sq.seqlen_q, nk = sq.seqlen_k;
    const int n0 = key_tile * BLOCK_N;
    if (VARLEN && n0 >= nk)   // past this sequence's keys (the grid is sized by the longest)
        return;
    const int keys_in = nk - n0;             // keys of this tile in range (may exceed BLOCK_N)
    // The block's K/V head and the group of query heads that read it, from query head h0 (batch
    // * heads row bh0) on.
    const int group = kv_group(args);
    const int b = bh / args.heads_k, h = bh % args.heads_k;
    const int bh0 = bh * group, h0 = h * group;

    const elem_t *k = (const elem_t *)args.k + seq_offset(args.k_stride, b, h, sq.k0) + n0 * args.k_stride[2];
    const elem_t *v = (const elem_t *)args.v + seq_offset(args.v_stride, b, h, sq.k0) + n0 * args.v_stride[2];
    const elem_t *q = (const elem_t *)args.q + seq_offset(args.q_stride, b, h0, sq.q0);
    const elem_t *dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h0, sq.q0);
    const float *lse = (const float *)args.lse + seq_row(args, sq, b, h0, bh0);
    const float *delta = (const float *)args.delta + seq_row(args, sq, b, h0, bh0);
    const int l_rows = bwd_head_rows(args, sq);   // lse / delta / dq_accum rows from a head to the next
    const long long qs = args.q_stride[2], dos = args.do_stride[2];

    // Query tiles [mt_begin, m_tiles) that see this key tile, in each head of the group
    // (walk_group); with block skipping, or a sequence without queries, maybe none.
    // The band: the sequence's; dense, read from the argument block here as before seq_of (where
    // the loads sit changes ptxas's schedule, and the dense SASS stays the same).
    const int lo = VARLEN ? sq.lo : args.mask_lo, hi = VARLEN ? sq.hi : args.mask_hi;
    int mt_begin, m_tiles;
    query_tiles<BLOCK_M, BLOCK_N>(lo, hi, n0, nq, nk, mt_begin, m_tiles);
    const int per_head = m_tiles - mt_begin, steps = per_head * group;
    if (mt_begin == m_tiles) {   // no query sees these keys: dK = dV = 0 (the whole block leaves)
        elem_t *dk = (elem_t *)args.dk + seq_offset(args.dk_stride, b, h, sq.k0) + n0 * args.dk_stride[2];
        elem_t *dv = (elem_t *)args.dv + seq_offset(args.dv_stride, b, h, sq.k0) + n0 * args.dv_stride[2];
        zero_tile<BLOCK_N, HEAD_DIM, QK_DATA, !EVEN_N>(dk, args.dk_stride[2], keys_in);
        zero_tile<BLOCK_N, HEAD_DIM_V, V_DATA, !EVEN_N>(dv, args.dv_stride[2], keys_in);
        return;
    }

    // Shared memory: [K][V][NUM_STAGES x (Q, dO, L, delta, SPLIT_SMEM: remainders of Q and dO)]
    // [dS^T (DQ_MODE 0)][P^T (SPLIT_QUERIES)].
    unsigned char *k_smem = smem_raw;
    unsigned char *v_smem = smem_raw + K_TILE_BYTES;
    unsigned char *stage_smem = smem_raw + K_TILE_BYTES + V_TILE_BYTES;
    const unsigned k_addr = smem_addr(k_smem), v_addr = smem_addr(v_smem);
    const unsigned stage_addr = smem_addr(stage_smem);
#if DQ_MODE == 0
    elem_t *ds_smem = (elem_t *)(stage_smem + NUM_STAGES * DKDV_STAGE_BYTES);
    const unsigned ds_addr = smem_addr(ds_smem);
#if SPLIT_QUERIES
    float *p_smem = (float *)((unsigned char *)ds_smem + DS_BYTES);   // P^T beside dS^T
#endif
    float *dq_accum = (float *)args.dq_accum + seq_row(args, sq, b, h0, bh0) * HEAD_DIM;
#endif

    // Q, dO rows and their L, delta for step i of the walk into ring slot st. Rows past the
    // sequence's queries get Q = dO = 0, L = +inf (so P = 0) and delta = 0, so they contribute
    // nothing (VARLEN: never read from the next sequence).
    auto issue_q_tile = [&](int i, int st) {
        const group_step w = walk_group(i, mt_begin, per_head);
        const int m0 = w.mt * BLOCK_M;
        const unsigned base = stage_addr + st * DKDV_STAGE_BYTES;
        load_tile_async<BLOCK_M, HEAD_DIM, QK_DATA, !EVEN_M>(base, q + w.head * args.q_stride[1] + m0 * qs, qs, nq - m0);
        load_tile_async<BLOCK_M, HEAD_DIM_V, V_DATA, !EVEN_M>(base + Q_TILE_BYTES, dout + w.head * args.do_stride[1] + m0 * dos,
                                                      dos, nq - m0);
        const long long l0 = (long long)w.head * l_rows + m0;
        float *ld_smem = (float *)(stage_smem + st * DKDV_STAGE_BYTES + Q_TILE_BYTES + DO_TILE_BYTES);
#pragma unroll
        for (int it = 0; it < (BLOCK_M + NUM_THREADS - 1) / NUM_THREADS; it++) {
            const int t = it * NUM_THREADS + threadIdx.x;
            if (BLOCK_M % NUM_THREADS != 0 && t >= BLOCK_M)
                break;
            if (EVEN_M || m0 + t < nq) {
                cp_async_4(smem_addr(ld_smem + t), lse + l0 + t, 4);
                cp_async_4(smem_addr(ld_smem + BLOCK_M + t), delta + l0 + t, 4);
            } else {
                ld_smem[t] = FT_INF_F;
                ld_smem[BLOCK_M + t] = 0.f;
            }
        }
    };

    // Pipeline: group 0 = K, V and the first query tile; then one group per further tile, one
    // commit per iteration even when nothing is left to load, so wait<NUM_STAGES-2> always
    // means "the current tile has landed".
    load_tile_async<BLOCK_N, HEAD_DIM, QK_DATA, !EVEN_N>(k_addr, k, args.k_stride[2], keys_in);
    load_tile_async<BLOCK_N, HEAD_DIM_V, V_DATA, !EVEN_N>(v_addr, v, args.v_stride[2], keys_in);
    issue_q_tile(0, 0);
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < NUM_STAGES - 1; s++) {
        if (s < steps)
            issue_q_tile(s, s);
        cp_async_commit();
    }

    const float scale_log2 = softmax_log2_scale(args);
    const int wn = warp % KV_WARPS_N, wd = warp / KV_WARPS_N;
    const int kr0 = wn * KV_ROWS;                  // this warp's first key row in the tile
    const int lr16 = lane & 15, lc16 = 8 * (lane >> 4);                     // LM_ROWS16
    const int lr8 = (lane & 7) + 8 * (lane >> 4), lc8 = 8 * ((lane >> 3) & 1);  // LM_ROWS8
    const lm_tile<QK_COLS> k_a = lm_sub<QK_COLS>(k_addr, kr0, 0, lr16, lc16, true);
    const lm_tile<V_COLS> v_a = lm_sub<V_COLS>(v_addr, kr0, 0, lr16, lc16, true);

    float dk_acc[KV_ROWS / 16][KV_DK_COLS / 8][4];
    float dv_acc[KV_ROWS / 16][KV_DV_COLS / 8][4];
#pragma unroll
    for (int i = 0; i < KV_ROWS / 16; i++) {
#pragma unroll
        for (int j = 0; j < KV_DK_COLS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                dk_acc[i][j][e] = 0.f;
#pragma unroll
        for (int j = 0; j < KV_DV_COLS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                dv_acc[i][j][e] = 0.f;
    }

    int st = 0;   // ring slot of the current tile
    for (int i = 0; i < steps; i++) {
        cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
        __syncthreads();   // step i visible to all; every warp is done with step i-1's slot
        if (NUM_STAGES > 1) {
            if (i + NUM_STAGES - 1 < steps)
                issue_q_tile(i + NUM_STAGES - 1, st == 0 ? NUM_STAGES - 1 : st - 1);
            cp_async_commit();
        }
        const group_step w = walk_group(i, mt_begin, per_head);
        const int m0 = w.mt * BLOCK_M;
        const unsigned q_addr = stage_addr + st * DKDV_STAGE_BYTES;
        const unsigned do_addr = q_addr + Q_TILE_BYTES;
#if SPLIT_SMEM
        // Q and dO (one run of bytes) into TF32 parts, each piece by the thread that reads it;
        // then every warp's reads wait for every piece.
        split_pieces<Q_TILE_BYTES + DO_TILE_BYTES, NUM_THREADS>(q_addr, q_addr, RED_OFFSET, threadIdx.x);
        __syncthreads();
#endif
        const float *l_smem = (const float *)(stage_smem + st * DKDV_STAGE_BYTES + Q_TILE_BYTES + DO_TILE_BYTES);
        const float *d_smem = l_smem + BLOCK_M;
        const lm_tile<QK_COLS> q_b = lm_sub<QK_COLS>(q_addr, 0, 0, lr8, lc8, true);
        const lm_tile<V_COLS> do_b = lm_sub<V_COLS>(do_addr, 0, 0, lr8, lc8, true);
#if DTYPE == FT_DTYPE_F32
        const kn_lanes<QK_COLS, QDO_LO> q_t(q_addr, 0, wd * KV_DK_COLS, g, qd);
        const kn_lanes<V_COLS, QDO_LO> do_t(do_addr, 0, wd * KV_DV_COLS, g, qd);
        float t[KV_ROWS / 16][KV_T_COLS / 8][4];   // three products: this step's dV, then dK
#else
        const lm_tile<HEAD_DIM> q_t =
            lm_sub<HEAD_DIM>(q_addr, 0, wd * KV_DK_COLS, lr16, lc16, LM_ALIGNED(HEAD_DIM, KV_DK_COLS));
        const lm_tile<HEAD_DIM_V> do_t =
            lm_sub<HEAD_DIM_V>(do_addr, 0, wd * KV_DV_COLS, lr16, lc16, LM_ALIGNED(HEAD_DIM_V, KV_DV_COLS));
#endif

        // Whether the step's tile may cross the band or the keys' end (scores_to_p masks it then).
        const bool masked =
            tile_needs_mask(lo, hi, m0, m0 + BLOCK_M, n0, n0 + BLOCK_N) || (!EVEN_N && keys_in < BLOCK_N);
#if SPLIT_QUERIES
        // The slab's two warps split the tile's queries (traits: f32, two warps a slab, dQ by
        // atomics): warp wd makes S^T, P^T, dP^T and dS^T for queries [qh0, qh0 + BLOCK_M / 2) only,
        // as the whole path below does for all of them, and leaves P^T and dS^T in shared memory
        // ([key][query], row stride DS_LD: the dQ step reads dS^T there as before). Once the pair
        // has met, each reads the slab's P^T and dS^T over every query back as accumulator tiles
        // for its columns of dV and dK.
        {
            constexpr int HM = BLOCK_M / 2;
            const int qh0 = wd * HM;
            const lm_tile<QK_COLS> qh_b = lm_sub<QK_COLS>(q_addr, qh0, 0, lr8, lc8, true);
            const lm_tile<V_COLS> doh_b = lm_sub<V_COLS>(do_addr, qh0, 0, lr8, lc8, true);
            float ph[KV_ROWS / 16][HM / 8][4];
            mma_abt<KV_ROWS, HM, QK_COLS, KD_GROUP(QK_COLS), QDO_LO>(ph, k_a, qh_b, 0);
#if SOFTCAP
            cap_scores<KV_ROWS / 16 * HM / 8 * 4>(&ph[0][0][0], args);
#endif
            scores_to_p<HM / 8>(ph, l_smem + qh0, scale_log2, masked, lo, hi, n0, nq, keys_in, kr0, m0 + qh0,
                                m0 + BLOCK_M, g, qd);
            float dh[KV_ROWS / 16][HM / 8][4];
            mma_abt<KV_ROWS, HM, V_COLS, KD_GROUP(V_COLS), QDO_LO>(dh, v_a, doh_b, 0);
            grads_to_ds<HM / 8, HM / 8>(dh, ph, 0, d_smem + qh0, l_smem + qh0, scale_log2, qd);
            store_c_tiles<KV_ROWS / 16, HM / 8>(p_smem, ph, kr0, qh0, g, qd);
            store_c_tiles<KV_ROWS / 16, HM / 8>(ds_smem, dh, kr0, qh0, g, qd);
        }
        // The slab's pair (warps wn and wn + KV_WARPS_N) meets: both halves are in shared memory.
        named_barrier_sync(1 + wn, 64);
        {
            float s[KV_ROWS / 16][BLOCK_M / 8][4];
            load_c_tiles<KV_ROWS / 16, BLOCK_M / 8>(s, p_smem, kr0, g, qd);
            add_step_product<BLOCK_M / 8, KV_DV_COLS / 8>(dv_acc, t, s, do_t);
            load_c_tiles<KV_ROWS / 16, BLOCK_M / 8>(s, ds_smem, kr0, g, qd);
            add_step_product<BLOCK_M / 8, KV_DK_COLS / 8>(dk_acc, t, s, q_t);
        }
#else
        // S^T = K Q^T (keys x queries). A = K [key][d] non-trans (LM_ROWS16); B = Q^T, stored
        // [n = query][k = d]: non-trans (LM_ROWS8).
        float s[KV_ROWS / 16][BLOCK_M / 8][4];
        mma_abt<KV_ROWS, BLOCK_M, QK_COLS, KD_GROUP(QK_COLS), QDO_LO>(s, k_a, q_b, 0);

        // P^T = exp2(S^T * scale*log2e - L*log2e) (SOFTCAP: of the capped scores, cap_scores).
        // Element (i, j, e): key kr0+16i+g+8*(e>>1), query m0+8j+2qd+(e&1). Masked: outside the
        // band, or key past seqlen_k.
#if SOFTCAP
        cap_scores<KV_ROWS / 16 * BLOCK_M / 8 * 4>(&s[0][0][0], args);
#endif
        scores_to_p<BLOCK_M / 8>(s, l_smem, scale_log2, masked, lo, hi, n0, nq, keys_in, kr0, m0, m0 + BLOCK_M, g, qd);

        // dV += P^T dO. A = P^T from the accumulators; B = dO stored [k = query][n = dv]:
        // .trans (LM_ROWS16), this warp's KV_DV_COLS columns. f32: into t, then added to dV (STEP_APART).
#if DTYPE == FT_DTYPE_F32
        add_step_product<BLOCK_M / 8, KV_DV_COLS / 8>(dv_acc, t, s, do_t);
        if constexpr (STEP_APART)
            zero_acc<KV_ROWS / 16, KV_T_COLS / 8>(t);   // dK's chunks add into t (below)
#else
#pragma unroll
        for (int kk = 0; kk < BLOCK_M / 16; kk++) {
            unsigned a[KV_ROWS / 16][4];
#pragma unroll
            for (int i = 0; i < KV_ROWS / 16; i++)
                c_to_a(a[i], s[i][2 * kk], s[i][2 * kk + 1]);
#pragma unroll
            for (int jd = 0; jd < KV_DV_COLS / 16; jd++) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3, do_t.at(16 * kk, 16 * jd));
#pragma unroll
                for (int i = 0; i < KV_ROWS / 16; i++) {
                    mma_16816(dv_acc[i][2 * jd], a[i], b0, b1);
                    mma_16816(dv_acc[i][2 * jd + 1], a[i], b2, b3);
                }
            }
        }
#endif

        // Per query chunk of DP_CHUNK: dP^T = V dO^T, dS^T = P^T * (dP^T - delta), dK += dS^T Q,
        // and (DQ_MODE 0) dS^T to shared memory.
#pragma unroll
        for (int c = 0; c < BLOCK_M / DP_CHUNK; c++) {
            constexpr int CJ = DP_CHUNK / 8;   // 8-query column tiles per chunk
            const int cj0 = c * CJ;            // first column tile of this chunk

            // dP^T = V dO^T. A = V [key][dv] non-trans (LM_ROWS16); B = dO^T, stored
            // [n = query][k = dv]: non-trans (LM_ROWS8).
            float dp[KV_ROWS / 16][CJ][4];
            mma_abt<KV_ROWS, DP_CHUNK, V_COLS, KD_GROUP(V_COLS), QDO_LO>(dp, v_a, do_b, 8 * cj0);

            // dS^T = P^T * (dP^T - delta[query]) (SOFTCAP: times the cap's slope), in place of dP^T.
            grads_to_ds<CJ, BLOCK_M / 8>(dp, s, cj0, d_smem + 8 * cj0, l_smem + 8 * cj0, scale_log2, qd);

            // dK += dS^T Q (scaled at the end). B = Q stored [k = query][n = d]: .trans (LM_ROWS16).
            // f32: into t, added to dK after the last chunk (STEP_APART; one product: into dK).
#if DTYPE == FT_DTYPE_F32
            if constexpr (STEP_APART)
                mma_c_kn<CJ, KV_DK_COLS / 8>(t, dp, q_t, cj0);
            else
                mma_c_kn<CJ, KV_DK_COLS / 8>(dk_acc, dp, q_t, cj0);
#else
#pragma unroll
            for (int kk = 0; kk < CJ / 2; kk++) {
                unsigned a[KV_ROWS / 16][4];
#pragma unroll
                for (int i = 0; i < KV_ROWS / 16; i++)
                    c_to_a(a[i], dp[i][2 * kk], dp[i][2 * kk + 1]);
#pragma unroll
                for (int jd = 0; jd < KV_DK_COLS / 16; jd++) {
                    unsigned b0, b1, b2, b3;
                    ldmatrix_x4_trans(b0, b1, b2, b3, q_t.at(8 * cj0 + 16 * kk, 16 * jd));
#pragma unroll
                    for (int i = 0; i < KV_ROWS / 16; i++) {
                        mma_16816(dk_acc[i][2 * jd], a[i], b0, b1);
                        mma_16816(dk_acc[i][2 * jd + 1], a[i], b2, b3);
                    }
                }
            }
#endif

#if DQ_MODE == 0
            // dS^T to shared memory, [key][query] with row stride DS_LD; the KV_DSPLIT warps of
            // a slab hold the same dS^T and share the stores by 8-query column tile.
#pragma unroll
            for (int j = 0; j < CJ; j++) {
                if (KV_DSPLIT == 1 || (cj0 + j) % KV_DSPLIT == wd) {
#pragma unroll
                    for (int i = 0; i < KV_ROWS / 16; i++) {
                        const int row = kr0 + 16 * i + g, col = 8 * (cj0 + j) + 2 * qd;
                        store2(ds_smem + row * DS_LD + col, dp[i][j][0], dp[i][j][1]);
                        store2(ds_smem + (row + 8) * DS_LD + col, dp[i][j][2], dp[i][j][3]);
                    }
                }
            }
#endif
        }
#if DTYPE == FT_DTYPE_F32
        if constexpr (STEP_APART)
            add_acc<KV_ROWS / 16, KV_DK_COLS / 8>(dk_acc, t);
#endif
#endif   // SPLIT_QUERIES

#if DQ_MODE == 0
        __syncthreads();   // dS^T complete; every warp is done reading Q, dO, L, delta of slot st
        if (NUM_STAGES == 1) {
            if (i + 1 < steps)
                issue_q_tile(i + 1, 0);   // overlaps the dQ step
            cp_async_commit();
        }

        // dQ (unscaled) = dS K for this query tile: warp (wm, wc) owns Q_ROWS query rows and
        // Q_DCOLS columns. A = dS stored [k = key][m = query]: .trans (LM_ROWS8); B = K stored
        // [k = key][n = d]: .trans (LM_ROWS16).
        if (DQS_WARPS_N * Q_WARPS_M == NUM_WARPS || warp < DQS_WARPS_N * Q_WARPS_M) {
            const int wm = warp % Q_WARPS_M, wc = warp / Q_WARPS_M;
            float acc[Q_ROWS / 16][Q_DCOLS / 8][4];
#pragma unroll
            for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
                for (int j = 0; j < Q_DCOLS / 8; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[i][j][e] = 0.f;
#if DTYPE == FT_DTYPE_F32
            // f32: A = dS read a float a lane from the [key][query] tile, keys 2q and 2q + 1 of
            // each k-step (kn_lanes' order); B = K by kn_lanes.
            const kn_lanes<QK_COLS> k_t(k_addr, 0, wc * Q_DCOLS, g, qd);
            const unsigned ds_lane = ds_addr + 4u * (2 * qd * DS_LD + wm * Q_ROWS + g);
#pragma unroll 2
            for (int kk = 0; kk < BLOCK_N / 8; kk++) {
                tf32x2 a[Q_ROWS / 16][4];
#pragma unroll
                for (int i = 0; i < Q_ROWS / 16; i++) {
                    const unsigned at = opaque(ds_lane) + 4u * (8 * kk * DS_LD + 16 * i);
                    a[i][0] = tf32_split_bits(ld_shared_tile_b32(at));
                    a[i][1] = tf32_split_bits(ld_shared_tile_b32(at + 32));
                    a[i][2] = tf32_split_bits(ld_shared_tile_b32(at + 4 * DS_LD));
                    a[i][3] = tf32_split_bits(ld_shared_tile_b32(at + 4 * DS_LD + 32));
                }
#pragma unroll
                for (int jd = 0; jd < Q_DCOLS / 8; jd++) {
                    tf32x2 b0, b1;
                    k_t.at(kk, jd, b0, b1);
#pragma unroll
                    for (int i = 0; i < Q_ROWS / 16; i++)
                        mma_tf32_apart(acc[i][jd], a[i], b0, b1);
                }
            }
#else
            const lm_tile<HEAD_DIM> k_t =
                lm_sub<HEAD_DIM>(k_addr, 0, wc * Q_DCOLS, lr16, lc16, LM_ALIGNED(HEAD_DIM, Q_DCOLS));
            const unsigned ds_lane = ds_addr + 2u * (lr8 * DS_LD + wm * Q_ROWS + lc8);
            // Unrolled by 2 only: fully unrolled, ptxas preloads every key step's fragments next
            // to the dK/dV accumulators and spills (head dim 256).
#pragma unroll 2
            for (int kk = 0; kk < BLOCK_N / 16; kk++) {
                unsigned a[Q_ROWS / 16][4];
#pragma unroll
                for (int i = 0; i < Q_ROWS / 16; i++)
                    ldmatrix_x4_trans(a[i][0], a[i][1], a[i][2], a[i][3],
                                      opaque(ds_lane) + 2u * (16 * kk * DS_LD + 16 * i));
#pragma unroll
                for (int jd = 0; jd < Q_DCOLS / 16; jd++) {
                    unsigned b0, b1, b2, b3;
                    ldmatrix_x4_trans(b0, b1, b2, b3, k_t.at(16 * kk, 16 * jd));
#pragma unroll
                    for (int i = 0; i < Q_ROWS / 16; i++) {
                        mma_16816(acc[i][2 * jd], a[i], b0, b1);
                        mma_16816(acc[i][2 * jd + 1], a[i], b2, b3);
                    }
                }
            }
#endif
#pragma unroll
            for (int i = 0; i < Q_ROWS / 16; i++) {
                const int row = m0 + wm * Q_ROWS + 16 * i + g;
#pragma unroll
                for (int j = 0; j < Q_DCOLS / 8; j++) {
                    float *p = dq_accum + ((long long)w.head * l_rows + row) * HEAD_DIM + wc * Q_DCOLS + 8 * j + 2 * qd;
                    if (EVEN_M || row < nq)
                        red_add_f32x2(p, acc[i][j][0], acc[i][j][1]);
                    if (EVEN_M || row + 8 < nq)
                        red_add_f32x2(p + 8 * HEAD_DIM, acc[i][j][2], acc[i][j][3]);
                }
            }
        }
#else
        if (NUM_STAGES == 1) {
            __syncthreads();   // every warp is done with slot 0 before it is refilled
            if (i + 1 < steps)
                issue_q_tile(i + 1, 0);
            cp_async_commit();
        }
#endif
        st = (st + 1 == NUM_STAGES) ? 0 : st + 1;
    }

    // Epilogue: dK*scale and dV in the element type into the K and V tiles (free now), then
    // 16-byte rows out. Output pointers and scale are formed only here so they are not held
    // across the loop.
    cp_async_wait<0>();
    __syncthreads();
    const float scale = (float)args.softmax_scale;
#pragma unroll
    for (int i = 0; i < KV_ROWS / 16; i++) {
        const int row = kr0 + 16 * i + g;
#pragma unroll
        for (int j = 0; j < KV_DK_COLS / 8; j++) {
            const int col = wd * KV_DK_COLS + 8 * j + 2 * qd;
            put2<HEAD_DIM>(k_smem, row, col, dk_acc[i][j][0] * scale, dk_acc[i][j][1] * scale);
            put2<HEAD_DIM>(k_smem, row + 8, col, dk_acc[i][j][2] * scale, dk_acc[i][j][3] * scale);
        }
#pragma unroll
        for (int j = 0; j < KV_DV_COLS / 8; j++) {
            const int col = wd * KV_DV_COLS + 8 * j + 2 * qd;
            put2<HEAD_DIM_V>(v_smem, row, col, dv_acc[i][j][0], dv_acc[i][j][1]);
            put2<HEAD_DIM_V>(v_smem, row + 8, col, dv_acc[i][j][2], dv_acc[i][j][3]);
        }
    }
    __syncthreads();
#if VARLEN
    // No batch stride: the sequence's first key row, read again rather than held (sq.k0).
    const int be = (unsigned)bh / args.heads_k, he = (unsigned)bh % args.heads_k, k_row0 = args.cu_seqlens_k[be];
    elem_t *dk = (elem_t *)args.dk + seq_offset(args.dk_stride, be, he, k_row0) + n0 * args.dk_stride[2];
    elem_t *dv = (elem_t *)args.dv + seq_offset(args.dv_stride, be, he, k_row0) + n0 * args.dv_stride[2];
#else
    elem_t *dk = (elem_t *)args.dk + (unsigned)bh / args.heads_k * args.dk_stride[0] +
                 (unsigned)bh % args.heads_k * args.dk_stride[1] + n0 * args.dk_stride[2];
    elem_t *dv = (elem_t *)args.dv + (unsigned)bh / args.heads_k * args.dv_stride[0] +
                 (unsigned)bh % args.heads_k * args.dv_stride[1] + n0 * args.dv_stride[2];
#endif
    store_tile<BLOCK_N, HEAD_DIM, QK_DATA, !EVEN_N>(dk, args.dk_stride[2], k_smem, keys_in);
    store_tile<BLOCK_N, HEAD_DIM_V, V_DATA, !EVEN_N>(dv, args.dv_stride[2], v_smem, keys_in);
}

#if DQ_MODE == 1
// ---- ft_bwd_dq (DQ_MODE 1): dQ = scale * dS K, one block per query tile, no atomics --------
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_bwd_dq(const ft_bwd_args args)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, qd = lane % 4;
    int bh, m_tile, part;   // the query head row (batch * heads) and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &m_tile, &part);
    const int m0 = m_tile * BLOCK_M;
    const int b = bh / args.heads, h = bh % args.heads;
    const ft_seq sq = seq_of(args, b);
    const int nq = sq.seqlen_q, nk = sq.seqlen_k;
    if (VARLEN && m0 >= nq)   // past this sequence's queries (the grid is sized by the longest)
        return;

    const elem_t *q = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0) + m0 * args.q_stride[2];
    const elem_t *dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0) + m0 * args.do_stride[2];
    const elem_t *k = (const elem_t *)args.k + seq_offset(args.k_stride, b, kv_head(args, h), sq.k0);
    const elem_t *v = (const elem_t *)args.v + seq_offset(args.v_stride, b, kv_head(args, h), sq.k0);
    const float *lse = (const float *)args.lse + seq_row(args, sq, b, h, bh);
    const float *delta = (const float *)args.delta + seq_row(args, sq, b, h, bh);
    const long long ks = args.k_stride[2], vs = args.v_stride[2];

    // Shared memory: [Q][dO][NUM_STAGES x (K, V)]; at the end an fp32 [BLOCK_M][DQ_RED_LD] dQ
    // over all of it.
    const unsigned q_addr = smem_addr(smem_raw);
    const unsigned do_addr = q_addr + Q_TILE_BYTES;
    const unsigned kv_addr = do_addr + DO_TILE_BYTES;
    float *red_smem = (float *)smem_raw;

    // Key tiles to visit, counted from the first (maybe none, as for a sequence without keys:
    // then dQ = 0); k and v point at it.
    // The band: the sequence's; dense, read from the argument block here as before seq_of (where
    // the loads sit changes ptxas's schedule, and the dense SASS stays the same).
    const int lo = VARLEN ? sq.lo : args.mask_lo, hi = VARLEN ? sq.hi : args.mask_hi;
    const key_walk kw = walk_keys<BLOCK_M, BLOCK_N>(lo, hi, m0, nq, nk, k, ks, v, vs);
    const int n_tiles = kw.n_tiles, n_begin = kw.n_begin, keys = kw.keys;

    auto issue_kv_tile = [&](int nt, int slot) {   // nt counts from the first visited tile
        const int kn0 = nt * BLOCK_N;
        const unsigned base = kv_addr + slot * (K_TILE_BYTES + V_TILE_BYTES);
        load_tile_async<BLOCK_N, HEAD_DIM, QK_DATA, !EVEN_N>(base, k + kn0 * ks, ks, keys - kn0);
        load_tile_async<BLOCK_N, HEAD_DIM_V, V_DATA, !EVEN_N>(base + K_TILE_BYTES, v + kn0 * vs, vs, keys - kn0);
    };

    // Group 0 = Q, dO and key tile 0; then one group per further tile (see ft_bwd_dkdv).
    load_tile_async<BLOCK_M, HEAD_DIM, QK_DATA, !EVEN_M>(q_addr, q, args.q_stride[2], nq - m0);
    load_tile_async<BLOCK_M, HEAD_DIM_V, V_DATA, !EVEN_M>(do_addr, dout, args.do_stride[2], nq - m0);
    if (n_tiles > 0)
        issue_kv_tile(0, 0);
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < NUM_STAGES - 1; s++) {
        if (s < n_tiles)
            issue_kv_tile(s, s);
        cp_async_commit();
    }

    const float scale_log2 = softmax_log2_scale(args);
    const int wm = warp % Q_WARPS_M, wk = warp / Q_WARPS_M;
    const int qr0 = wm * Q_ROWS;   // this warp's first query row in the tile
    const int kc0 = wk * Q_KEYS;   // and first key column in each key tile
    const int lr16 = lane & 15, lc16 = 8 * (lane >> 4);
    const int lr8 = (lane & 7) + 8 * (lane >> 4), lc8 = 8 * ((lane >> 3) & 1);
    const lm_tile<QK_COLS> q_a = lm_sub<QK_COLS>(q_addr, qr0, 0, lr16, lc16, true);
    const lm_tile<V_COLS> do_a = lm_sub<V_COLS>(do_addr, qr0, 0, lr16, lc16, true);

    // -L*log2e and delta of this thread's rows qr0+16i+g+8hh; rows past seqlen_q get P = 0.
    float nl[Q_ROWS / 16][2], dd[Q_ROWS / 16][2];
#pragma unroll
    for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const int row = m0 + qr0 + 16 * i + g + 8 * hh;
            nl[i][hh] = -FT_INF_F;
            dd[i][hh] = 0.f;
            if (EVEN_M || row < nq) {
                nl[i][hh] = -lse[row] * (float)FT_LOG2E;
                dd[i][hh] = delta[row];
            }
        }

    float acc[Q_ROWS / 16][HEAD_DIM / 8][4];
#pragma unroll
    for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
        for (int j = 0; j < HEAD_DIM / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.f;

    int slot = 0;
    for (int nt = 0; nt < n_tiles; nt++) {
        cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
        __syncthreads();   // tile nt visible; every warp is done with tile nt-1's slot
        if (NUM_STAGES > 1) {
            if (nt + NUM_STAGES - 1 < n_tiles)
                issue_kv_tile(nt + NUM_STAGES - 1, slot == 0 ? NUM_STAGES - 1 : slot - 1);
            cp_async_commit();
        }
        const int kn0 = n_begin + nt * BLOCK_N;   // absolute: the mask's keys
        const unsigned k_addr = kv_addr + slot * (K_TILE_BYTES + V_TILE_BYTES);
        const unsigned v_addr = k_addr + K_TILE_BYTES;
        const lm_tile<QK_COLS> k_b = lm_sub<QK_COLS>(k_addr, kc0, 0, lr8, lc8, true);
        const lm_tile<V_COLS> v_b = lm_sub<V_COLS>(v_addr, kc0, 0, lr8, lc8, true);

        // S = Q K^T. A = Q [query][d] non-trans (LM_ROWS16); B = K^T stored [n = key][k = d]:
        // non-trans (LM_ROWS8).
        float s[Q_ROWS / 16][Q_KEYS / 8][4];
        mma_abt<Q_ROWS, Q_KEYS, QK_COLS, KD_GROUP(QK_COLS)>(s, q_a, k_b, 0);

        // P = exp2(S * scale*log2e - L*log2e) (SOFTCAP: of the capped scores). Element (i, j, e):
        // query qr0+16i+g+8*(e>>1), key kc0+8j+2qd+(e&1) of the tile. Masked: outside the band,
        // or key past seqlen_k.
#if SOFTCAP
        cap_scores<Q_ROWS / 16 * Q_KEYS / 8 * 4>(&s[0][0][0], args);
#endif
#pragma unroll
        for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
            for (int j = 0; j < Q_KEYS / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    s[i][j][e] = fast_exp2(fmaf(s[i][j][e], scale_log2, nl[i][e >> 1]));
        const bool diag = tile_needs_mask(lo, hi, m0, m0 + BLOCK_M, kn0, kn0 + BLOCK_N);
        const bool key_edge = !EVEN_N && nk - kn0 < BLOCK_N;
        if (diag || key_edge) {
#pragma unroll
            for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    const int query = m0 + qr0 + 16 * i + g + 8 * half;
                    int k0, k1;
                    row_keys(lo, hi, query, nk, k0, k1);
                    const int col0 = kn0 + kc0 + 2 * qd;
                    mask_columns<Q_KEYS / 8>(&s[i][0][0], half, k0 - col0, k1 - col0, 0.f);
                }
        }

        // dP = dO V^T. A = dO [query][dv] non-trans; B = V^T stored [n = key][k = dv]: non-trans.
        float dp[Q_ROWS / 16][Q_KEYS / 8][4];
        mma_abt<Q_ROWS, Q_KEYS, V_COLS, KD_GROUP(V_COLS)>(dp, do_a, v_b, 0);

        // dS = P * (dP - delta[query]) (SOFTCAP: times the cap's slope), in place of dP.
#pragma unroll
        for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
            for (int j = 0; j < Q_KEYS / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    dp[i][j][e] = s[i][j][e] * (dp[i][j][e] - dd[i][e >> 1]);
                    if (SOFTCAP)
                        dp[i][j][e] *= cap_slope(s[i][j][e], nl[i][e >> 1], 1.f / scale_log2);
                }

        // dQ += dS K. A = dS from the accumulators; B = K stored [k = key][n = d]: .trans (LM_ROWS16).
        // f32: B by kn_lanes, the tile's product into t, then added to dQ (STEP_APART; else into dQ).
#if DTYPE == FT_DTYPE_F32
        {
            const kn_lanes<QK_COLS> k_t(k_addr, kc0, 0, g, qd);
            float t[Q_ROWS / 16][HEAD_DIM / 8][4];
            add_step_product<Q_KEYS / 8, HEAD_DIM / 8>(acc, t, dp, k_t);
        }
#else
        const lm_tile<HEAD_DIM> k_t = lm_sub<HEAD_DIM>(k_addr, kc0, 0, lr16, lc16, true);
#pragma unroll
        for (int kk = 0; kk < Q_KEYS / 16; kk++) {
            unsigned a[Q_ROWS / 16][4];
#pragma unroll
            for (int i = 0; i < Q_ROWS / 16; i++)
                c_to_a(a[i], dp[i][2 * kk], dp[i][2 * kk + 1]);
#pragma unroll
            for (int jd = 0; jd < HEAD_DIM / 16; jd++) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3, k_t.at(16 * kk, 16 * jd));
#pragma unroll
                for (int i = 0; i < Q_ROWS / 16; i++) {
                    mma_16816(acc[i][2 * jd], a[i], b0, b1);
                    mma_16816(acc[i][2 * jd + 1], a[i], b2, b3);
                }
            }
        }
#endif

        if (NUM_STAGES == 1) {
            __syncthreads();   // every warp is done with slot 0 before it is refilled
            if (nt + 1 < n_tiles)
                issue_kv_tile(nt + 1, 0);
            cp_async_commit();
        }
        slot = (slot + 1 == NUM_STAGES) ? 0 : slot + 1;
    }

    // Sum the Q_WARPS_N key-split partials in fp32 shared memory, one split at a time, then
    // write scale * dQ with 16-byte stores.
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int split = 0; split < Q_WARPS_N; split++) {
        if (wk == split) {
#pragma unroll
            for (int i = 0; i < Q_ROWS / 16; i++)
#pragma unroll
                for (int j = 0; j < HEAD_DIM / 8; j++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        float2 *p = (float2 *)(red_smem + (qr0 + 16 * i + g + 8 * hh) * DQ_RED_LD + 8 * j + 2 * qd);
                        float2 x = make_float2(acc[i][j][2 * hh], acc[i][j][2 * hh + 1]);
                        if (split > 0) {
                            const float2 y = *p;
                            x.x += y.x;
                            x.y += y.y;
                        }
                        *p = x;
                    }
        }
        __syncthreads();
    }
    const float scale = (float)args.softmax_scale;
#if VARLEN
    // No batch stride: the sequence's first query row, read again rather than held (sq.q0).
    const int be = (unsigned)bh / args.heads, he = (unsigned)bh % args.heads, q_row0 = args.cu_seqlens_q[be];
    elem_t *dq = (elem_t *)args.dq + seq_offset(args.dq_stride, be, he, q_row0) + m0 * args.dq_stride[2];
#else
    elem_t *dq = (elem_t *)args.dq + (unsigned)bh / args.heads * args.dq_stride[0] +
                 (unsigned)bh % args.heads * args.dq_stride[1] + m0 * args.dq_stride[2];
#endif
    constexpr int CPR = HEAD_DIM / COPY_ELEMS;
#pragma unroll
    for (int it = 0; it < (BLOCK_M * CPR + NUM_THREADS - 1) / NUM_THREADS; it++) {
        const int c = it * NUM_THREADS + threadIdx.x;
        if ((BLOCK_M * CPR) % NUM_THREADS != 0 && c >= BLOCK_M * CPR)
            break;
        const int row = c / CPR, col = (c % CPR) * COPY_ELEMS;
        if ((EVEN_M || m0 + row < nq) && (QK_DATA == HEAD_DIM || col < QK_DATA))
            store_piece(dq + row * args.dq_stride[2] + col, red_smem + row * DQ_RED_LD + col, scale);
    }
}
#endif

#if DQ_MODE == 0
// ---- ft_bwd_dq_convert (DQ_MODE 0): dq = scale * dq_accum (common/ft_bwd_steps.cuh) ---------
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_dq_convert(const ft_bwd_args args)
{
    bwd_dq_convert_rows<NUM_THREADS, BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M>(args);
}
#endif
