// families/bwd_wgmma.cu: FlashAttention backward on Hopper's warpgroup tensor cores (f16/bf16,
// wgmma.mma_async, sm_90a only). Entries: ft_bwd_preprocess (delta = rowsum(dO*O)), ft_bwd_dkdv
// (one block per key tile: dK, dV, and dQ added into dq_accum) and ft_bwd_dq_convert
// (dq = softmax_scale * dq_accum).
//
// Design (ft_bwd_dkdv). K and V of the key tile stay in shared memory as 128-byte-swizzled
// panels (arch/sm90.cuh); Q, dO, L and delta of each 64-row query tile stream through a
// NUM_STAGES-deep ring: Q and dO by the copy engine (TMA, one thread issuing, the tensor maps
// the launcher encodes in ft_bwd_args, landing swizzled, completing on the slot's mbarrier),
// L and delta by cp.async. Warpgroup w owns keys 64w..64w+63 of the tile and, per query tile:
//   S^T = K_w Q^T, dP^T = V_w dO^T      SS-wgmma, M = 64 keys, N = 64 queries, both issued
//                                       before either is waited on
//   P^T = exp(S^T scale - L)            in registers (L in natural log, folded into exp2)
//   dS^T = P^T (dP^T - delta)
//   dV_w += P^T dO, dK_w += dS^T Q      RS-wgmma: a 64xN accumulator is, packed to 16-bit
//                                       pairs, the A registers of the next product
//   dS^T to shared memory, then dQ[:, cols w] = dS K[:, cols w]: SS-wgmma reading dS^T as an
//                                       M-major (transposed) A and K as an N-major B (dS K
//                                       unscaled)
//   dQ into dq_accum                    the accumulators go to a shared-memory tile in the
//                                       order the threads hold them (16 bytes a thread, so no
//                                       bank conflicts), and at the next tile's barrier one
//                                       thread hands the whole tile to the copy engine's bulk
//                                       fp32 reduce-add, which has read it by the dS barrier.
//                                       dq_accum's full query tiles are thus in thread order
//                                       (ft_bwd_dq_convert undoes it); a last partial tile is
//                                       added row-major with per-thread atomics, its rows past
//                                       seqlen_q not existing.
// dK is scaled by softmax_scale at the end. Queries past seqlen_q load as zeros with L = +inf,
// so P = 0 there; keys past seqlen_k and outside the band get P = 0 by the per-element mask.
// DQ_MODE ordered (bitwise repeatable): each query tile's reduce waits its turn, key tiles from
// the highest down (await_turn, pass_turn below).

// ---- traits (traits/bwd_wgmma.h): tunables come from the generator's #defines ---------------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr bool ORDERED = DQ_MODE == FT_DQ_ORDERED;   // dQ added in a fixed order (bitwise repeatable)
constexpr int NUM_WG = NUM_WARPS / 4;           // warpgroups, each owning 64 keys of the tile
// dQ columns of warpgroup 0 (from column 0) and of the last (from column 64 when there are two).
// Both compute DQ_N: at head dim 96 the second's last 32 columns read K's unused panel half
// and are dropped (the product takes as long as the first warpgroup's, which it waits for anyway).
constexpr int DQ_COLS0 = bwd_wgmma_dq_cols(HEAD_DIM, NUM_WG, 0), DQ_COLS1 = bwd_wgmma_dq_cols(HEAD_DIM, NUM_WG, NUM_WG - 1);
constexpr int DQ_N = DQ_COLS0;
constexpr int S_REGS = BLOCK_M / 2;             // fp32 S^T (and dP^T) accumulators per thread
constexpr int DK_REGS = HEAD_DIM / 2;
constexpr int DV_REGS = HEAD_DIM_V / 2;
constexpr int M_STEPS = BLOCK_M / 16;           // k-steps over the queries (dV, dK)
constexpr int N_STEPS = BLOCK_N / 16;           // k-steps over the keys (dQ)
// Shared memory: 1024 bytes of alignment slack, K and V, NUM_STAGES x (Q, dO, then L, delta and
// the slot's mbarrier in 1024 bytes), dS^T (BLOCK_N rows of BLOCK_M queries: one 128-byte panel),
// the fp32 dQ tile.
// Tiles take whole 64-column panels: at head dim 96 the second panel's last 32 columns hold
// zeros (Q, dO: the copy engine fills what lies past the tensor) or nothing (K, V), and no
// product reads them: the k-steps stop at the head dim, and N = 96 products end there.
constexpr int D_PANELS = bwd_wgmma_panel_cols(HEAD_DIM) / 64, DV_PANELS = bwd_wgmma_panel_cols(HEAD_DIM_V) / 64;
constexpr int Q_BYTES = BLOCK_M * D_PANELS * 128;
constexpr int DO_BYTES = BLOCK_M * DV_PANELS * 128;
constexpr int K_BYTES = BLOCK_N * D_PANELS * 128;
constexpr int V_BYTES = BLOCK_N * DV_PANELS * 128;
constexpr int LD_BYTES = 1024;
constexpr int STAGE_BYTES = Q_BYTES + DO_BYTES + LD_BYTES;
constexpr int DS_BYTES = BLOCK_N * BLOCK_M * 2;
constexpr int DQ_TILE_BYTES = BLOCK_M * HEAD_DIM * 4;
constexpr int SMEM_END = 1024 + K_BYTES + V_BYTES + NUM_STAGES * STAGE_BYTES + DS_BYTES + DQ_TILE_BYTES;

constexpr int RULE = bwd_wgmma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V, DQ_MODE);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16, "DTYPE: bwd_wgmma takes f16 or bf16");
static_assert(RULE != BWD_WGMMA_BAD_WARPS, "NUM_WARPS must be 4 or 8 (one or two warpgroups)");
static_assert(RULE != BWD_WGMMA_BAD_BLOCK_M, "BLOCK_M must be 64");
static_assert(RULE != BWD_WGMMA_BAD_BLOCK_N, "BLOCK_N must be 16*NUM_WARPS (64 keys a warpgroup)");
static_assert(RULE != BWD_WGMMA_BAD_HEAD_DIM,
              "HEAD_DIM and HEAD_DIM_V must be 64, 96 or 128, and two warpgroups need HEAD_DIM 96 or 128");
static_assert(RULE != BWD_WGMMA_BAD_STAGES, "NUM_STAGES must be 1..3");
static_assert(RULE != BWD_WGMMA_BAD_DQ_MODE, "DQ_MODE must be atomic or ordered");
static_assert(RULE != BWD_WGMMA_BAD_SMEM, "shared memory over the limit: lower NUM_STAGES");
static_assert(RULE != BWD_WGMMA_BAD_REGISTERS, "head dims: accumulators would spill");
static_assert(BLOCK_M * 8 + 16 <= LD_BYTES, "L, delta, the slot's mbarrier and slot 0's ticket fit 1024 bytes");
static_assert(DQ_TILE_BYTES == 128 * 4 * (DQ_COLS0 + (NUM_WG == 2 ? DQ_COLS1 : 0)) / 2,
              "a dQ tile is every thread's accumulators");

static_assert(SMEM_END == FT_SMEM_BYTES_ft_bwd_dkdv, "shared memory: ft_bwd_dkdv's layout differs from traits/bwd_wgmma.h");

// ---- ft_bwd_preprocess: delta = rowsum(dO * O) (common/ft_bwd_steps.cuh) -------------------
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_preprocess(const ft_bwd_args args)
{
    bwd_preprocess_rows<NUM_THREADS, BLOCK_M, HEAD_DIM_V, EVEN_M>(args);
}

// ---- ft_bwd_dkdv -----------------------------------------------------------------------------
// Writes a 64-key slab's accumulators (rows `row`, `row` + 8 of the thread; COLS columns) as
// 16-bit pairs times `scale` to global rows past which `valid` keys stop.
template <int COLS>
FT_DEVICE void store_slab(elem_t *dst, long long ld, const float (&c)[COLS / 2], int row, int quad, int valid,
                          float scale)
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = row + 8 * half;
        if (!EVEN_N && r >= valid)
            continue;
#pragma unroll
        for (int j = 0; j < COLS / 8; j++)
            *(unsigned *)(dst + r * ld + 8 * j + 2 * quad) =
                pack2(c[4 * j + 2 * half] * scale, c[4 * j + 2 * half + 1] * scale);
    }
}

// args is __grid_constant__: the copy engine reads the tensor maps in it where they lie.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_bwd_dkdv(const __grid_constant__ ft_bwd_args args)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned k_smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const unsigned v_smem = k_smem + K_BYTES;
    const unsigned ring = v_smem + V_BYTES;
    const unsigned ds_smem = ring + NUM_STAGES * STAGE_BYTES;
    const unsigned dq_smem = ds_smem + DS_BYTES;   // the fp32 dQ tile
    unsigned char *base = smem_raw + (k_smem - smem_addr(smem_raw));   // generic view of k_smem

    // Ring slot st's mbarrier: in its L/delta block, past the 2 * BLOCK_M floats; slot 0's
    // block also holds the ticket (DQ_MODE ordered) past its mbarrier.
    auto slot_bar = [&](int st) { return ring + st * STAGE_BYTES + Q_BYTES + DO_BYTES + BLOCK_M * 8; };
    int *const ticket_smem = (int *)(base + (slot_bar(0) + 8 - k_smem));
    if (threadIdx.x == 0) {
        for (int st = 0; st < NUM_STAGES; st++)
            mbar_init(slot_bar(st), 1);
        mbar_init_fence();
        if (ORDERED)
            *ticket_smem = atomicAdd(args.dq_ticket, 1);
    }
    __syncthreads();   // the barriers exist before anyone waits on them; the ticket is known

    // The key tile and head: the block's own; or, DQ_MODE ordered, taken in the order the blocks
    // started (the ticket), key tiles descending within a head. A block then only ever waits
    // for the next key tile up (see await_turn), which started before it: no block can wait on
    // one that is not running.
    const int ticket = ORDERED ? *ticket_smem : 0;
    const int key_tile = ORDERED ? (int)gridDim.x - 1 - ticket % (int)gridDim.x : (int)blockIdx.x;
    const int bh = ORDERED ? ticket / (int)gridDim.x : (int)blockIdx.y;
    const int wg = threadIdx.x / 128;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
    const int wrow = 16 * (warp % 4) + g;   // the thread's first accumulator row (of 64)
    const int krow = 64 * wg + wrow;        // ... as a key of the tile
    const int nq = args.seqlen_q, nk = args.seqlen_k;
    const int n0 = key_tile * BLOCK_N;
    const int keys_in = nk - n0;            // keys of this tile in range (may exceed BLOCK_N)
    const int b = bh / args.heads, h = bh % args.heads;

    const elem_t *k = (const elem_t *)args.k + head_offset(args.k_stride, b, h) + n0 * args.k_stride[2];
    const elem_t *v = (const elem_t *)args.v + head_offset(args.v_stride, b, h) + n0 * args.v_stride[2];
    const float *lse = (const float *)args.lse + (long long)bh * nq;
    const float *delta = (const float *)args.delta + (long long)bh * nq;
    float *dq_accum = (float *)args.dq_accum + (long long)bh * nq * HEAD_DIM;

    // Query tiles [mt_begin, m_tiles) that see this key tile; with block skipping maybe none,
    // and then dK = dV = 0 come out of the untouched accumulators.
    const int lo = args.mask_lo, hi = args.mask_hi;
    int mt_begin, m_tiles;
    query_tiles<BLOCK_M, BLOCK_N>(lo, hi, n0, nq, nk, mt_begin, m_tiles);

    // DQ_MODE ordered: the key tiles that see a query tile are consecutive (the mask is a band),
    // and they add its dQ from the highest down. Its semaphore holds 1 + the key tile that added
    // last (0: none yet); this block's turn comes when it holds 1 + the next key tile up if that
    // one sees the query tile, else 0 (this is the highest). Thread 0 waits and passes the turn.
    int up_begin = 0, up_end = 0;   // the query tiles the next key tile up sees
    if (ORDERED && key_tile + 1 < (int)gridDim.x)
        query_tiles<BLOCK_M, BLOCK_N>(lo, hi, n0 + BLOCK_N, nq, nk, up_begin, up_end);
    int *const sems = ORDERED ? args.dq_sems + (long long)bh * ((nq + FT_DQ_SEM_ROWS - 1) / FT_DQ_SEM_ROWS) : nullptr;
    auto await_turn = [&](int mt) {
        sem_wait_value(sems + mt, up_begin <= mt && mt < up_end ? key_tile + 2 : 0);
        fence_proxy_async_global();   // the adds before ours, then our bulk reduce
    };
    auto pass_turn = [&](int mt) {    // after our adds to tile mt are complete
        fence_proxy_async_global();
        sem_release_value(sems + mt, key_tile + 1);
    };

    // Query tile mt into ring slot st: Q and dO by the copy engine (one thread; a 64-column
    // panel a box, completing on the slot's mbarrier; rows past seqlen_q arrive as zeros), and
    // L, delta by cp.async. Rows past seqlen_q get L = +inf (so P = 0) and delta = 0.
    auto issue_q_tile = [&](int mt, int st) {
        const int m0 = mt * BLOCK_M;
        const unsigned stage = ring + st * STAGE_BYTES;
        const int t = threadIdx.x;
        if (t == 0) {
            const unsigned bar = slot_bar(st);
            mbar_arrive_expect(bar, Q_BYTES + DO_BYTES);
#pragma unroll
            for (int p = 0; p < D_PANELS; p++)
                tma_load_4d(stage + p * (BLOCK_M * 128), &args.q_map, bar, 64 * p, m0, h, b);
#pragma unroll
            for (int p = 0; p < DV_PANELS; p++)
                tma_load_4d(stage + Q_BYTES + p * (BLOCK_M * 128), &args.do_map, bar, 64 * p, m0, h, b);
        }
        // L and delta by the last BLOCK_M threads: not thread 0, whose semaphore release
        // (DQ_MODE ordered) would otherwise wait for these loads too.
        float *ld = (float *)(base + (stage - k_smem) + Q_BYTES + DO_BYTES);
        const int r = t - (NUM_THREADS - BLOCK_M);
        if (r >= 0) {
            if (EVEN_M || m0 + r < nq) {
                cp_async_4(smem_addr(ld + r), lse + m0 + r, 4);
                cp_async_4(smem_addr(ld + BLOCK_M + r), delta + m0 + r, 4);
            } else {
                ld[r] = FT_INF_F;
                ld[BLOCK_M + r] = 0.f;
            }
        }
    };

    // Pipeline: group 0 = K, V and the first query tile; then one group per further tile, one
    // commit per iteration even when nothing is left to load, so wait<NUM_STAGES-2> always
    // means "the current tile has landed".
    load_panels<BLOCK_N, HEAD_DIM, EVEN_N, NUM_THREADS>(k_smem, k, args.k_stride[2], keys_in);
    load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N, NUM_THREADS>(v_smem, v, args.v_stride[2], keys_in);
    if (mt_begin < m_tiles)
        issue_q_tile(mt_begin, 0);
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < NUM_STAGES - 1; s++) {
        if (mt_begin + s < m_tiles)
            issue_q_tile(mt_begin + s, s);
        cp_async_commit();
    }

    const float scale_log2 = (float)(args.softmax_scale * FT_LOG2E);
    // This warpgroup's 64 keys: within each panel of K and V they start at row 64*wg.
    const unsigned k_wg = k_smem + wg * 64 * 128, v_wg = v_smem + wg * 64 * 128;
    float dk[DK_REGS], dv[DV_REGS];
#pragma unroll
    for (int i = 0; i < DK_REGS; i++)
        dk[i] = 0.f;
#pragma unroll
    for (int i = 0; i < DV_REGS; i++)
        dv[i] = 0.f;

    int st = 0;          // ring slot of the current tile
    int dq_rows = -1;    // the first query row of a dQ tile written and not yet handed on
    int passing = -1;    // DQ_MODE ordered: the query tile whose reduce is in flight (thread 0)
    for (int mt = mt_begin; mt < m_tiles; mt++) {
        cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
        mbar_wait(slot_bar(st), ((mt - mt_begin) / NUM_STAGES) & 1);   // Q, dO of tile mt landed
        fence_proxy_async();   // cp.async and the dQ stores wrote through the generic proxy;
                               // wgmma and the bulk reduce read through the async one
        __syncthreads();       // tile mt visible to all; every warp is done with tile mt-1
        if (threadIdx.x == 0 && dq_rows >= 0) {
            if (ORDERED)
                await_turn(dq_rows / BLOCK_M);
            bulk_reduce_add_f32(dq_accum + (long long)dq_rows * HEAD_DIM, dq_smem, DQ_TILE_BYTES);
            bulk_commit();
            passing = dq_rows / BLOCK_M;
        }
        dq_rows = -1;
        if (NUM_STAGES > 1) {
            if (mt + NUM_STAGES - 1 < m_tiles)
                issue_q_tile(mt + NUM_STAGES - 1, st == 0 ? NUM_STAGES - 1 : st - 1);
            cp_async_commit();
        }
        const int m0 = mt * BLOCK_M;
        const unsigned q_tile = ring + st * STAGE_BYTES, do_tile = q_tile + Q_BYTES;
        const float *l_smem = (const float *)(base + (q_tile - k_smem) + Q_BYTES + DO_BYTES);
        const float *d_smem = l_smem + BLOCK_M;

        // S^T = K_w Q^T and dP^T = V_w dO^T: 16 head-dim columns a step, 4 steps a 64-column
        // panel (32 bytes of its rows each); Q and dO are the K-major B operands.
        float s[S_REGS], dp[S_REGS];
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; kk++) {
            const unsigned col = (kk % 4) * 32;
            wg_ss<BLOCK_M, 0>::run(s, wg_desc(k_wg + (kk / 4) * (BLOCK_N * 128) + col, 16, 1024),
                                   wg_desc(q_tile + (kk / 4) * (BLOCK_M * 128) + col, 16, 1024), kk > 0);
        }
        wg_commit();
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM_V / 16; kk++) {
            const unsigned col = (kk % 4) * 32;
            wg_ss<BLOCK_M, 0>::run(dp, wg_desc(v_wg + (kk / 4) * (BLOCK_N * 128) + col, 16, 1024),
                                   wg_desc(do_tile + (kk / 4) * (BLOCK_M * 128) + col, 16, 1024), kk > 0);
        }
        wg_commit();
        wg_wait<1>();   // S^T has landed; dP^T may still be in flight
        wg_pin(s);

        // P^T = exp2(S^T * scale*log2e - L*log2e). Element s[4j+e]: key krow + 8*(e/2) of the
        // tile, query m0 + 8j + 2qd + e%2. Masked: outside the band, or key past seqlen_k.
#pragma unroll
        for (int j = 0; j < BLOCK_M / 8; j++) {
            const float2 l2 = *(const float2 *)(l_smem + 8 * j + 2 * qd);
            const float nl0 = -l2.x * (float)FT_LOG2E, nl1 = -l2.y * (float)FT_LOG2E;
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[4 * j + e] = fast_exp2(fmaf(s[4 * j + e], scale_log2, (e & 1) ? nl1 : nl0));
        }
        const bool diag = tile_needs_mask(lo, hi, m0, m0 + BLOCK_M, n0, n0 + BLOCK_N);
        const bool key_edge = !EVEN_N && keys_in < BLOCK_N;
        if (diag || key_edge) {
#pragma unroll
            for (int j = 0; j < BLOCK_M / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = krow + 8 * (e >> 1);
                    const int query = m0 + 8 * j + 2 * qd + (e & 1);
                    if ((CAUSAL && !ft_mask_visible(lo, hi, query, n0 + key)) || (!EVEN_N && key >= keys_in))
                        s[4 * j + e] = 0.f;
                }
        }
        unsigned pa[M_STEPS][4];
        wg_acc_to_a(pa, s);

        // dS^T = P^T * (dP^T - delta[query]), in place of dP^T.
        wg_wait<0>();
        wg_pin(dp);
#pragma unroll
        for (int j = 0; j < BLOCK_M / 8; j++) {
            const float2 d2 = *(const float2 *)(d_smem + 8 * j + 2 * qd);
#pragma unroll
            for (int e = 0; e < 4; e++)
                dp[4 * j + e] = s[4 * j + e] * (dp[4 * j + e] - ((e & 1) ? d2.y : d2.x));
        }
        unsigned dsa[M_STEPS][4];
        wg_acc_to_a(dsa, dp);

        // dV += P^T dO and dK += dS^T Q: dO and Q read N-major (transposed), 16 query rows
        // (2048 bytes) a step, their 64-column panels BLOCK_M*128 bytes apart.
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < M_STEPS; kk++)
            wg_rs<HEAD_DIM_V, 1>::run(dv, pa[kk], wg_desc(do_tile + kk * 2048, BLOCK_M * 128, 1024), 1);
#pragma unroll
        for (int kk = 0; kk < M_STEPS; kk++)
            wg_rs<HEAD_DIM, 1>::run(dk, dsa[kk], wg_desc(q_tile + kk * 2048, BLOCK_M * 128, 1024), 1);
        wg_commit();

        // Meanwhile dS^T to shared memory as 16-bit pairs: row = key of the tile, one panel of
        // BLOCK_M queries.
#pragma unroll
        for (int j = 0; j < BLOCK_M / 8; j++)
#pragma unroll
            for (int half = 0; half < 2; half++)
                *(unsigned *)(base + (ds_smem - k_smem) + panel_offset<BLOCK_N>(krow + 8 * half, j) + 4 * qd) =
                    pack2(dp[4 * j + 2 * half], dp[4 * j + 2 * half + 1]);
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
            } else if (passing >= 0) {
                bulk_wait<0>();        // ordered: done adding, too, so the next key tile down may
                pass_turn(passing);
                passing = -1;
            }
        }
        __syncthreads();       // every warpgroup's dS^T is in place; slot st is no longer read
        if (NUM_STAGES == 1) {
            if (mt + 1 < m_tiles)
                issue_q_tile(mt + 1, 0);   // overlaps the dQ step
            cp_async_commit();
        }

        // dQ (unscaled) = dS K for this warpgroup's columns from col0: dS^T read M-major (16 keys,
        // 2048 bytes, a step), K read N-major from the panel of col0.
        const bool full_tile = EVEN_M || m0 + BLOCK_M <= nq;
        if (ORDERED && !full_tile) {   // the last, partial tile's atomics wait their turn
            if (threadIdx.x == 0)
                await_turn(mt);
            __syncthreads();
        }
        const int col0 = 64 * wg, cols = wg == 0 ? DQ_COLS0 : DQ_COLS1;   // this warpgroup's
        float dq[DQ_N / 2];
        const unsigned k_dq = k_smem + wg * (BLOCK_N * 128);
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < N_STEPS; kk++)
            wg_ss<DQ_N, 1, 1>::run(dq, wg_desc(ds_smem + kk * 2048, BLOCK_N * 128, 1024),
                                   wg_desc(k_dq + kk * 2048, BLOCK_N * 128, 1024), kk > 0);
        wg_commit();
        wg_wait<0>();
        wg_pin(dq);
        wg_pin(dv);
        wg_pin(dk);
        if (full_tile) {
            // To the dQ tile in thread order, for the bulk reduce at the next barrier: the
            // warpgroup's region (warpgroup 1's after warpgroup 0's 128 * DQ_COLS0 / 8 chunks),
            // 16-byte chunk c * 128 + its thread.
            float4 *tile = (float4 *)(base + (dq_smem - k_smem)) + 128 * (col0 / 8);
#pragma unroll
            for (int c = 0; c < DQ_N / 8; c++)
                if (c < cols / 8)
                    tile[c * 128 + threadIdx.x % 128] =
                        make_float4(dq[4 * c], dq[4 * c + 1], dq[4 * c + 2], dq[4 * c + 3]);
        } else {
            // The last, partial tile: row-major atomics. Element dq[4j+e]: query
            // m0 + wrow + 8*(e/2), column col0 + 8j + 2qd + e%2.
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int row = m0 + wrow + 8 * half;
                if (row >= nq)
                    continue;
                float *p = dq_accum + (long long)row * HEAD_DIM + col0 + 2 * qd;
#pragma unroll
                for (int j = 0; j < DQ_N / 8; j++)
                    if (j < cols / 8)
                        red_add_f32x2(p + 8 * j, dq[4 * j + 2 * half], dq[4 * j + 2 * half + 1]);
            }
        }
        if (full_tile) {
            dq_rows = m0;
        } else if (ORDERED) {
            __threadfence();   // every thread's adds, before thread 0 passes the turn
            __syncthreads();
            if (threadIdx.x == 0)
                sem_release_value(sems + mt, key_tile + 1);
        }
        st = (st + 1 == NUM_STAGES) ? 0 : st + 1;
    }
    cp_async_wait<0>();
    // The last full dQ tile, then every reduce complete before the block's shared memory goes.
    if (dq_rows >= 0) {
        fence_proxy_async();
        __syncthreads();
        if (threadIdx.x == 0) {
            if (ORDERED)
                await_turn(dq_rows / BLOCK_M);
            bulk_reduce_add_f32(dq_accum + (long long)dq_rows * HEAD_DIM, dq_smem, DQ_TILE_BYTES);
            bulk_commit();
        }
    }
    if (threadIdx.x == 0) {
        bulk_wait<0>();
        if (ORDERED && dq_rows >= 0)
            pass_turn(dq_rows / BLOCK_M);
    }

    // Epilogue: dK * scale and dV, 16-bit pairs straight from the accumulators.
    elem_t *dk_out = (elem_t *)args.dk + head_offset(args.dk_stride, b, h) + n0 * args.dk_stride[2];
    elem_t *dv_out = (elem_t *)args.dv + head_offset(args.dv_stride, b, h) + n0 * args.dv_stride[2];
    store_slab<HEAD_DIM>(dk_out, args.dk_stride[2], dk, krow, qd, keys_in, (float)args.softmax_scale);
    store_slab<HEAD_DIM_V>(dv_out, args.dv_stride[2], dv, krow, qd, keys_in, 1.f);
}

// ---- ft_bwd_dq_convert: dq = scale * dq_accum ------------------------------------------------
// A full query tile of dq_accum holds ft_bwd_dkdv's accumulators in thread order (as its dQ
// store writes them): warpgroup 0's region, then warpgroup 1's (its DQ_COLS1 columns from 64);
// in a region, 16-byte chunk c*128 + t is registers 4c..4c+3 of the warpgroup's thread t. A last
// partial tile is row-major (common/ft_bwd_steps.cuh converts it).
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
ft_bwd_dq_convert(const ft_bwd_args args)
{
    const int m0 = blockIdx.x * BLOCK_M;
    if (!EVEN_M && m0 + BLOCK_M > args.seqlen_q) {
        bwd_dq_convert_rows<NUM_THREADS, BLOCK_M, HEAD_DIM, EVEN_M>(args);
        return;
    }
    const int bh = blockIdx.y, b = bh / args.heads, h = bh % args.heads;
    const float scale = (float)args.softmax_scale;
    const float *rows = (const float *)args.dq_accum + ((long long)bh * args.seqlen_q + m0) * HEAD_DIM;
    const float4 *src = (const float4 *)rows;
    elem_t *dq = (elem_t *)args.dq + head_offset(args.dq_stride, b, h) + m0 * args.dq_stride[2];
    const long long ld = args.dq_stride[2];
    // Chunk c of thread t holds rows r and r + 8, columns col0 + 8c + 2(t%4) and the next: the
    // four threads t0..t0+3 of a lane quad together hold 8 whole columns of both rows. So each
    // converting thread takes one (quad, c): 64 contiguous bytes in, two 16-byte rows out;
    // consecutive threads take consecutive c, so a warp writes whole 128-byte row segments.
    constexpr int C0 = DQ_COLS0 / 8, C1 = DQ_COLS1 / 8;   // chunks per dkdv thread of each warpgroup
    constexpr int UNITS0 = 32 * C0;                       // (quad, chunk) units of warpgroup 0
    for (int i = threadIdx.x; i < DQ_TILE_BYTES / 64; i += NUM_THREADS) {
        const bool second = NUM_WG == 2 && i >= UNITS0;
        const int u = second ? i - UNITS0 : i, chunks = second ? C1 : C0;
        const int c = u % chunks, t0 = 4 * (u / chunks);
        const int r = 16 * ((t0 / 32) % 4) + (t0 % 32) / 4, col = (second ? 64 : 0) + 8 * c;
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
