// families/bwd_wgmma_f32.cu: FlashAttention backward for float32 on Hopper's warpgroup tensor
// cores as TF32 (wgmma .tf32, sm_90a only): each product three TF32 products of operands split
// into high parts and remainders (one with ALLOW_TF32). Entries: ft_bwd_preprocess (delta =
// rowsum(dO*O); with DQ_MODE direct also dQ = 0), ft_bwd_dkdv (one block per 64-key tile of a
// K/V head: dK, dV over the query heads that read it, and dQ added by fp32 atomics into dq_accum,
// or with DQ_BULK staged in shared memory and added by the copy engine, or with DQ_MODE direct
// scaled into dQ itself) and ft_bwd_dq_convert (dq = softmax_scale * dq_accum; not with direct).
//
// Design (ft_bwd_dkdv). The TF32 forms of wgmma read both operands K-major only (no transpose),
// and every operand of the backward is reduced over each of its axes in one product or another.
// So each product is laid out so that what it reduces over is contiguous where it lies, and
// the warpgroup that computes (M = 64: the keys, or the head dim) takes the transposed
// operands from registers, which lanes can gather in any order:
//   S^T  = K Q^T       SS   A: K planes [key][d]           B: Q planes [query][d]
//   dP^T = V dO^T      SS   A: V planes [key][dv]          B: dO planes [query][dv]
//   P^T = exp(S^T scale - L), dS^T = P^T (dP^T - delta)   in registers, then to shared memory
//                           as P^T and dS^T [key][query] and dS [query][key], in planes
//   dV^T += dO^T P     RS   A: dO^T gathered from the dO planes   B: P^T planes
//   dK^T += Q^T dS     RS   A: Q^T gathered from the Q planes     B: dS^T planes
//   dQ^T  = K^T dS^T   SS   A: K^T planes [d][key] (made once)    B: dS planes
// dQ^T goes to dq_accum by fp32 atomics (unscaled; ft_bwd_dq_convert scales), or with DQ_MODE
// direct to dQ (float32 like the accumulator: no pass after), scaled by K^T's planes, which hold
// softmax_scale K^T there. The SS products sum
// their small products apart from the large one (issue_ss), as bwd_mma's do. Each query tile's
// dV and dK products land in an accumulator of their own, which the tile adds to the running
// sums with rounded adds: the tensor cores' accumulation truncates, and over many tiles that
// grew the forward's error (notes/fp32.md). The small products of a k-step go first.
//
// Head dim 128 (one TF32 product only: three do not fit shared memory; or BF16_PARTS, below) takes two consumer
// warpgroups, each owning 64 rows of the head dim in dV^T, dK^T and dQ^T (the M of those
// products). S^T and dP^T are the tile's alone: consumer 0 makes S^T and P^T, consumer 1 dP^T,
// and reads P^T back to make dS^T (P^T's own floats, left for it in the dS^T tile, which it then
// overwrites where it read). A step: both take their product and gather their halves of Q^T and
// dO^T; they meet (the score tiles free), consumer 0 stores P^T; they meet (P^T stored), each
// issues its dV^T while consumer 1 makes and stores dS^T and dS; they meet (dS stored), each
// issues its dQ^T and dK^T. One consumer warpgroup at 128 would hold both halves' dK^T and dV^T
// beside the step's operands: more than a thread's 255 registers.
//
// Warps: the producer warpgroup (warps 0-3) loads each query tile's Q and dO with plain loads
// (the next tile's into its registers as soon as it has marked a slot ready), splits them into
// planes as it stores them into the tile's ring slot, copies L and delta, and marks the slot
// ready (an mbarrier of 128 arrivals); the consumer warpgroup (warps 4-7; two at head dim 128,
// warps 4-11) loads K and V once (with K^T: at 128 consumer 0 loads K and K^T, consumer 1 V),
// then for each slot waits ready, computes, and gives the slot back (its empty mbarrier, 128
// arrivals a consumer) once its products and its gathers have read it. P^T, dS^T and dS are
// single tiles: the consumers meet before writing a tile's, so every warp has waited for the last
// tile's products that read them. (Each warp's wait for the next S^T would do it only if no
// warp's share of a wgmma could finish before all four had issued it: true on the H200, where a
// probe found it so, but not promised by the PTX ISA, and racecheck does not see wgmma's reads.)
// Queries past seqlen_q load as zeros with L = +inf and delta = 0 (P = dS = 0 there); keys past
// seqlen_k load as zeros and are masked. dK is scaled by softmax_scale at the end.
//
// BF16_PARTS (head dim 128): every operand in three bfloat16 parts (high, the rounded remainder,
// the rounded remainder of that: a float exactly, above 2^-100 or so), each product the six largest part products (hi
// hi; hi mid, mid hi; hi lo, mid mid, lo hi), or with ALLOW_TF32 in two parts and three products
// (hi hi, hi mid, mid hi), on the 16-bit wgmma, which reads an operand in either order, so every
// product is SS and no operand has a second copy:
//   S^T  = K Q^T       A: K parts [key][d]           B: Q parts [query][d]         (consumer 0)
//   dP^T = V dO^T      A: V parts [key][d]           B: dO parts [query][d]        (consumer 1)
//   dV^T += dO^T P     A: dO parts, read M-major     B: P^T parts [key][query]
//   dK^T += Q^T dS     A: Q parts, read M-major      B: dS^T parts [key][query]
//   dQ^T  = K^T dS^T   A: K parts, read M-major      B: dS^T parts, read N-major
// No K^T, no dS tile, no gathers (the TF32 form's gathers were 28 % of shared memory's wavefronts).
// K, V, Q and dO lie in 128-byte-swizzled panels of 64 columns, a panel's parts one after
// another; P^T and dS^T (32 queries a row) in 64-byte-swizzled rows, a plane a part. Consumer 1
// reads P^T back from its parts (with three exact: hi + (mid + lo) is the float). The ring slot is
// read by dV^T's and dK^T's products, so a consumer gives it back at the end of the step.

// ---- traits (traits/bwd_wgmma_f32.h): tunables come from the generator's #defines ----------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr int CONSUMERS = bwd_wgmma_f32_consumers(HEAD_DIM);   // each owns 64 rows of the head dim
constexpr int CONSUMER_THREADS = 128 * CONSUMERS;
// setmaxnreg may move no more registers than the block holds at launch (__launch_bounds__(NUM_THREADS,
// 1): 65,536 over the threads in steps of 8), or setmaxnreg.inc waits for good.
static_assert(CONSUMERS == 1 || bwd_wgmma_f32_producer_regs() * 128 + bwd_wgmma_f32_consumer_regs() * CONSUMER_THREADS
                                    <= 65536 / NUM_THREADS / 8 * 8 * NUM_THREADS,
              "setmaxnreg: the producer's and the consumers' registers exceed the block's");
constexpr bool PARTS = BF16_PARTS != 0;   // bfloat16 parts on the 16-bit wgmma
// The parts of a float: three (six products, float32's accuracy), or with TF32 allowed two
// (hi hi, hi mid, mid hi: about 2^-16 relative, TF32's one product about 2^-11).
constexpr int NPARTS = PARTS ? bwd_wgmma_f32_part_count(ALLOW_TF32) : 0;
constexpr int PLANES = bwd_wgmma_f32_planes(ALLOW_TF32);   // the TF32 forms' planes
// Two consumers issue S^T and dP^T as one product with its operands picked: the same shapes.
static_assert(CONSUMERS == 1 || (HEAD_DIM == HEAD_DIM_V && (PLANES == 1 || PARTS)), "two consumers: S^T's and dP^T's shapes");
constexpr int RULE = bwd_wgmma_f32_rule(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V, DQ_MODE,
                                        ALLOW_TF32, DQ_BULK, BF16_PARTS);
static_assert(DTYPE == FT_DTYPE_F32, "DTYPE: bwd_wgmma_f32 takes f32");
static_assert(RULE != BWD_WGMMA_F32_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be 64, or 128 with ALLOW_TF32 or BF16_PARTS");
static_assert(RULE != BWD_WGMMA_F32_BAD_BLOCK_M, "BLOCK_M must be 32 or 64 (32 at head dim 128)");
static_assert(RULE != BWD_WGMMA_F32_BAD_BLOCK_N, "BLOCK_N must be 64");
static_assert(RULE != BWD_WGMMA_F32_BAD_WARPS, "NUM_WARPS must be 4 + 4 a consumer");
static_assert(RULE != BWD_WGMMA_F32_BAD_STAGES, "NUM_STAGES must be 1..3");
static_assert(RULE != BWD_WGMMA_F32_BAD_DQ_MODE, "DQ_MODE must be atomic, or direct without DQ_BULK");
static_assert(RULE != BWD_WGMMA_F32_BAD_SMEM, "shared memory over the limit");
static_assert(RULE != BWD_WGMMA_F32_BAD_PARTS, "BF16_PARTS needs ALLOW_TF32=0 and head dims of 128");
static_assert(RULE == BWD_WGMMA_F32_OK, "bwd_wgmma_f32: configuration refused by its traits");

// DQ_MODE direct: each thread's dQ shares, scaled, go by atomics straight into dQ (float32, as the
// accumulator), which ft_bwd_preprocess zeroes; no dq_accum, no convert pass.
constexpr bool DIRECT = DQ_MODE == FT_DQ_DIRECT;

constexpr int BM = BLOCK_M, BN = BLOCK_N;
constexpr int S_REGS = BM / 2;                   // S^T, dP^T, dQ^T accumulators a thread (64 x BM)
constexpr int KV_REGS = BN / 2;                  // dV^T, dK^T (64 x BN)
constexpr int M_STEPS = BM / 8;                  // k-steps over a tile's queries
// Shared memory (offsets from the 1024-aligned base), each plane 1024-aligned; tiles in panels of
// 32 floats (128 bytes a row, 128-byte swizzle). K, V, K^T, P^T and dS^T keep their remainders in
// planes *_PLANE bytes on; Q, dO and dS (the SS products' B) after each panel's high rows (B_ROWS,
// B_LO), their *_PLANE sizing the tiles only.
constexpr int K_PLANE = BN * HEAD_DIM * 4, V_PLANE = BN * HEAD_DIM_V * 4, KT_PLANE = HEAD_DIM * BN * 4;
constexpr int Q_PLANE = BM * HEAD_DIM * 4, DO_PLANE = BM * HEAD_DIM_V * 4, SC_PLANE = BN * BM * 4;
// BF16_PARTS: K, V, Q and dO in panels of 64 bfloat16 columns (128 bytes a row), part x of panel
// p at (NPARTS p + x) KV_PART (K, V) or Q_PART (Q, dO) bytes; P^T and dS^T in 64-byte rows of BM =
// 32 queries (64-byte swizzle), part x at x SC_PART. Each plane and part 1024-aligned.
constexpr int KV_PART = BN * 128, Q_PART = BM * 128, SC_PART = BN * BM * 2;
constexpr int K_BYTES = PARTS ? NPARTS * BN * HEAD_DIM * 2 : PLANES * K_PLANE;
constexpr int V_BYTES = PARTS ? NPARTS * BN * HEAD_DIM_V * 2 : PLANES * V_PLANE;
constexpr int SC_BYTES = PARTS ? NPARTS * SC_PART : PLANES * SC_PLANE;   // P^T's, dS^T's, dS's
constexpr int K_OFF = 0, V_OFF = K_OFF + K_BYTES, KT_OFF = V_OFF + V_BYTES;
constexpr int STAGE_OFF = KT_OFF + (PARTS ? 0 : PLANES * KT_PLANE);
constexpr int STAGE_BYTES = (int)bwd_wgmma_f32_stage_bytes(BM, HEAD_DIM, HEAD_DIM_V, ALLOW_TF32, BF16_PARTS);
// Within a slot: Q, dO, then L and delta.
constexpr int DO_OFF = PARTS ? NPARTS * BM * HEAD_DIM * 2 : PLANES * Q_PLANE;
constexpr int LD_OFF = DO_OFF + (PARTS ? NPARTS * BM * HEAD_DIM_V * 2 : PLANES * DO_PLANE);
constexpr int PT_OFF = STAGE_OFF + NUM_STAGES * STAGE_BYTES;   // P^T [key][query]
constexpr int DST_OFF = PT_OFF + SC_BYTES;                     // dS^T [key][query]
constexpr int DS_OFF = DST_OFF + SC_BYTES;                     // dS [query][key] (not with BF16_PARTS)
// DQ_BULK: two staging tiles of a step's dQ (a step's, while the last step's is read), BM query
// rows of HEAD_DIM floats as dq_accum holds them, so that one bulk reduction adds a whole tile.
constexpr int DQ_TILE = BM * HEAD_DIM * 4;
constexpr int DQ_OFF = DS_OFF + (PARTS ? 0 : SC_BYTES);
constexpr int BAR_OFF = DQ_OFF + (DQ_BULK ? 2 * DQ_TILE : 0);   // ready, empty: 16 bytes a slot
constexpr int SMEM_END = 1024 + BAR_OFF + 16 * NUM_STAGES;
static_assert(SMEM_END == FT_SMEM_BYTES_ft_bwd_dkdv, "shared memory: ft_bwd_dkdv's layout differs from traits/bwd_wgmma_f32.h");
static_assert(LD_OFF + 2 * BM * 4 <= STAGE_BYTES, "a slot's L and delta");
// The B tiles of the SS products (Q and dO [query][col], dS [query][key]): a panel of 32 columns
// holds the tile's BM rows of high parts, then their remainders (issue_ss).
constexpr int B_ROWS = PLANES * BM;   // rows a panel holds
constexpr int B_LO = BM * 128;        // from a high part to its remainder
constexpr int HALF_COLS = 2 * B_ROWS * 128;   // from column d to d + 64 of a slot's tile (two panels on)
// Named barriers of the consumers: the score tiles free (both), and with two consumers P^T
// stored and dS stored; DQ_BULK: the step's dQ staged.
constexpr int CONSUMER_BARRIER = 1, P_STORED_BARRIER = 2, DS_STORED_BARRIER = 3, DQ_STAGED_BARRIER = 4;

// Byte offset of element (row, col) of a ROWS-row tile of floats in panels of 32 columns.
template <int ROWS> FT_DEVICE unsigned f32_offset(int row, int col)
{
    return panel_offset<ROWS>(row, col / 4) + (col % 4) * 4;
}

// A float split into TF32 parts (tf32_split): its high part at `at`, its remainder `plane`
// bytes on (three products only); st_split2: two consecutive floats (8 bytes, aligned).
FT_DEVICE void st_split1(unsigned at, unsigned plane, float x)
{
    const tf32x2 v = tf32_split(x);
    st_shared_b32(at, v.hi);
    if (PLANES == 2)
        st_shared_b32(at + plane, v.lo);
}
FT_DEVICE void st_split2(unsigned at, unsigned plane, float x, float y)
{
    const tf32x2 a = tf32_split(x), b = tf32_split(y);
    st_shared_b32x2(at, a.hi, b.hi);
    if (PLANES == 2)
        st_shared_b32x2(at + plane, a.lo, b.lo);
}

// ---- the products, issued (the caller fences before and commits after) ----------------------
// D (64 x N) = A B^T over KSTEPS k-steps of 8 floats: A 64 rows of an A_ROWS-row tile (its
// remainders A_PLANE bytes on), B an N-row tile, both K-major in panels of 32 floats (4 k-steps a panel); the first
// product of each accumulator overwrites it. With two planes each panel of B holds its N rows'
// remainders after their high parts (B_ROWS, B_LO above), so that A_hi [B_hi; B_lo] is one
// product of 2N columns (d: A_hi B_hi, then A_hi B_lo), which reads A once where A_hi B_hi and
// A_hi B_lo read it twice: wgmma's operand reads were 59 % of shared memory's wavefronts, and
// its data pipe the bound (notes/fp32.md). A_lo B_hi goes to an accumulator of its own (small).
// The small products stay apart from the large one until land_apart adds them: D's running sum
// takes one truncating accumulation a k-step, not three (with one accumulator for S^T, dP^T and
// dQ^T, dQ's error against float64 was 1.6-2.7x the CUDA-core kernel's at N 4096 and 16384;
// bwd_mma's mma_tf32_apart, for the same reason, keeps 1.1-1.2x). One plane: A_hi B_hi alone,
// small untouched.
template <int N, int KSTEPS, int A_PLANE, int A_ROWS>
FT_DEVICE void issue_ss(float (&d)[PLANES * N / 2], float (&small)[N / 2], unsigned a, unsigned b)
{
    const unsigned long long a0 = wg_desc(a, 16, 1024), b0 = wg_desc(b, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        const unsigned long long da = wg_desc_add(a0, (kk / 4) * (A_ROWS * 128) + (kk % 4) * 32);
        const unsigned long long db = wg_desc_add(b0, (kk / 4) * (PLANES * N * 128) + (kk % 4) * 32);
        if constexpr (PLANES == 2) {
            wg_ss_tf32<N>::run(small, wg_desc_add(da, A_PLANE), db, kk > 0);
            wg_ss_tf32<2 * N>::run(d, da, db, kk > 0);
        } else {
            wg_ss_tf32<N>::run(d, da, db, kk > 0);
        }
    }
}

// The product (issue_ss) once landed: A_hi B_hi plus the sum of the small ones.
template <int R> FT_DEVICE void land_apart(float (&out)[R], float (&d)[PLANES * R], float (&small)[R])
{
    wg_pin(d);
    if constexpr (PLANES == 2) {
        wg_pin(small);
#pragma unroll
        for (int r = 0; r < R; r++)
            out[r] = d[r] + (d[R + r] + small[r]);
    } else {
#pragma unroll
        for (int r = 0; r < R; r++)
            out[r] = d[r];
    }
}

// D (64 x N) = A B^T with A from registers (hi, lo: k-step kk's parts in the wg_rs_tf32 layout)
// and B an N-row tile, its remainders B_PLANE bytes on; the three products into D (the caller's
// per-tile accumulator). B stays in planes of its own: with A in registers, A_hi [B_hi; B_lo]
// would read B as often as these three do.
template <int N, int KSTEPS, int B_PLANE>
FT_DEVICE void issue_rs(float (&d)[N / 2], const unsigned (&hi)[KSTEPS][4], const unsigned (&lo)[KSTEPS][4], unsigned b)
{
    const unsigned long long b0 = wg_desc(b, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        const unsigned long long db = wg_desc_add(b0, (kk / 4) * (N * 128) + (kk % 4) * 32);
        if (PLANES == 2) {
            wg_rs_tf32<N>::run(d, lo[kk], db, kk > 0);
            wg_rs_tf32<N>::run(d, hi[kk], wg_desc_add(db, B_PLANE), 1);
        }
        wg_rs_tf32<N>::run(d, hi[kk], db, PLANES == 2 || kk > 0);
    }
}

// The lane's byte offsets in a step's tiles, from its place (q = lane % 4, row0 = 16 w + lane / 4)
// once a step: every element it reads or writes there is one of them plus a constant, so each
// load and store takes an immediate offset instead of its own swizzle arithmetic (which was
// about a quarter of the consumer's instructions). The swizzle XORs a row's 16-byte chunks with
// the row's low three bits, which rows 8 apart share.
//
// Bank conflicts. Shared memory's data pipe was the bound (Nsight Compute: 84 % of its wavefronts
// busy; wgmma's operand reads 59 % of them, the gathers and the P^T/dS^T stores 28 %, each at
// twice its ideal): rows r and r ^ 1 of a 128-byte swizzle put a 32-byte run of columns on the
// same banks, and a gather (four rows, q = 0..3) or an 8-byte store (a half-warp's four rows,
// g = 0..3) met that pair in one instruction. So lanes of odd q gather their element e ^ 2 (the
// query 4 rows on) in instruction e, and lanes of odd g store their column run j ^ 2 in
// instruction j; each puts a pair's rows on four distinct chunk pairs. The values are swapped
// back (gather) or picked (store) in registers: `swap_q`, `swap_g`.
static_assert(BM / 8 >= 4, "lane_offsets: a lane's swapped query run (j ^ 2) within the tile");
struct lane_offsets {
    unsigned gather[4];   // [query][col] slot tiles: (8 kk + q + 4 (e' >> 1), row0 + 8 (e & 1)) is gather[e] + 1024 kk,
                          // e' = e ^ 2 where q is odd
    unsigned kq[4];       // P^T, dS^T ([key][query]): (row0 + 8 half, 8 j' + 2 q) is kq[j % 4] + (j / 4) 128 BN + 1024 half,
                          // j' = j ^ 2 where row0 is odd
    unsigned qk[4];       // dS ([query][key]): (8 j + 2 q + e, row0 + 8 half) is qk[2 half + e] + 1024 j
    bool swap_q, swap_g;
    FT_DEVICE lane_offsets(int q, int row0) : swap_q(q & 1), swap_g(row0 & 1)
    {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int eq = swap_q ? e ^ 2 : e, eg = swap_g ? e ^ 2 : e;
            gather[e] = f32_offset<B_ROWS>(q + 4 * (eq >> 1), row0 + 8 * (e & 1));
            kq[e] = f32_offset<BN>(row0, 8 * eg + 2 * q);
            qk[e] = f32_offset<B_ROWS>(2 * q + (e & 1), row0 + 8 * (e >> 1));
        }
    }
};

// The A registers of dV^T (dO^T) or dK^T (Q^T): the transpose of a slot's [query][col] tile at
// `tile` (remainders PLANE bytes on), rows row0 (= 16 w + g) and row0 + 8 of the transpose being
// columns of the tile, k-step kk's queries 8 kk + q and + 4: a[0] (row0, q), a[1] (row0 + 8, q),
// a[2] (row0, q + 4), a[3] (row0 + 8, q + 4), as wg_rs_tf32 reads them.
template <int PLANE>
FT_DEVICE void gather_transposed(unsigned (&hi)[M_STEPS][4], unsigned (&lo)[M_STEPS][4], unsigned tile,
                                 const lane_offsets &lo_)
{
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const unsigned at = tile + lo_.gather[e] + 1024 * kk;
            hi[kk][e] = ld_shared_b32(at);
            if (PLANES == 2)
                lo[kk][e] = ld_shared_b32(at + PLANE);
        }
    // Lanes of odd q read e ^ 2 in place of e (lane_offsets): put each where wgmma reads it.
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const unsigned h0 = hi[kk][e], h2 = hi[kk][e + 2];
            hi[kk][e] = lo_.swap_q ? h2 : h0;
            hi[kk][e + 2] = lo_.swap_q ? h0 : h2;
            if (PLANES == 2) {
                const unsigned l0 = lo[kk][e], l2 = lo[kk][e + 2];
                lo[kk][e] = lo_.swap_q ? l2 : l0;
                lo[kk][e + 2] = lo_.swap_q ? l0 : l2;
            }
        }
}

// Keeps an RS product's A registers live and unmoved until here (it reads them while in flight).
FT_DEVICE void pin_a(unsigned (&hi)[M_STEPS][4], unsigned (&lo)[M_STEPS][4])
{
#pragma unroll
    for (int kk = 0; kk < M_STEPS; kk++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            asm volatile("" : "+r"(hi[kk][e])::"memory");
            if (PLANES == 2)
                asm volatile("" : "+r"(lo[kk][e])::"memory");
        }
}

// ---- a tile's gradients of the scores --------------------------------------------------------
// The thread's S^T and dP^T elements are keys row0 + 8 half of the tile by queries 8 j + 2 q + e
// (e = 0, 1) from m0: s[4 j + 2 half + e]. S^T becomes P^T = exp2(S^T scale log2 e - L log2 e)
// (SOFTCAP: of the capped scores), zero outside the band and past the keys where the tile may
// cross them (`masked`). l: the slot's L.
FT_DEVICE void scores_to_p(float (&s)[S_REGS], const float *l, const ft_bwd_args &args, float scale_log2,
                           bool masked, int lo, int hi, int n0, int nq, int keys_in, int m0, int row0, int q)
{
#if SOFTCAP
    cap_scores<S_REGS>(s, args);
#else
    (void)args;
#endif
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
        const float2 l2 = *(const float2 *)(l + 8 * j + 2 * q);
        const float nl0 = -l2.x * (float)FT_LOG2E, nl1 = -l2.y * (float)FT_LOG2E;
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[4 * j + e] = fast_exp2(fmaf(s[4 * j + e], scale_log2, (e & 1) ? nl1 : nl0));
    }
    if (masked) {
#pragma unroll
        for (int half = 0; half < 2; half++)
            mask_key_row<BM / 8>(s, half, lo, hi, n0, row0 + 8 * half, nq, keys_in, m0, m0 + BM, q);
    }
}

// The thread's queries' L and delta (queries 8 j + 2 q and + 1): read from the slot (slot_rows),
// or held in registers (held_rows: consumer 1 makes dS^T after giving its slot back).
struct slot_rows {
    const float *l, *dl;
    int q;
    FT_DEVICE float2 lse(int j) const { return *(const float2 *)(l + 8 * j + 2 * q); }
    FT_DEVICE float2 delta(int j) const { return *(const float2 *)(dl + 8 * j + 2 * q); }
};
struct held_rows {
    float2 dl[BM / 8], l[SOFTCAP ? BM / 8 : 1];
    FT_DEVICE explicit held_rows(const slot_rows &r)
    {
#pragma unroll
        for (int j = 0; j < BM / 8; j++) {
            dl[j] = r.delta(j);
            if (SOFTCAP)
                l[SOFTCAP ? j : 0] = r.lse(j);
        }
    }
    FT_DEVICE float2 lse(int j) const { return l[SOFTCAP ? j : 0]; }
    FT_DEVICE float2 delta(int j) const { return dl[j]; }
};

// dP^T becomes dS^T = P^T (dP^T - delta) (SOFTCAP: times the cap's slope); p: the tile's P^T.
template <class ROWS>
FT_DEVICE void dp_to_ds(float (&dp)[S_REGS], const float (&p)[S_REGS], const ROWS &rows, float scale_log2)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
        const float2 d2 = rows.delta(j);
#pragma unroll
        for (int e = 0; e < 4; e++)
            dp[4 * j + e] = p[4 * j + e] * (dp[4 * j + e] - ((e & 1) ? d2.y : d2.x));
#if SOFTCAP
        const float2 l2 = rows.lse(j);
        const float nl[2] = { -l2.x * (float)FT_LOG2E, -l2.y * (float)FT_LOG2E };
#pragma unroll
        for (int e = 0; e < 4; e++)
            dp[4 * j + e] *= cap_slope(p[4 * j + e], nl[e & 1], 1.f / scale_log2);
#else
        (void)scale_log2;
#endif
    }
}

// Where instruction (j, half) of a [key][query] tile's stores puts its pair of queries, and the
// pair's values: lanes of odd g store the queries of run j ^ 2 there (lane_offsets).
FT_DEVICE unsigned kq_at(const lane_offsets &lo_, int j, int half)
{
    return lo_.kq[j % 4] + (j / 4) * (BN * 128) + 1024 * half;
}
FT_DEVICE float2 kq_pair(const float (&x)[S_REGS], const lane_offsets &lo_, int j, int half)
{
    const int r = 4 * j + 2 * half, y = 4 * (j ^ 2) + 2 * half;   // unrolled: constants (a select, not an index)
    return make_float2(lo_.swap_g ? x[y] : x[r], lo_.swap_g ? x[y + 1] : x[r + 1]);
}

// Pair (j, half) of dS (queries 8 j + 2 q and + 1, key row0 + 8 half) to its [query][key] tile
// (the B of dQ^T = K^T dS^T), split into its planes.
FT_DEVICE void store_ds_pair(unsigned base, const float (&ds)[S_REGS], const lane_offsets &lo_, int j, int half)
{
    const int r = 4 * j + 2 * half;
    st_split1(base + DS_OFF + lo_.qk[2 * half] + 1024 * j, B_LO, ds[r]);
    st_split1(base + DS_OFF + lo_.qk[2 * half + 1] + 1024 * j, B_LO, ds[r + 1]);
}

// P^T and dS^T to their [key][query] tiles (pairs of queries, 8 bytes), dS to its [query][key]
// tile (the B of dQ^T = K^T dS^T), each split into its planes.
FT_DEVICE void store_gradients(unsigned base, const float (&s)[S_REGS], const float (&ds)[S_REGS],
                                const lane_offsets &lo_)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const unsigned at = kq_at(lo_, j, half);
            const float2 p = kq_pair(s, lo_, j, half), d = kq_pair(ds, lo_, j, half);
            st_split2(base + PT_OFF + at, SC_PLANE, p.x, p.y);
            st_split2(base + DST_OFF + at, SC_PLANE, d.x, d.y);
            store_ds_pair(base, ds, lo_, j, half);
        }
}

// Two consumers: consumer 0's P^T, rounded into the P^T tile (split2) and as it is into the dS^T
// tile (RAW), where consumer 1 reads it back (load_kq) and then stores its dS^T over it.
template <bool RAW> FT_DEVICE void store_kq(unsigned tile, const float (&x)[S_REGS], const lane_offsets &lo_)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const float2 v = kq_pair(x, lo_, j, half);
            if (RAW)
                st_shared_b32x2(tile + kq_at(lo_, j, half), __float_as_uint(v.x), __float_as_uint(v.y));
            else
                st_split2(tile + kq_at(lo_, j, half), SC_PLANE, v.x, v.y);
        }
}
// 8 bytes from shared memory at a 32-bit shared address (8-byte aligned). (Here rather than in
// arch/: every family's source, and so every stored kernel's hash, would change with it.)
FT_DEVICE float2 ld_shared_f32x2(unsigned addr)
{
    float2 v;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
    return v;
}
// What store_kq<true> left, read by the same lanes at the same places (so that each lane's
// store_kq over it writes only what that lane read); the runs swapped back in registers.
FT_DEVICE void load_kq(unsigned tile, float (&x)[S_REGS], const lane_offsets &lo_)
{
    float y[S_REGS];
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const float2 v = ld_shared_f32x2(tile + kq_at(lo_, j, half));
            y[4 * j + 2 * half] = v.x;
            y[4 * j + 2 * half + 1] = v.y;
        }
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            x[4 * j + k] = lo_.swap_g ? y[4 * (j ^ 2) + k] : y[4 * j + k];
}
// Consumer 1's dS to its [query][key] tile.
FT_DEVICE void store_ds(unsigned base, const float (&ds)[S_REGS], const lane_offsets &lo_)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            store_ds_pair(base, ds, lo_, j, half);
}

// DQ_BULK: a step's dQ^T (this consumer's 64 head-dim rows, landed in dq: head-dim row
// row0 + 8 (e >> 1), query 8 j + 2 q + (e & 1)) into staging tile `tile` as dq_accum's rows hold
// it, then, once every consumer's part is there, the first `rows` rows added to dq_rows' by one
// bulk reduction that thread 0 of consumer 0 issues. A reduction a query row and consumer (each
// row padded to free the stores of bank conflicts: 64 small copy-engine operations a step) ran
// behind the atomics (notes/fp32.md): one large operation, not many small ones. A warp's store
// puts four query rows on the same banks (rows HEAD_DIM floats apart): four wavefronts a store,
// the price of one operation. The tile was last read two steps ago, by the reduction thread 0
// issued then; thread 0 waits until its reductions but the last have read their tiles (below),
// and every consumer thread meets it at the next step's first barrier (CONSUMER_BARRIER) before
// it stores here again: a regrouping of the step's barriers must keep one of all the consumers
// between that wait and the next step's staging stores.
FT_DEVICE void add_dq_bulk(unsigned tile, const float (&dq)[S_REGS], float *dq_rows, int rows, int t, int q,
                           int row0, int c)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            st_shared_b32(tile + ((8 * j + 2 * q + (e & 1)) * HEAD_DIM + 64 * c + row0 + 8 * (e >> 1)) * 4,
                          __float_as_uint(dq[4 * j + e]));
    fence_proxy_async();   // plain stores, read next by the copy engine
    named_barrier_sync(DQ_STAGED_BARRIER, CONSUMER_THREADS);
    if (c == 0 && t == 0) {
        bulk_reduce_add_f32(dq_rows, tile, rows * HEAD_DIM * 4);
        bulk_commit();
        bulk_wait_read<1>();   // the reduction of the step before is done with its tile
    }
}

// ---- BF16_PARTS: the operands' parts and the products of six ------------------------------
// Where a three-part operand's k-step kk (16 elements) lies, in bytes from its high part's k-step
// 0, and which order the product reads it in (TRANS: M- or N-major). PART: from one part to the
// next. K-major in 128-byte panels: 4 k-steps a panel row (32 bytes each), the next panel's high
// part NPARTS PART on (kmajor_panels); otherwise k-steps STEP bytes apart (M- or N-major: 16 rows;
// a 64-byte K-major row: 32 bytes).
template <int PART_, int STEP, int TRANS_> struct part_operand {
    static constexpr int PART = PART_, TRANS = TRANS_;
    static FT_DEVICE constexpr unsigned at(int kk) { return kk * STEP; }
};
template <int PART_> struct kmajor_panels {
    static constexpr int PART = PART_, TRANS = 0;
    static FT_DEVICE constexpr unsigned at(int kk) { return (kk / 4) * NPARTS * PART + (kk % 4) * 32; }
};
using kv_rows = kmajor_panels<KV_PART>;                    // K, V as S^T's and dP^T's A
using qd_rows = kmajor_panels<Q_PART>;                     // Q, dO as their B
using qd_cols = part_operand<Q_PART, 16 * 128, 1>;         // Q, dO read M-major (dK^T's, dV^T's A)
using k_cols = part_operand<KV_PART, 16 * 128, 1>;         // K read M-major (dQ^T's A)
using sc_rows = part_operand<SC_PART, 32, 0>;              // P^T, dS^T K-major (dV^T's, dK^T's B)
using sc_cols = part_operand<SC_PART, 16 * 64, 1>;         // dS^T read N-major (dQ^T's B; its parts' atoms LBO apart)

// D (64 x N) = A B over KSTEPS k-steps, each operand in parts (a, b: their high parts'
// descriptors), into d, the tile's own accumulator (overwritten first): the small part products
// first (three parts: hi mid, mid hi, hi lo, mid mid, lo hi; two: hi mid, mid hi), then hi hi.
// The tensor cores' accumulation truncates at the running sum's size, so a sum over many tiles
// (dV, dK) is kept apart a tile at a time, as the TF32 form's.
template <int N, int KSTEPS, class A, class B>
FT_DEVICE void issue_parts(float (&d)[N / 2], unsigned long long a, unsigned long long b)
{
    constexpr int SMALL = NPARTS == 3 ? 5 : 2;
#pragma unroll
    for (int prod = 0; prod <= SMALL; prod++) {
        // (a's part, b's part): (0, 1), (1, 0), (0, 2), (1, 1), (2, 0) as far as SMALL, then (0, 0)
        const int pa = prod == SMALL ? 0 : prod == 1 || prod == 3 ? 1 : prod == 4 ? 2 : 0;
        const int pb = prod == SMALL ? 0 : prod == 0 || prod == 3 ? 1 : prod == 2 ? 2 : 0;
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++)
            wg_ss<N, B::TRANS, A::TRANS>::run(d, wg_desc_add(a, pa * A::PART + A::at(kk)),
                                              wg_desc_add(b, pb * B::PART + B::at(kk)), prod > 0 || kk > 0);
    }
}

// The same products with B's parts stacked (B's parts lie one after another along N: rows of a
// K-major tile, or 32-column atoms LBO = PART apart of an N-major one), so A is read fewer times a
// k-step (shared memory's data pipe was the bound: 85 % of its wavefronts, the tensor pipe 48 %).
// Three parts: hi [B_mid; B_lo] and mid [B_hi; B_mid] each one product of 2N columns into st,
// whose halves then hold hm + mh and hl + mm, lo hi into lh and hi hi into hh (four reads of A,
// not six). Two: hi [B_hi; B_mid] into st (hh, hm) and mid hi into lh (two reads, not three).
// Each accumulator whole (ptxas serializes wgmma whose accumulators partly overlap another's in
// flight); land_stacked adds them smallest first.
template <int N, int KSTEPS, class A, class B>
FT_DEVICE void issue_parts_stacked(float (&hh)[N / 2], float (&st)[N], float (&lh)[N / 2], unsigned long long a,
                                   unsigned long long b)
{
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        const unsigned long long a0 = wg_desc_add(a, A::at(kk)), b0 = wg_desc_add(b, B::at(kk));
        if constexpr (NPARTS == 3) {
            wg_ss<2 * N, B::TRANS, A::TRANS>::run(st, a0, wg_desc_add(b0, B::PART), kk > 0);   // hi [mid; lo]
            wg_ss<2 * N, B::TRANS, A::TRANS>::run(st, wg_desc_add(a0, A::PART), b0, 1);        // mid [hi; mid]
            wg_ss<N, B::TRANS, A::TRANS>::run(lh, wg_desc_add(a0, 2 * A::PART), b0, kk > 0);   // lo hi
            wg_ss<N, B::TRANS, A::TRANS>::run(hh, a0, b0, kk > 0);                             // hi hi
        } else {
            wg_ss<2 * N, B::TRANS, A::TRANS>::run(st, a0, b0, kk > 0);                         // hi [hi; mid]
            wg_ss<N, B::TRANS, A::TRANS>::run(lh, wg_desc_add(a0, A::PART), b0, kk > 0);       // mid hi
        }
    }
}
template <int R> FT_DEVICE void land_stacked(float (&out)[R], float (&hh)[R], float (&st)[2 * R], float (&lh)[R])
{
    wg_pin(st);
    wg_pin(lh);
    if constexpr (NPARTS == 3) {
        wg_pin(hh);
#pragma unroll
        for (int r = 0; r < R; r++)
            out[r] = hh[r] + (st[r] + (st[R + r] + lh[r]));
    } else {
#pragma unroll
        for (int r = 0; r < R; r++)
            out[r] = st[r] + (st[R + r] + lh[r]);
    }
}

// Byte offset of float column 4 c4 of row `row` (its 8 bytes of high parts) in a ROWS-row tile of
// 64-column panels, a panel's NPARTS parts ROWS * 128 bytes apart (kv_rows, qd_rows).
template <int ROWS> FT_DEVICE unsigned parts_offset(int row, int c4)
{
    return (c4 / 16) * NPARTS * (ROWS * 128) + row * 128 + ((((c4 % 16) / 2) ^ (row % 8)) << 4) + (c4 % 2) * 8;
}
// The pieces (tile_pieces, below: along the rows) split into their parts at `at`. A thread's
// pieces lie STEP rows apart in one column: two offsets (the swizzle's period is 8 rows) and a
// constant each, where one offset a piece kept the producer's addresses in 16 registers (spilled).
template <int ROWS, int COLS, class TILE> FT_DEVICE void store_parts(const TILE &tp, unsigned at, int t)
{
    static_assert(TILE::ALONG_ROWS, "store_parts: a thread's pieces down one column, consecutive threads along a row");
    constexpr int STEP = 128 / (COLS / 4), PERIOD = 8 / STEP;
    static_assert(128 % (COLS / 4) == 0 && 8 % STEP == 0, "store_parts: a thread's pieces down one column");
    unsigned off[PERIOD];
#pragma unroll
    for (int p = 0; p < PERIOD; p++)
        off[p] = parts_offset<ROWS>(TILE::row_of(t + 128 * p), TILE::c4_of(t));
#pragma unroll
    for (int p = 0; p < TILE::N; p++) {
        const bf16_parts4 x(tp.x[p]);
        const unsigned a = at + off[p % PERIOD] + (p / PERIOD) * 1024;
        st_shared_b32x2(a, x.hi[0], x.hi[1]);
        st_shared_b32x2(a + ROWS * 128, x.mid[0], x.mid[1]);
        if (NPARTS == 3)
            st_shared_b32x2(a + 2 * ROWS * 128, x.lo[0], x.lo[1]);
    }
}

// P^T and dS^T in parts: the thread's pair of queries 8 j + 2 q, + 1 of key row0 + 8 half lies at
// at[j] + 512 half of each part's plane (a 64-byte row a key; the 64-byte swizzle moves the row's
// 16-byte chunk j to j ^ (key / 2 % 4), the same for key + 8). A warp's store (one j and half)
// meets 32 distinct banks.
struct kq_parts {
    unsigned at[BM / 8];
    FT_DEVICE kq_parts(int q, int row0)
    {
#pragma unroll
        for (int j = 0; j < BM / 8; j++)
            at[j] = row0 * 64 + ((j ^ ((row0 >> 1) & 3)) << 4) + 4 * q;
    }
};
static_assert(!PARTS || BM == 32, "kq_parts: 64-byte rows of 32 queries");
FT_DEVICE void store_kq_parts(unsigned tile, const float (&x)[S_REGS], const kq_parts &kq)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            unsigned hi, mid, lo;
            bf16_parts2(x[4 * j + 2 * half], x[4 * j + 2 * half + 1], hi, mid, lo);
            const unsigned a = tile + kq.at[j] + 512 * half;
            st_shared_b32(a, hi);
            st_shared_b32(a + SC_PART, mid);
            if (NPARTS == 3)
                st_shared_b32(a + 2 * SC_PART, lo);
        }
}
// What store_kq_parts stored, as the floats it split: hi + (mid + lo) (mid + lo is the remainder
// after hi, exactly, and hi plus that the float); with two parts hi + mid (about 2^-17 off).
FT_DEVICE void load_kq_parts(unsigned tile, float (&x)[S_REGS], const kq_parts &kq)
{
#pragma unroll
    for (int j = 0; j < BM / 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const unsigned a = tile + kq.at[j] + 512 * half;
            const unsigned hi = ld_shared_b32(a), mid = ld_shared_b32(a + SC_PART);
            const unsigned lo = NPARTS == 3 ? ld_shared_b32(a + 2 * SC_PART) : 0u;   // (0: +0.0f in both halves)
            x[4 * j + 2 * half] = __uint_as_float(hi << 16) + (__uint_as_float(mid << 16) + __uint_as_float(lo << 16));
            x[4 * j + 2 * half + 1] = __uint_as_float(hi & 0xffff0000u) +
                                      (__uint_as_float(mid & 0xffff0000u) + __uint_as_float(lo & 0xffff0000u));
        }
}

// ---- ft_bwd_preprocess: delta = rowsum(dO * O), and with DQ_MODE direct dQ = 0 -------------
// (common/ft_bwd_steps.cuh)
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_preprocess(const ft_bwd_args args)
{
    if constexpr (DIRECT)
        bwd_dq_zero_rows<NUM_THREADS, BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M>(args);
    bwd_preprocess_rows<NUM_THREADS, BLOCK_M, HEAD_DIM_V, V_DATA, EVEN_M>(args);
}

// ---- ft_bwd_dkdv ---------------------------------------------------------------------------
// What both warpgroups know of the block: its key tile, the walk over its group's query tiles,
// the tensors from the group's first query head, shared memory.
struct dkdv_block {
    ft_seq sq;            // the block's sequence: lengths, first rows, band
    int nq, n0, keys_in, lo, hi;
    int mt_begin, per_head, steps, l_rows;
    int b, h, bh0, h0;
    const float *q, *dout, *lse, *delta;
    unsigned base;        // shared memory, 1024-aligned
    unsigned char *sm;    // the same, as a generic pointer
};

// Whether a step's tile (queries m0.., the block's keys) may cross the band or the keys' end.
FT_DEVICE bool step_masked(const dkdv_block &bk, int m0)
{
    return tile_needs_mask(bk.lo, bk.hi, m0, m0 + BM, bk.n0, bk.n0 + BN) || (!EVEN_N && bk.keys_in < BN);
}
FT_DEVICE unsigned ready_bar(const dkdv_block &bk, int st) { return bk.base + BAR_OFF + 16 * st; }
FT_DEVICE unsigned empty_bar(const dkdv_block &bk, int st) { return bk.base + BAR_OFF + 16 * st + 8; }
// Ring slot st from shared memory's base (the consumers' opaque copy, or bk.base), and its L and
// delta (L, then delta BM floats on).
FT_DEVICE unsigned slot_at(unsigned base, int st) { return base + STAGE_OFF + st * STAGE_BYTES; }
FT_DEVICE float *slot_ld(const dkdv_block &bk, int st) { return (float *)(bk.sm + STAGE_OFF + st * STAGE_BYTES + LD_OFF); }
// Row 0 of the block's key tile in dK or dV (strides: dk_stride or dv_stride).
FT_DEVICE float *key_rows(void *t, const long long *stride, const dkdv_block &bk)
{
    return (float *)t + seq_offset(stride, bk.b, bk.h, bk.sq.k0) + bk.n0 * stride[2];
}

// A ROWS x COLS tile of floats as 128 threads hold it on its way into shared memory: thread t's
// piece p is the 16 bytes at piece index t + 128 p, consecutive pieces along a row (COLS / 4 a
// row), or with BY_ROWS down a column (ROWS a column): K's, whose transposed copy (K^T) a warp
// then writes as 32 keys of one row, on 32 banks, where along its rows it wrote 16 rows of two
// keys on 4 (an 8-way conflict on each of K^T's 8,192 stores a block: a block's fixed cost,
// which short causal sequences feel). Every load of a tile is issued before any piece is stored:
// a store to shared memory between two loads (an asm with a memory clobber) kept each load behind
// the one before, one load in flight a thread.
template <int ROWS, int COLS, bool BY_ROWS = false> struct tile_pieces {
    static constexpr int N = ROWS * COLS / 4 / 128;
    static constexpr bool ALONG_ROWS = !BY_ROWS;
    static_assert(ROWS * COLS / 4 % 128 == 0, "tile_pieces: whole rounds of 128 threads");
    static_assert(!BY_ROWS || ROWS % 32 == 0, "tile_pieces: a warp's pieces down one column");
    float4 x[N];
    static FT_DEVICE int row_of(int i) { return BY_ROWS ? i % ROWS : i / (COLS / 4); }
    static FT_DEVICE int c4_of(int i) { return BY_ROWS ? i / ROWS : i % (COLS / 4); }
};

// The tile's pieces from src (DATA of its COLS columns in the tensor, row stride ld; rows past
// `valid` unless EVEN), zeros where nothing is.
template <int ROWS, int COLS, int DATA, bool EVEN, bool BY_ROWS>
FT_DEVICE void load_pieces(tile_pieces<ROWS, COLS, BY_ROWS> &tp, const float *src, long long ld, int valid, int t)
{
    using tile = tile_pieces<ROWS, COLS, BY_ROWS>;
#pragma unroll
    for (int p = 0; p < tile::N; p++) {
        const int i = t + 128 * p, row = tile::row_of(i), c4 = tile::c4_of(i);
        const bool in = (EVEN || row < valid) && (DATA == COLS || c4 * 4 < DATA);
        tp.x[p] = in ? *(const float4 *)(src + row * ld + c4 * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

// The pieces split into planes at `at` (panels of PANEL_ROWS rows, remainders PLANE bytes on);
// TRANSPOSED_PLANE (not 0): also the tile's transpose, COLS rows of ROWS, at transposed_at (K^T),
// each value times transposed_scale (DIRECT: the softmax scale, so that dQ^T = K^T dS^T lands
// scaled and its adds go straight to dQ with no multiply a step; 1 leaves the code as it was).
template <int ROWS, int COLS, int PANEL_ROWS, int PLANE, int TRANSPOSED_PLANE, bool BY_ROWS>
FT_DEVICE void store_pieces(const tile_pieces<ROWS, COLS, BY_ROWS> &tp, unsigned at, unsigned transposed_at, int t,
                            float transposed_scale = 1.f)
{
    using tile = tile_pieces<ROWS, COLS, BY_ROWS>;
#pragma unroll
    for (int p = 0; p < tile::N; p++) {
        const int i = t + 128 * p, row = tile::row_of(i), c4 = tile::c4_of(i);
        const float4 x = tp.x[p];
        const unsigned piece = at + panel_offset<PANEL_ROWS>(row, c4);
        st_split4(piece, piece + PLANE, x.x, x.y, x.z, x.w);
        if (TRANSPOSED_PLANE) {
            st_split1(transposed_at + f32_offset<COLS>(4 * c4 + 0, row), TRANSPOSED_PLANE, x.x * transposed_scale);
            st_split1(transposed_at + f32_offset<COLS>(4 * c4 + 1, row), TRANSPOSED_PLANE, x.y * transposed_scale);
            st_split1(transposed_at + f32_offset<COLS>(4 * c4 + 2, row), TRANSPOSED_PLANE, x.z * transposed_scale);
            st_split1(transposed_at + f32_offset<COLS>(4 * c4 + 3, row), TRANSPOSED_PLANE, x.w * transposed_scale);
        }
    }
}

// A query tile's Q, dO, L and delta in the producer's registers.
struct query_tile {
    tile_pieces<BM, HEAD_DIM> q;
    tile_pieces<BM, HEAD_DIM_V> dout;
    float l, delta;   // row t's (t < BM): L (+inf past the queries) and delta (0 there)
};
static_assert(BM <= 128, "query_tile: a row's L and delta a thread");

FT_DEVICE void load_query_tile(query_tile &qt, const ft_bwd_args &args, const dkdv_block &bk, int i, int t)
{
    const group_step w = walk_group(i, bk.mt_begin, bk.per_head);
    const int m0 = w.mt * BM;
    const long long qs = args.q_stride[2], dos = args.do_stride[2];
    load_pieces<BM, HEAD_DIM, QK_DATA, EVEN_M>(qt.q, bk.q + w.head * args.q_stride[1] + m0 * qs, qs, bk.nq - m0, t);
    load_pieces<BM, HEAD_DIM_V, V_DATA, EVEN_M>(qt.dout, bk.dout + w.head * args.do_stride[1] + m0 * dos, dos,
                                                bk.nq - m0, t);
    const long long l0 = (long long)w.head * bk.l_rows + m0 + t;
    const bool in = t < BM && (EVEN_M || m0 + t < bk.nq);
    qt.l = in ? bk.lse[l0] : FT_INF_F;
    qt.delta = in ? bk.delta[l0] : 0.f;
}

// The producer warpgroup (t: 0..127): each step's Q and dO split into its ring slot, L and delta
// beside them, then the slot marked ready; the next step's loads are issued at once, so they
// land while the producer waits for that step's slot to be given back.
FT_DEVICE void produce(const ft_bwd_args &args, const dkdv_block &bk, int t)
{
    query_tile qt;
    load_query_tile(qt, args, bk, 0, t);
#pragma unroll 1
    for (int i = 0; i < bk.steps; i++) {
        const int st = i % NUM_STAGES;
        if (i >= NUM_STAGES)
            mbar_wait(empty_bar(bk, st), (i / NUM_STAGES - 1) & 1);
        const unsigned slot = slot_at(bk.base, st);
        if constexpr (PARTS) {
            store_parts<BM, HEAD_DIM>(qt.q, slot, t);
            store_parts<BM, HEAD_DIM_V>(qt.dout, slot + DO_OFF, t);
        } else {
            store_pieces<BM, HEAD_DIM, B_ROWS, B_LO, 0>(qt.q, slot, 0, t);
            store_pieces<BM, HEAD_DIM_V, B_ROWS, B_LO, 0>(qt.dout, slot + DO_OFF, 0, t);
        }
        if (t < BM) {
            float *ld = slot_ld(bk, st);
            ld[t] = qt.l;
            ld[BM + t] = qt.delta;
        }
        fence_proxy_async();   // plain stores, read next by wgmma
        mbar_arrive(ready_bar(bk, st));
        if (i + 1 < bk.steps)
            load_query_tile(qt, args, bk, i + 1, CONSUMERS > 1 ? (int)opaque(t) : t);
    }
}

// The block's end: the last dQ reductions done (DQ_BULK), then dK^T (scaled) and dV^T to dK and
// dV: rows (head-dim columns) 64 c + row0 + 8 (e >> 1), keys 8 j + 2 q + (e & 1).
FT_DEVICE void store_dkdv(const ft_bwd_args &args, const dkdv_block &bk, const float (&dk)[KV_REGS],
                          const float (&dv)[KV_REGS], int t, int c)
{
    if (DQ_BULK && c == 0 && t == 0)
        bulk_wait<0>();   // the last reductions done before the block's shared memory goes
    const int w = t / 32, lane = t % 32;
    const int q = lane % 4, row0 = 64 * c + 16 * w + lane / 4;   // the thread's first row of each accumulator
    float *dkg = key_rows(args.dk, args.dk_stride, bk), *dvg = key_rows(args.dv, args.dv_stride, bk);
    const float scale = (float)args.softmax_scale;
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int key = 8 * j + 2 * q + (e & 1), d = row0 + 8 * (e >> 1);
            if (!EVEN_N && key >= bk.keys_in)
                continue;
            if (QK_DATA == HEAD_DIM || d < QK_DATA)
                dkg[key * args.dk_stride[2] + d] = dk[4 * j + e] * scale;
            if (V_DATA == HEAD_DIM_V || d < V_DATA)
                dvg[key * args.dv_stride[2] + d] = dv[4 * j + e];
        }
}

// Where the block's dQ shares go: dq_accum's rows of its group's first query head (HEAD_DIM floats
// each, unscaled), or with DIRECT dQ's own (scaled); the other is null.
FT_DEVICE void dq_targets(const ft_bwd_args &args, const dkdv_block &bk, float *&dq_accum, float *&dq_group)
{
    const ft_seq &sq = bk.sq;
    dq_accum = DIRECT ? nullptr : (float *)args.dq_accum + seq_row(args, sq, bk.b, bk.h0, bk.bh0) * HEAD_DIM;
    dq_group = DIRECT ? (float *)args.dq + seq_offset(args.dq_stride, bk.b, bk.h0, sq.q0) : nullptr;
}

// A step's dQ^T (this consumer's 64 head-dim rows: head-dim row row0 + 8 (e >> 1), query
// 8 j + 2 q + (e & 1) in dq[4 j + e]) added: with DIRECT into dQ's rows (dq scaled already), with
// DQ_BULK through staging tile `staging` (add_dq_bulk), else by atomics into dq_accum's rows.
FT_DEVICE void add_dq(const ft_bwd_args &args, const dkdv_block &bk, const float (&dq)[S_REGS], float *dq_accum,
                      float *dq_group, int head, int m0, unsigned staging, int t, int q, int row0, int c)
{
    if constexpr (DIRECT) {
        // dQ's rows lie a run-time stride apart: the thread's two rows of each 8 walked by
        // pointers stepped 8 rows at a time (a 64-bit add each), not each row's address
        // multiplied out (about 8 instructions a row).
        const long long qs = args.dq_stride[2];
        float *even_row = dq_group + head * args.dq_stride[1] + (m0 + 2 * q) * qs + 64 * c + row0;
        float *odd_row = even_row + qs;
#pragma unroll
        for (int j = 0; j < BM / 8; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int qr = 8 * j + 2 * q + (e & 1), d = row0 + 8 * (e >> 1);
                if ((EVEN_M || m0 + qr < bk.nq) && (QK_DATA == HEAD_DIM || 64 * c + d < QK_DATA))
                    atomicAdd((e & 1 ? odd_row : even_row) + 8 * (e >> 1), dq[4 * j + e]);
            }
            even_row += 8 * qs;
            odd_row += 8 * qs;
        }
    } else if constexpr (DQ_BULK) {
        float *dq_rows = dq_accum + ((long long)head * bk.l_rows + m0) * HEAD_DIM;
        const int rows = EVEN_M ? BM : min(BM, bk.nq - m0);
        add_dq_bulk(staging, dq, dq_rows, rows, t, q, row0, c);
    } else {
        float *dq_tile = dq_accum + ((long long)head * bk.l_rows + m0) * HEAD_DIM + 64 * c;
#pragma unroll
        for (int j = 0; j < BM / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int qr = 8 * j + 2 * q + (e & 1), d = row0 + 8 * (e >> 1);
                if (EVEN_M || m0 + qr < bk.nq)
                    atomicAdd(dq_tile + qr * HEAD_DIM + d, dq[4 * j + e]);
            }
    }
}

// A consumer warpgroup (t: 0..127; c: which, 0 with one): K, V and K^T into planes, then every
// step's products; its rows of dK and dV written at the end. With two consumers consumer c owns
// head-dim rows 64 c..64 c + 63 of dV^T, dK^T and dQ^T (see the top of the file).
FT_DEVICE void consume_tf32(const ft_bwd_args &args, const dkdv_block &bk, int t, int c)
{
    const int w = t / 32, lane = t % 32;
    const ft_seq &sq = bk.sq;
    const float *k = (const float *)args.k + seq_offset(args.k_stride, bk.b, bk.h, sq.k0) + bk.n0 * args.k_stride[2];
    const float *v = (const float *)args.v + seq_offset(args.v_stride, bk.b, bk.h, sq.k0) + bk.n0 * args.v_stride[2];
    // K and K^T by consumer 0, V by the last (one consumer: both, every load issued before a
    // store). Written out per case: one form for both put the pieces of both tiles in every
    // thread at head dim 128 (zeroed, 152 instructions more).
    const float kt_scale = DIRECT ? (float)args.softmax_scale : 1.f;   // K^T serves dQ alone
    if (c == 0) {
        tile_pieces<BN, HEAD_DIM, true> kp;
        load_pieces<BN, HEAD_DIM, QK_DATA, EVEN_N>(kp, k, args.k_stride[2], bk.keys_in, t);
        if constexpr (CONSUMERS == 1) {
            tile_pieces<BN, HEAD_DIM_V> vp;
            load_pieces<BN, HEAD_DIM_V, V_DATA, EVEN_N>(vp, v, args.v_stride[2], bk.keys_in, t);
            store_pieces<BN, HEAD_DIM, BN, K_PLANE, KT_PLANE>(kp, bk.base + K_OFF, bk.base + KT_OFF, t, kt_scale);
            store_pieces<BN, HEAD_DIM_V, BN, V_PLANE, 0>(vp, bk.base + V_OFF, 0, t);
        } else {
            store_pieces<BN, HEAD_DIM, BN, K_PLANE, KT_PLANE>(kp, bk.base + K_OFF, bk.base + KT_OFF, t, kt_scale);
        }
    } else {
        tile_pieces<BN, HEAD_DIM_V> vp;
        load_pieces<BN, HEAD_DIM_V, V_DATA, EVEN_N>(vp, v, args.v_stride[2], bk.keys_in, t);
        store_pieces<BN, HEAD_DIM_V, BN, V_PLANE, 0>(vp, bk.base + V_OFF, 0, t);
    }
    fence_proxy_async();
    named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);

    float dv[KV_REGS], dk[KV_REGS];
#pragma unroll
    for (int r = 0; r < KV_REGS; r++)
        dv[r] = dk[r] = 0.f;
    const float scale_log2 = softmax_log2_scale(args);
    float *dq_accum, *dq_group;
    dq_targets(args, bk, dq_accum, dq_group);

#pragma unroll 1
    for (int i = 0; i < bk.steps; i++) {
        const int st = i % NUM_STAGES;
        const group_step gs = walk_group(i, bk.mt_begin, bk.per_head);
        const int m0 = gs.mt * BM;
        mbar_wait(ready_bar(bk, st), (i / NUM_STAGES) & 1);
        // Shared memory's base and the lane's place, made opaque each step: else ptxas computes
        // every descriptor and address the step derives from them once and keeps them across the
        // loop (with EVEN_M and EVEN_N the kernel spilled 208-512 bytes of them).
        const unsigned base = __shfl_sync(0xffffffffu, opaque(bk.base), 0), slot = slot_at(base, st);
        const int q = (int)opaque(lane % 4), row0 = (int)opaque(16 * w + lane / 4);
        // (Each value is made where the step first needs it, as before the two-consumer form: the
        // kernel holds 250 registers at head dim 64, and its SASS stays as it was; dev/sass-diff.sh.)
        unsigned do_hi[M_STEPS][4], do_lo[M_STEPS][4], q_hi[M_STEPS][4], q_lo[M_STEPS][4];
        float part[KV_REGS];
        if constexpr (CONSUMERS == 1) {
            float s_acc[PLANES * S_REGS], dp_acc[PLANES * S_REGS], s_small[S_REGS], dp_small[S_REGS];
            wg_fence();
            issue_ss<BM, HEAD_DIM / 8, K_PLANE, BN>(s_acc, s_small, base + K_OFF, slot);
            issue_ss<BM, HEAD_DIM_V / 8, V_PLANE, BN>(dp_acc, dp_small, base + V_OFF, slot + DO_OFF);
            wg_commit();
            const lane_offsets offs(q, row0);
            gather_transposed<B_LO>(do_hi, do_lo, slot + DO_OFF, offs);
            gather_transposed<B_LO>(q_hi, q_lo, slot, offs);
            wg_wait<0>();
            float s[S_REGS], dp[S_REGS];
            land_apart(s, s_acc, s_small);
            land_apart(dp, dp_acc, dp_small);
            const float *l = slot_ld(bk, st);
            const bool masked = step_masked(bk, m0);
            scores_to_p(s, l, args, scale_log2, masked, bk.lo, bk.hi, bk.n0, bk.nq, bk.keys_in, m0, row0, q);
            dp_to_ds(dp, s, slot_rows{ l, l + BM, q }, scale_log2);
            mbar_arrive(empty_bar(bk, st));   // the slot is read: its products landed, its gathers done
            // Every warp past the last step's products before any overwrites the tiles they read.
            named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);
            store_gradients(base, s, dp, offs);
            fence_proxy_async();
            named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);
            // dV_t = dO^T P and dQ^T = K^T dS^T (below)
            wg_fence();
            issue_rs<BN, M_STEPS, SC_PLANE>(part, do_hi, do_lo, base + PT_OFF);
            wg_commit();
        } else {
            // Consumer 0: S^T, then P^T; consumer 1: dP^T, then (P^T stored) dS^T. Each gathers its
            // 64 columns of dO and Q (its rows of dO^T and Q^T) while its product runs.
            // One issue with its operands picked: wgmma in a branch that ptxas takes for divergent
            // is serialized (a wait after each).
            float acc[PLANES * S_REGS], small[S_REGS], x[S_REGS];
            wg_fence();
            issue_ss<BM, HEAD_DIM / 8, K_PLANE, BN>(acc, small, base + (c == 0 ? K_OFF : V_OFF),
                                                    slot + (c == 0 ? 0 : DO_OFF));
            wg_commit();
            const lane_offsets offs(q, row0);
            gather_transposed<B_LO>(do_hi, do_lo, slot + DO_OFF + c * HALF_COLS, offs);
            gather_transposed<B_LO>(q_hi, q_lo, slot + c * HALF_COLS, offs);
            wg_wait<0>();
            land_apart(x, acc, small);
            const float *l = slot_ld(bk, st);
            const bool masked = step_masked(bk, m0);
            const held_rows rows(slot_rows{ l, l + BM, q });   // consumer 1 uses them after the slot is given back
            if (c == 0)
                scores_to_p(x, l, args, scale_log2, masked, bk.lo, bk.hi, bk.n0, bk.nq, bk.keys_in, m0, row0, q);
            mbar_arrive(empty_bar(bk, st));
            named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);   // both past the last step's products
            if (c == 0) {
                store_kq<false>(base + PT_OFF, x, offs);
                store_kq<true>(base + DST_OFF, x, offs);
                fence_proxy_async();
            }
            named_barrier_sync(P_STORED_BARRIER, CONSUMER_THREADS);
            wg_fence();
            issue_rs<BN, M_STEPS, SC_PLANE>(part, do_hi, do_lo, base + PT_OFF);
            wg_commit();
            if (c == 1) {   // while dV_t runs
                float p[S_REGS];
                load_kq(base + DST_OFF, p, offs);
                dp_to_ds(x, p, rows, scale_log2);
                store_kq<false>(base + DST_OFF, x, offs);
                store_ds(base, x, offs);
                fence_proxy_async();
            }
            named_barrier_sync(DS_STORED_BARRIER, CONSUMER_THREADS);
            wg_fence();   // consumer 1's registers were written since the last fence
        }

        // dQ^T = K^T dS^T (this consumer's rows of K^T); dV_t added, dK_t = Q^T dS into the same
        // registers while dQ^T lands; dQ^T added to dq_accum while dK_t lands.
        float dq_acc[PLANES * S_REGS], dq_small[S_REGS];
        issue_ss<BM, BN / 8, KT_PLANE, HEAD_DIM>(dq_acc, dq_small, base + KT_OFF + c * (64 * 128), base + DS_OFF);
        wg_commit();
        wg_wait<1>();
        wg_pin(part);
        pin_a(do_hi, do_lo);
#pragma unroll
        for (int r = 0; r < KV_REGS; r++)
            dv[r] += part[r];
        wg_fence();
        issue_rs<BN, M_STEPS, SC_PLANE>(part, q_hi, q_lo, base + DST_OFF);
        wg_commit();
        wg_wait<1>();
        float dq[S_REGS];
        land_apart(dq, dq_acc, dq_small);
        add_dq(args, bk, dq, dq_accum, dq_group, gs.head, m0, base + DQ_OFF + (i & 1) * DQ_TILE, t, q, row0, c);
        wg_wait<0>();
        wg_pin(part);
        pin_a(q_hi, q_lo);
#pragma unroll
        for (int r = 0; r < KV_REGS; r++)
            dk[r] += part[r];
    }

    store_dkdv(args, bk, dk, dv, t, c);
}

// BF16_PARTS: a step of the two consumers (see the top of the file). Consumer 0 makes S^T and
// P^T, consumer 1 dP^T; they meet (the last step's products done with P^T and dS^T), consumer 0
// stores P^T's parts; they meet (P^T stored), each issues its dV^T while consumer 1 reads P^T back,
// makes dS^T and stores its parts; they meet (dS^T stored), each issues its dQ^T and dK^T. The
// slot is given back once dK^T, its last reader, has landed.
FT_DEVICE void parts_step(const ft_bwd_args &args, const dkdv_block &bk, int i, float (&dv)[KV_REGS],
                          float (&dk)[KV_REGS], float *dq_accum, float *dq_group, float scale_log2, int t, int c)
{
    const int st = i % NUM_STAGES, w = t / 32, lane = t % 32;
    const group_step gs = walk_group(i, bk.mt_begin, bk.per_head);
    const int m0 = gs.mt * BM;
    mbar_wait(ready_bar(bk, st), (i / NUM_STAGES) & 1);
    // Opaque each step, as in consume_tf32: else ptxas keeps every address derived from them.
    const unsigned base = __shfl_sync(0xffffffffu, opaque(bk.base), 0), slot = slot_at(base, st);
    const int q = (int)opaque(lane % 4), row0 = (int)opaque(16 * w + lane / 4);
    const kq_parts kq(q, row0);

    // S^T = K Q^T (consumer 0) or dP^T = V dO^T (consumer 1): one issue, its operands picked.
    float hh[S_REGS], stack[2 * S_REGS], lh[S_REGS], x[S_REGS];
    wg_fence();
    issue_parts_stacked<BM, HEAD_DIM / 16, kv_rows, qd_rows>(hh, stack, lh, wg_desc(base + (c == 0 ? K_OFF : V_OFF), 16, 1024),
                                                            wg_desc(slot + (c == 0 ? 0 : DO_OFF), 16, 1024));
    wg_commit();
    wg_wait<0>();
    land_stacked(x, hh, stack, lh);
    const float *l = slot_ld(bk, st);
    if (c == 0)
        scores_to_p(x, l, args, scale_log2, step_masked(bk, m0), bk.lo, bk.hi, bk.n0, bk.nq, bk.keys_in, m0, row0, q);
    named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);   // both past the last step's products
    if (c == 0) {
        store_kq_parts(base + PT_OFF, x, kq);
        fence_proxy_async();
    }
    named_barrier_sync(P_STORED_BARRIER, CONSUMER_THREADS);

    // dV_t = dO^T P (this consumer's 64 columns of dO, read M-major), while consumer 1 makes dS^T.
    float part[KV_REGS];
    const unsigned q_cols = slot + c * NPARTS * Q_PART;   // this consumer's panel of Q (of dO: + DO_OFF)
    wg_fence();
    issue_parts<BN, BM / 16, qd_cols, sc_rows>(part, wg_desc(q_cols + DO_OFF, NPARTS * Q_PART, 1024),
                                               wg_desc<64>(base + PT_OFF, 16, 512));
    wg_commit();
    if (c == 1) {
        float p[S_REGS];
        load_kq_parts(base + PT_OFF, p, kq);
        dp_to_ds(x, p, slot_rows{ l, l + BM, q }, scale_log2);
        store_kq_parts(base + DST_OFF, x, kq);
        fence_proxy_async();
    }
    named_barrier_sync(DS_STORED_BARRIER, CONSUMER_THREADS);
    wg_fence();   // consumer 1's registers were written since the last fence

    // dQ^T = K^T dS^T (this consumer's panel of K, read M-major; dS^T read N-major); dV_t added,
    // dK_t = Q^T dS into the same registers while dQ^T lands; dQ^T added while dK_t lands.
    float dq_hh[S_REGS], dq_st[2 * S_REGS], dq_lh[S_REGS];
    issue_parts_stacked<BM, BN / 16, k_cols, sc_cols>(dq_hh, dq_st, dq_lh,
                                                     wg_desc(base + K_OFF + c * NPARTS * KV_PART, NPARTS * KV_PART, 1024),
                                                     wg_desc<64>(base + DST_OFF, SC_PART, 512));
    wg_commit();
    wg_wait<1>();
    wg_pin(part);
#pragma unroll
    for (int r = 0; r < KV_REGS; r++)
        dv[r] += part[r];
    wg_fence();
    issue_parts<BN, BM / 16, qd_cols, sc_rows>(part, wg_desc(q_cols, NPARTS * Q_PART, 1024),
                                               wg_desc<64>(base + DST_OFF, 16, 512));
    wg_commit();
    wg_wait<1>();
    float dq[S_REGS];
    land_stacked(dq, dq_hh, dq_st, dq_lh);
    if constexpr (DIRECT) {   // dQ's own rows: scaled here (the TF32 forms scale K^T's planes)
        const float scale = (float)args.softmax_scale;
#pragma unroll
        for (int r = 0; r < S_REGS; r++)
            dq[r] *= scale;
    }
    add_dq(args, bk, dq, dq_accum, dq_group, gs.head, m0, base + DQ_OFF + (i & 1) * DQ_TILE, t, q, row0, c);
    wg_wait<0>();
    wg_pin(part);
#pragma unroll
    for (int r = 0; r < KV_REGS; r++)
        dk[r] += part[r];
    mbar_arrive(empty_bar(bk, st));   // the slot's last reader (dK_t) has landed
}

// BF16_PARTS' consumer warpgroup c of two (t: 0..127): K (consumer 0) or V (1) into parts, every
// step's products, its rows of dK and dV at the end.
FT_DEVICE void consume_parts(const ft_bwd_args &args, const dkdv_block &bk, int t, int c)
{
    const ft_seq &sq = bk.sq;
    tile_pieces<BN, HEAD_DIM> kv;
    if (c == 0) {
        const float *k = (const float *)args.k + seq_offset(args.k_stride, bk.b, bk.h, sq.k0) + bk.n0 * args.k_stride[2];
        load_pieces<BN, HEAD_DIM, QK_DATA, EVEN_N>(kv, k, args.k_stride[2], bk.keys_in, t);
    } else {
        const float *v = (const float *)args.v + seq_offset(args.v_stride, bk.b, bk.h, sq.k0) + bk.n0 * args.v_stride[2];
        load_pieces<BN, HEAD_DIM_V, V_DATA, EVEN_N>(kv, v, args.v_stride[2], bk.keys_in, t);
    }
    static_assert(!PARTS || HEAD_DIM == HEAD_DIM_V, "consume_parts: K's and V's tiles alike");
    store_parts<BN, HEAD_DIM>(kv, bk.base + (c == 0 ? K_OFF : V_OFF), t);
    fence_proxy_async();
    named_barrier_sync(CONSUMER_BARRIER, CONSUMER_THREADS);

    float dv[KV_REGS], dk[KV_REGS];
#pragma unroll
    for (int r = 0; r < KV_REGS; r++)
        dv[r] = dk[r] = 0.f;
    const float scale_log2 = softmax_log2_scale(args);
    float *dq_accum, *dq_group;
    dq_targets(args, bk, dq_accum, dq_group);
#pragma unroll 1
    for (int i = 0; i < bk.steps; i++)
        parts_step(args, bk, i, dv, dk, dq_accum, dq_group, scale_log2, t, c);
    store_dkdv(args, bk, dk, dv, t, c);
}

FT_DEVICE void consume(const ft_bwd_args &args, const dkdv_block &bk, int t, int c)
{
    if constexpr (PARTS)
        consume_parts(args, bk, t, c);
    else
        consume_tf32(args, bk, t, c);
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_bwd_dkdv(const __grid_constant__ ft_bwd_args args)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    int bh, key_tile, part;   // the block's K/V head row (batch * heads_k) and key tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &key_tile, &part);
    dkdv_block bk;
    bk.sq = seq_of(args, bh / args.heads_k);
    const ft_seq &sq = bk.sq;
    bk.nq = sq.seqlen_q;
    bk.n0 = key_tile * BN;
    if (VARLEN && bk.n0 >= sq.seqlen_k)   // past this sequence's keys (the grid is sized by the longest)
        return;
    bk.keys_in = sq.seqlen_k - bk.n0;
    const int group = kv_group(args);
    bk.b = bh / args.heads_k;
    bk.h = bh % args.heads_k;
    bk.bh0 = bh * group;
    bk.h0 = bk.h * group;
    bk.lo = VARLEN ? sq.lo : args.mask_lo;
    bk.hi = VARLEN ? sq.hi : args.mask_hi;
    int mt_end;
    query_tiles<BM, BN>(bk.lo, bk.hi, bk.n0, bk.nq, sq.seqlen_k, bk.mt_begin, mt_end);
    bk.per_head = mt_end - bk.mt_begin;
    bk.steps = bk.per_head * group;
    if (bk.steps == 0) {   // no query sees these keys: dK = dV = 0
        float *dkg = key_rows(args.dk, args.dk_stride, bk), *dvg = key_rows(args.dv, args.dv_stride, bk);
        for (int i = threadIdx.x; i < BN * HEAD_DIM; i += NUM_THREADS) {
            const int key = i / HEAD_DIM, d = i % HEAD_DIM;
            if ((EVEN_N || key < bk.keys_in) && (QK_DATA == HEAD_DIM || d < QK_DATA))
                dkg[key * args.dk_stride[2] + d] = 0.f;
        }
        for (int i = threadIdx.x; i < BN * HEAD_DIM_V; i += NUM_THREADS) {
            const int key = i / HEAD_DIM_V, d = i % HEAD_DIM_V;
            if ((EVEN_N || key < bk.keys_in) && (V_DATA == HEAD_DIM_V || d < V_DATA))
                dvg[key * args.dv_stride[2] + d] = 0.f;
        }
        return;
    }
    bk.l_rows = bwd_head_rows(args, sq);
    bk.q = (const float *)args.q + seq_offset(args.q_stride, bk.b, bk.h0, sq.q0);
    bk.dout = (const float *)args.dout + seq_offset(args.do_stride, bk.b, bk.h0, sq.q0);
    bk.lse = (const float *)args.lse + seq_row(args, sq, bk.b, bk.h0, bk.bh0);
    bk.delta = (const float *)args.delta + seq_row(args, sq, bk.b, bk.h0, bk.bh0);
    const unsigned raw = smem_addr(smem_raw);
    bk.base = (raw + 1023) & ~1023u;
    bk.sm = smem_raw + (bk.base - raw);

    if (threadIdx.x == 0) {
        for (int st = 0; st < NUM_STAGES; st++) {
            mbar_init(ready_bar(bk, st), 128);
            mbar_init(empty_bar(bk, st), CONSUMER_THREADS);
        }
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        if constexpr (CONSUMERS > 1)
            setmaxnreg_dec<bwd_wgmma_f32_producer_regs()>();
        produce(args, bk, threadIdx.x);
    } else {
        if constexpr (CONSUMERS > 1)
            setmaxnreg_inc<bwd_wgmma_f32_consumer_regs()>();
        const int c = CONSUMERS > 1 ? __shfl_sync(0xffffffffu, (threadIdx.x - 128) / 128, 0) : 0;
        consume(args, bk, threadIdx.x - 128 - 128 * c, c);
    }
}

// ---- ft_bwd_dq_convert: dq = scale * dq_accum (common/ft_bwd_steps.cuh) ---------------------
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_dq_convert(const ft_bwd_args args)
{
    bwd_dq_convert_rows<NUM_THREADS, BLOCK_M, HEAD_DIM, QK_DATA, EVEN_M>(args);
}
