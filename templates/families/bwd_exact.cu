// families/bwd_exact.cu: backward attention in exact f32/f64 arithmetic on CUDA cores (no tensor cores,
// no TF32, precise expf/exp). Entries, launched in this order (templates/README.md):
//   ft_bwd_preprocess  (query-major) delta = rowsum(dO * O), one warp per row;
//   ft_bwd_dkdv        (key-major)   dK, dV for BLOCK_N keys of a K/V head over all query tiles
//                                    of the query heads that read it; with DQ_MODE 0 also adds
//                                    dS K into dq_accum with atomics;
//   ft_bwd_dq          (query-major) DQ_MODE 1 only: dQ for BLOCK_M queries over all key tiles,
//                                    deterministic;
//   ft_bwd_dq_convert  (query-major) DQ_MODE 0 only: dq = softmax_scale * dq_accum.
// The entry a DQ_MODE does not launch compiles to an empty kernel, so every symbol exists.
// Variable-length batches (VARLEN): each block takes its sequence's lengths, first rows and band
// from seq_of and returns at once when its tile starts past the sequence's end; rows past the
// end load as zeros and get P = 0 (never the next sequence's rows, L or delta), and nothing is
// stored past it. A key tile of a sequence without queries writes dK = dV = 0.
// Threads NUM_WARPS*32; dynamic shared memory kDkdvSmemBytes (ft_bwd_dkdv) and kDqSmemBytes
// (ft_bwd_dq), checked against traits/exact.h, which the generator launches with; the other two
// entries use none.
//
// Work split as in fwd_exact.cu: row groups of kTN consecutive lanes; a group owns interleaved
// rows, a lane owns the score columns c, c + kTN, ... and output columns in 16-byte chunks
// c, c + kTN, ... (a lane's last chunk may lie past the row and is then skipped). Accumulators
// live in registers; P and dS go through shared memory.
//   ft_bwd_dkdv: rows = keys (kRK a thread), score columns = queries; S^T = K Q^T and
//     dP^T = V dO^T, then dV += P^T dO and dK += dS^T Q. DQ_MODE 0 adds a third split (kTN3)
//     over queries x HEAD_DIM for dQ += dS K, reading dS^T from shared memory.
//   ft_bwd_dq: rows = queries, score columns = keys; S = Q K^T, dP = dO V^T, dQ += dS K.
// Shared memory (elements of DTYPE, rows padded by 16 bytes):
//   ft_bwd_dkdv: K [BLOCK_N][HEAD_DIM+kVec], V [BLOCK_N][HEAD_DIM_V+kVec], P^T and dS^T
//     [BLOCK_N][BLOCK_M+kVec], then per stage Q [BLOCK_M][HEAD_DIM+kVec], dO
//     [BLOCK_M][HEAD_DIM_V+kVec], and L, delta [BLOCK_M].
//   ft_bwd_dq: Q [BLOCK_M][HEAD_DIM+kVec], dO [BLOCK_M][HEAD_DIM_V+kVec], dS [BLOCK_M][BLOCK_N+kVec],
//     then per stage K [BLOCK_N][HEAD_DIM+kVec], V [BLOCK_N][HEAD_DIM_V+kVec].


// ---- traits -----------------------------------------------------------------------------

constexpr int kQkLd = HEAD_DIM + kVec;     // shared row stride of Q and K tiles (elements)
constexpr int kVLd = HEAD_DIM_V + kVec;    // of V and dO tiles
constexpr int kWaitGroups = NUM_STAGES >= 2 ? NUM_STAGES - 2 : 0;   // cp.async groups left in flight

// ft_bwd_dkdv
constexpr int kPtLd = BLOCK_M + kVec;      // row stride of P^T and dS^T (one row per key)
constexpr int kDkdvSmemElems = BLOCK_N * (kQkLd + kVLd + 2 * kPtLd) + NUM_STAGES * BLOCK_M * (kQkLd + kVLd + 2);
constexpr int kDkdvSmemBytes = kDkdvSmemElems * (int)sizeof(elem_t);
constexpr int kTN1 = bwd_exact_tn1(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V);
constexpr int kG1 = kTN1 ? kThreads / kTN1 : 1;            // row groups
constexpr int kRK = BLOCK_N / kG1;                         // keys per thread
constexpr int kRQ = kTN1 ? BLOCK_M / kTN1 : 1;             // query columns per thread
constexpr int kKAll = HEAD_DIM / kVec;                     // 16-byte chunks in a Q/K row
constexpr int kVAll = HEAD_DIM_V / kVec;                   // in a V/dO row
constexpr int kKCh = kTN1 ? exact_chunks_per_lane(HEAD_DIM, kTN1, kVec) : 1;     // dK chunks per thread
constexpr int kVCh = kTN1 ? exact_chunks_per_lane(HEAD_DIM_V, kTN1, kVec) : 1;   // dV chunks per thread
constexpr bool kKRagged = kTN1 && kKAll % kTN1 != 0;       // some lanes own a chunk past the row
constexpr bool kVRagged = kTN1 && kVAll % kTN1 != 0;
#if DQ_MODE == 0
// dQ += dS K inside ft_bwd_dkdv: rows = queries, columns = HEAD_DIM, inner = keys.
constexpr int kTN3 = bwd_exact_tn_dq(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, 0);
constexpr int kG3 = kTN3 ? kThreads / kTN3 : 1;
constexpr int kR3 = BLOCK_M / kG3;                         // queries per thread
constexpr int kCh3 = kTN3 ? exact_chunks_per_lane(HEAD_DIM, kTN3, kVec) : 1;   // 16-byte dQ chunks per thread
constexpr bool kRagged3 = kTN3 && kKAll % kTN3 != 0;
static_assert(kTN3 > 0, "BLOCK_M, BLOCK_N, NUM_WARPS: no dQ thread split for DQ_MODE 0 (see check_bwd)");
#else
// ft_bwd_dq
constexpr int kDsLd = BLOCK_N + kVec;      // row stride of dS (one row per query)
constexpr int kDqSmemElems = BLOCK_M * (kQkLd + kVLd + kDsLd) + NUM_STAGES * BLOCK_N * (kQkLd + kVLd);
constexpr int kDqSmemBytes = kDqSmemElems * (int)sizeof(elem_t);
constexpr int kTNq = bwd_exact_tn_dq(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, 1);
constexpr int kGq = kTNq ? kThreads / kTNq : 1;
constexpr int kRM = BLOCK_M / kGq;                         // queries per thread
constexpr int kRN = kTNq ? BLOCK_N / kTNq : 1;             // key columns per thread
constexpr int kQCh = kTNq ? exact_chunks_per_lane(HEAD_DIM, kTNq, kVec) : 1;   // 16-byte dQ chunks per thread
constexpr bool kQRagged = kTNq && kKAll % kTNq != 0;
static_assert(kTNq > 0, "BLOCK_M, BLOCK_N, NUM_WARPS: no ft_bwd_dq thread split (see check_bwd)");
static_assert(BLOCK_N % kVec == 0, "BLOCK_N: a multiple of 16 bytes of elements (4 f32, 2 f64) for DQ_MODE 1");
static_assert(kDqSmemBytes == FT_SMEM_BYTES_ft_bwd_dq, "shared memory: ft_bwd_dq's layout differs from traits/exact.h");
#endif

static_assert(HEAD_DIM % kVec == 0 && HEAD_DIM_V % kVec == 0, "HEAD_DIM, HEAD_DIM_V: whole 16-byte rows");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES: 1..4");
static_assert(BLOCK_M % kVec == 0, "BLOCK_M: a multiple of 16 bytes of elements (4 f32, 2 f64)");
static_assert(kTN1 > 0, "BLOCK_N, BLOCK_M, NUM_WARPS: no dK/dV thread split (see check_bwd)");
static_assert(kRK * kG1 == BLOCK_N && kRQ * kTN1 == BLOCK_M, "dK/dV thread split");
static_assert(kDkdvSmemBytes == FT_SMEM_BYTES_ft_bwd_dkdv, "shared memory: ft_bwd_dkdv's layout differs from traits/exact.h");
constexpr int kRule = bwd_exact_rule(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V, DQ_MODE, CAUSAL);
static_assert(kRule != EXACT_BAD_TILES, "BLOCK_M, BLOCK_N: powers of two");
static_assert(kRule != EXACT_BAD_SMEM, "BLOCK_M, BLOCK_N, NUM_STAGES: shared memory over the 227 KiB of sm_90");
static_assert(kRule != EXACT_BAD_REGISTERS && kRule != EXACT_BAD_REGISTERS_DQ,
              "BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V: accumulators would spill");
static_assert(kRule == EXACT_OK, "bwd_exact: a rule of traits/exact.h");

// ex_aligned16 of one of Q, dO, K, V: a variable-length batch has no batch stride (sb unused) and
// its sequences start at any row, so there the row stride must keep 16 bytes whatever the lengths.
FT_DEVICE bool rows_aligned16(const void *p, long long sb, long long sh, long long ss, int batch, int heads,
                              int seqlen)
{
    return VARLEN ? ex_aligned16(p, 0, sh, ss, 1, heads, 0) : ex_aligned16(p, sb, sh, ss, batch, heads, seqlen);
}

// ---- ft_bwd_preprocess: delta = rowsum(dO * O) ---------------------------------------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_preprocess(const ft_bwd_args args)
{
    int bh, tile, part;   // the block's head row and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
    const ft_seq sq = seq_of(args, (unsigned)bh / args.heads);
    const int nq = sq.seqlen_q;
    const int b = bh / args.heads, h = bh - b * args.heads;
    if (VARLEN && tile * BLOCK_M >= nq)   // past this sequence's queries
        return;
    const elem_t *const go = (const elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0);
    const elem_t *const gdo = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0);
    acc_t *const gdelta = (acc_t *)args.delta + seq_row(args, sq, b, h, bh);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < BLOCK_M; r += NUM_WARPS) {
        const int row = tile * BLOCK_M + r;
        if (!EVEN_M && row >= nq)
            break;   // the whole warp leaves together
        const elem_t *const orow = go + row * args.o_stride[2];
        const elem_t *const dorow = gdo + row * args.do_stride[2];
        acc_t acc = 0;
        for (int d = lane; d < V_DATA; d += 32)
            acc += orow[d] * dorow[d];
        acc = ex_group_sum<32>(acc);
        if (lane == 0) {
            gdelta[row] = acc;
            if (SINKS && args.dsinks)   // the row's share of the sinks' gradient, -exp(sink - L) delta
                atomicAdd((acc_t *)args.dsinks + h,
                          -ex_exp(((const acc_t *)args.sinks)[h] - ((const acc_t *)args.lse)[seq_row(args, sq, b, h, bh) + row]) * acc);
        }
    }
}

// ---- ft_bwd_dkdv: dK, dV (and with DQ_MODE 0 dQ by atomics) for BLOCK_N keys --------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_dkdv(const ft_bwd_args args)
{
    extern __shared__ __align__(16) unsigned char ft_smem[];
    elem_t *const sK = reinterpret_cast<elem_t *>(ft_smem);
    elem_t *const sV = sK + BLOCK_N * kQkLd;
    elem_t *const sPT = sV + BLOCK_N * kVLd;
    elem_t *const sdST = sPT + BLOCK_N * kPtLd;
    elem_t *const sQ = sdST + BLOCK_N * kPtLd;             // [NUM_STAGES][BLOCK_M][kQkLd]
    elem_t *const sdO = sQ + NUM_STAGES * BLOCK_M * kQkLd;  // [NUM_STAGES][BLOCK_M][kVLd]
    acc_t *const sL = sdO + NUM_STAGES * BLOCK_M * kVLd;    // [NUM_STAGES][BLOCK_M]
    acc_t *const sDl = sL + NUM_STAGES * BLOCK_M;           // [NUM_STAGES][BLOCK_M]

    // The block's K/V head row (batch * heads_k) and key tile, and the group of query heads that
    // read it, from query head h0 (batch * heads row bh0) on; its sequence's lengths, rows, band.
    int bh, tile, part;   // the block's head row and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
    const ft_seq sq = seq_of(args, (unsigned)bh / args.heads_k);
    const int nq = sq.seqlen_q, nk = sq.seqlen_k;
    const int group_heads = kv_group(args);
    const int b = bh / args.heads_k, h = bh - b * args.heads_k;
    const int bh0 = bh * group_heads, h0 = h * group_heads;
    const int n0 = tile * BLOCK_N;
    if (VARLEN && n0 >= nk)   // past this sequence's keys (the grid is sized by the longest)
        return;
    const long long qs = args.q_stride[2], dos = args.do_stride[2];
    const elem_t *const gq = (const elem_t *)args.q + seq_offset(args.q_stride, b, h0, sq.q0);
    const elem_t *const gdo = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h0, sq.q0);
    const elem_t *const gk = (const elem_t *)args.k + seq_offset(args.k_stride, b, h, sq.k0) + n0 * args.k_stride[2];
    const elem_t *const gv = (const elem_t *)args.v + seq_offset(args.v_stride, b, h, sq.k0) + n0 * args.v_stride[2];
    const acc_t *const glse = (const acc_t *)args.lse + seq_row(args, sq, b, h0, bh0);
    const acc_t *const gdelta = (const acc_t *)args.delta + seq_row(args, sq, b, h0, bh0);
    const int l_rows = bwd_head_rows(args, sq);   // lse / delta / dq_accum rows from a head to the next
#if DQ_MODE == 0
    acc_t *const gdqa = (acc_t *)args.dq_accum + seq_row(args, sq, b, h0, bh0) * HEAD_DIM;
#endif
    const acc_t scale = (acc_t)args.softmax_scale;
    const ex_scorer score(args);

    const bool qdo_vec = rows_aligned16(args.q, args.q_stride[0], args.q_stride[1], qs, args.batch, args.heads, nq) &&
                         rows_aligned16(args.dout, args.do_stride[0], args.do_stride[1], dos, args.batch, args.heads, nq);
    const bool kv_vec = rows_aligned16(args.k, args.k_stride[0], args.k_stride[1], args.k_stride[2], args.batch, args.heads_k, nk) &&
                        rows_aligned16(args.v, args.v_stride[0], args.v_stride[1], args.v_stride[2], args.batch, args.heads_k, nk);

    // Query tiles [t_first, t_end) to visit in each head of the group (group_step); with block
    // skipping, or for a sequence without queries, only those that see a key here (maybe none:
    // then dK = dV = 0 for the keys).
    // The band: the sequence's; dense, read from the argument block here as before seq_of (where
    // the loads sit changes ptxas's schedule, and the dense SASS stays the same).
    const int lo = VARLEN ? sq.lo : args.mask_lo, hi = VARLEN ? sq.hi : args.mask_hi;
    int t_first, t_end;
    query_tiles<BLOCK_M, BLOCK_N>(lo, hi, n0, nq, nk, t_first, t_end);
    const int per_head = t_end - t_first, count = per_head * group_heads;

    // Step t of the walk into stage st: Q and dO rows (past the sequence's queries zero-filled,
    // never read from the next sequence), L and delta (0 there; such rows get P = 0 below).
    auto load_q = [&](int t, int st) {
        const group_step w = walk_group(t, t_first, per_head);
        const int m0 = w.mt * BLOCK_M;
        const elem_t *const q = gq + w.head * args.q_stride[1], *const dout = gdo + w.head * args.do_stride[1];
        const long long l0 = (long long)w.head * l_rows + m0;
        ex_stage_rows<BLOCK_M, HEAD_DIM, QK_DATA, kQkLd, EVEN_M>(sQ + st * BLOCK_M * kQkLd, q + m0 * qs, qs, nq - m0, qdo_vec);
        ex_stage_rows<BLOCK_M, HEAD_DIM_V, V_DATA, kVLd, EVEN_M>(sdO + st * BLOCK_M * kVLd, dout + m0 * dos, dos, nq - m0, qdo_vec);
        for (int x = threadIdx.x; x < BLOCK_M; x += kThreads) {
            const bool ok = EVEN_M || m0 + x < nq;
            sL[st * BLOCK_M + x] = ok ? glse[l0 + x] : (acc_t)0;
            sDl[st * BLOCK_M + x] = ok ? gdelta[l0 + x] : (acc_t)0;
        }
    };

    // K and V stay for the whole block: their own cp.async group, ahead of the query tiles.
    if (count > 0) {
        ex_stage_rows<BLOCK_N, HEAD_DIM, QK_DATA, kQkLd, EVEN_N>(sK, gk, args.k_stride[2], nk - n0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, V_DATA, kVLd, EVEN_N>(sV, gv, args.v_stride[2], nk - n0, kv_vec);
    }
    cp_async_commit();
    for (int s = 0; s < NUM_STAGES - 1; ++s) {
        if (s < count)
            load_q(s, s);
        cp_async_commit();   // always, so that group 1 + i holds step i
    }

    const int tid = threadIdx.x, lane_c = tid % kTN1, group = tid / kTN1;
    acc_t dk[kRK][kKCh * kVec], dv[kRK][kVCh * kVec];
#pragma unroll
    for (int i = 0; i < kRK; ++i) {
#pragma unroll
        for (int c = 0; c < kKCh * kVec; ++c)
            dk[i][c] = 0;
#pragma unroll
        for (int c = 0; c < kVCh * kVec; ++c)
            dv[i][c] = 0;
    }

    for (int it = 0; it < count; ++it) {
        // Step it's query tile; its head is asked for only where dQ is added (no register held
        // across the products: f64 at head dim 192 has none to spare).
        // Step it's query tile; its head is derived again where dQ is added: nothing of the walk
        // is held across the products (f64 at head dim 192 has no register to spare).
        const int st = it % NUM_STAGES, m0 = walk_group(it, t_first, per_head).mt * BLOCK_M;
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's products are done with stage 0, P^T and dS^T
            load_q(it, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile it (and K, V) visible; everyone is past tile it-1
        if (NUM_STAGES > 1) {
            const int nx = it + NUM_STAGES - 1;   // refills the stage that tile it-1 used
            if (nx < count)
                load_q(nx, nx % NUM_STAGES);
            cp_async_commit();
        }
        const elem_t *const tq = sQ + st * BLOCK_M * kQkLd;
        const elem_t *const tdo = sdO + st * BLOCK_M * kVLd;
        const acc_t *const tl = sL + st * BLOCK_M;
        const acc_t *const tdl = sDl + st * BLOCK_M;

        // S^T = K Q^T and dP^T = V dO^T for this thread's keys and queries.
        acc_t s[kRK][kRQ], dp[kRK][kRQ];
#pragma unroll
        for (int i = 0; i < kRK; ++i)
#pragma unroll
            for (int j = 0; j < kRQ; ++j)
                s[i][j] = dp[i][j] = 0;
        ex_dot_rows<kRK, kRQ, HEAD_DIM, kQkLd, kQkLd, kG1, kTN1>(s, sK, tq, group, lane_c);
        ex_dot_rows<kRK, kRQ, HEAD_DIM_V, kVLd, kVLd, kG1, kTN1>(dp, sV, tdo, group, lane_c);

        // P^T = exp(scale S^T - L) (0 where masked), dS^T = P^T (dP^T - delta): to shared memory.
        const bool need_mask = (!EVEN_M && m0 + BLOCK_M > nq) || (!EVEN_N && n0 + BLOCK_N > nk) ||
                               tile_needs_mask(lo, hi, m0, m0 + BLOCK_M, n0, n0 + BLOCK_N);
#pragma unroll
        for (int i = 0; i < kRK; ++i) {
            const int r = group + kG1 * i, key = n0 + r;
#pragma unroll
            for (int j = 0; j < kRQ; ++j) {
                const int c = lane_c + kTN1 * j, row = m0 + c;
                acc_t slope;
                acc_t p = ex_exp(score(s[i][j], slope) - tl[c]);
                if (need_mask && ((!EVEN_M && row >= nq) || (!EVEN_N && key >= nk) || (CAUSAL && !ft_mask_visible(lo, hi, row, key))))
                    p = 0;
                sPT[r * kPtLd + c] = p;
                sdST[r * kPtLd + c] = p * (dp[i][j] - tdl[c]) * slope;
            }
        }
        __syncthreads();   // P^T and dS^T complete

        // dV += P^T dO and dK += dS^T Q.
#pragma unroll 2
        for (int m = 0; m < BLOCK_M; m += kVec) {
            acc_t pv[kRK][kVec], dsv[kRK][kVec];
#pragma unroll
            for (int i = 0; i < kRK; ++i) {
                ex_lds(pv[i], sPT + (group + kG1 * i) * kPtLd + m);
                ex_lds(dsv[i], sdST + (group + kG1 * i) * kPtLd + m);
            }
#pragma unroll
            for (int u = 0; u < kVec; ++u) {
                acc_t ov[kVCh][kVec], qv[kKCh][kVec];
#pragma unroll
                for (int ch = 0; ch < kVCh; ++ch)
                    ex_lds_if(ov[ch], tdo + (m + u) * kVLd + (lane_c + kTN1 * ch) * kVec,
                              !kVRagged || lane_c + kTN1 * ch < kVAll);
#pragma unroll
                for (int ch = 0; ch < kKCh; ++ch)
                    ex_lds_if(qv[ch], tq + (m + u) * kQkLd + (lane_c + kTN1 * ch) * kVec,
                              !kKRagged || lane_c + kTN1 * ch < kKAll);
#pragma unroll
                for (int i = 0; i < kRK; ++i) {
#pragma unroll
                    for (int ch = 0; ch < kVCh; ++ch)
#pragma unroll
                        for (int w = 0; w < kVec; ++w)
                            dv[i][ch * kVec + w] += pv[i][u] * ov[ch][w];
#pragma unroll
                    for (int ch = 0; ch < kKCh; ++ch)
#pragma unroll
                        for (int w = 0; w < kVec; ++w)
                            dk[i][ch * kVec + w] += dsv[i][u] * qv[ch][w];
                }
            }
        }

#if DQ_MODE == 0
        // dQ += dS K for this query tile, added into dq_accum (softmax_scale comes in
        // ft_bwd_dq_convert). Its own split: group g3 owns queries g3 + kG3*i, lane c3 HEAD_DIM
        // chunks c3 + kTN3*ch. Reads only what the barrier above published.
        {
            const int c3 = tid % kTN3, g3 = tid / kTN3;
            acc_t dq[kR3][kCh3 * kVec];
#pragma unroll
            for (int i = 0; i < kR3; ++i)
#pragma unroll
                for (int c = 0; c < kCh3 * kVec; ++c)
                    dq[i][c] = 0;
#pragma unroll 4
            for (int n = 0; n < BLOCK_N; ++n) {
                acc_t a[kR3], kv[kCh3][kVec];
#pragma unroll
                for (int i = 0; i < kR3; ++i)
                    a[i] = sdST[n * kPtLd + g3 + kG3 * i];
#pragma unroll
                for (int ch = 0; ch < kCh3; ++ch)
                    ex_lds_if(kv[ch], sK + n * kQkLd + (c3 + kTN3 * ch) * kVec, !kRagged3 || c3 + kTN3 * ch < kKAll);
#pragma unroll
                for (int i = 0; i < kR3; ++i)
#pragma unroll
                    for (int ch = 0; ch < kCh3; ++ch)
#pragma unroll
                        for (int w = 0; w < kVec; ++w)
                            dq[i][ch * kVec + w] += a[i] * kv[ch][w];
            }
#pragma unroll
            for (int i = 0; i < kR3; ++i) {
                const int row = m0 + g3 + kG3 * i;
                if (EVEN_M || row < nq) {
                    acc_t *const dst = gdqa + ((long long)(it / per_head) * l_rows + row) * HEAD_DIM;
#pragma unroll
                    for (int ch = 0; ch < kCh3; ++ch)
                        if (!kRagged3 || c3 + kTN3 * ch < kKAll)
#pragma unroll
                            for (int w = 0; w < kVec; ++w)
                                atomicAdd(dst + (c3 + kTN3 * ch) * kVec + w, dq[i][ch * kVec + w]);
                }
            }
        }
#endif
    }
    cp_async_wait<0>();   // nothing in flight at exit, even when no query tile was visited

    // dK = scale dS^T Q and dV; keys that no query sees get zeros.
    // (VARLEN: the sequence's first key row read again rather than held across the loop.)
    elem_t *const gdk = (elem_t *)args.dk + seq_offset(args.dk_stride, b, h, VARLEN ? args.cu_seqlens_k[b] : 0);
    elem_t *const gdv = (elem_t *)args.dv + seq_offset(args.dv_stride, b, h, VARLEN ? args.cu_seqlens_k[b] : 0);
#pragma unroll
    for (int i = 0; i < kRK; ++i) {
        const int key = n0 + group + kG1 * i;
        if (EVEN_N || key < nk) {
            ex_store_chunks<kTN1, kKCh, kKRagged, QK_DATA>(gdk + key * args.dk_stride[2], dk[i], lane_c, kKAll, scale);
            ex_store_chunks<kTN1, kVCh, kVRagged, V_DATA>(gdv + key * args.dv_stride[2], dv[i], lane_c, kVAll, (acc_t)1);
        }
    }
}

// ---- ft_bwd_dq (DQ_MODE 1): dQ for BLOCK_M queries over the key tiles, no atomics -----------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_dq(const ft_bwd_args args)
{
#if DQ_MODE == 1
    extern __shared__ __align__(16) unsigned char ft_smem[];
    elem_t *const sQ = reinterpret_cast<elem_t *>(ft_smem);
    elem_t *const sdO = sQ + BLOCK_M * kQkLd;
    elem_t *const sdS = sdO + BLOCK_M * kVLd;
    elem_t *const sK = sdS + BLOCK_M * kDsLd;               // [NUM_STAGES][BLOCK_N][kQkLd]
    elem_t *const sV = sK + NUM_STAGES * BLOCK_N * kQkLd;   // [NUM_STAGES][BLOCK_N][kVLd]

    int bh, tile, part;   // the block's head row and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
    const ft_seq sq = seq_of(args, (unsigned)bh / args.heads);
    const int nq = sq.seqlen_q, nk = sq.seqlen_k;
    const int b = bh / args.heads, h = bh - b * args.heads;
    const int q0 = tile * BLOCK_M;
    if (VARLEN && q0 >= nq)   // past this sequence's queries (the grid is sized by the longest)
        return;
    const long long ks = args.k_stride[2], vs = args.v_stride[2];
    const elem_t *const gq = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0) + q0 * args.q_stride[2];
    const elem_t *const gdo = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0) + q0 * args.do_stride[2];
    const elem_t *gk = (const elem_t *)args.k + seq_offset(args.k_stride, b, kv_head(args, h), sq.k0);
    const elem_t *gv = (const elem_t *)args.v + seq_offset(args.v_stride, b, kv_head(args, h), sq.k0);
    const acc_t *const glse = (const acc_t *)args.lse + seq_row(args, sq, b, h, bh);
    const acc_t *const gdelta = (const acc_t *)args.delta + seq_row(args, sq, b, h, bh);
    const acc_t scale = (acc_t)args.softmax_scale;
    const ex_scorer score(args);

    const bool qdo_vec = rows_aligned16(args.q, args.q_stride[0], args.q_stride[1], args.q_stride[2], args.batch, args.heads, nq) &&
                         rows_aligned16(args.dout, args.do_stride[0], args.do_stride[1], args.do_stride[2], args.batch, args.heads, nq);
    const bool kv_vec = rows_aligned16(args.k, args.k_stride[0], args.k_stride[1], ks, args.batch, args.heads_k, nk) &&
                        rows_aligned16(args.v, args.v_stride[0], args.v_stride[1], vs, args.batch, args.heads_k, nk);

    // Key tiles to visit (maybe none, as for a sequence without keys: then dQ = 0). The band: the
    // sequence's; dense, read from the argument block here as before seq_of (SASS unchanged).
    const int lo = VARLEN ? sq.lo : args.mask_lo, hi = VARLEN ? sq.hi : args.mask_hi;
    const key_walk kw = walk_keys<BLOCK_M, BLOCK_N>(lo, hi, q0, nq, nk, gk, ks, gv, vs);   // gk, gv: its first tile
    const int n_tiles = kw.n_tiles;

    auto load_kv = [&](int t, int st) {   // t counts from the first visited tile
        const int k0 = t * BLOCK_N;
        ex_stage_rows<BLOCK_N, HEAD_DIM, QK_DATA, kQkLd, EVEN_N>(sK + st * BLOCK_N * kQkLd, gk + k0 * ks, ks, kw.keys - k0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, V_DATA, kVLd, EVEN_N>(sV + st * BLOCK_N * kVLd, gv + k0 * vs, vs, kw.keys - k0, kv_vec);
    };

    // Q and dO stay for the whole block and join the first cp.async group.
    ex_stage_rows<BLOCK_M, HEAD_DIM, QK_DATA, kQkLd, EVEN_M>(sQ, gq, args.q_stride[2], nq - q0, qdo_vec);
    ex_stage_rows<BLOCK_M, HEAD_DIM_V, V_DATA, kVLd, EVEN_M>(sdO, gdo, args.do_stride[2], nq - q0, qdo_vec);
    for (int s = 0; s < NUM_STAGES - 1; ++s) {
        if (s < n_tiles)
            load_kv(s, s);
        cp_async_commit();
    }

    const int tid = threadIdx.x, lane_c = tid % kTNq, group = tid / kTNq;
    acc_t dq[kRM][kQCh * kVec], lrow[kRM], drow[kRM];
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        const int row = q0 + group + kGq * i;
        const bool ok = EVEN_M || row < nq;
        lrow[i] = ok ? glse[row] : (acc_t)0;
        drow[i] = ok ? gdelta[row] : (acc_t)0;
#pragma unroll
        for (int c = 0; c < kQCh * kVec; ++c)
            dq[i][c] = 0;
    }

    for (int it = 0; it < n_tiles; ++it) {
        const int st = it % NUM_STAGES, k0 = kw.n_begin + it * BLOCK_N;   // k0: absolute, for the mask
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's dS K is done with stage 0 and dS
            load_kv(it, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile t visible; everyone is past tile t-1
        if (NUM_STAGES > 1) {
            const int tn = it + NUM_STAGES - 1;
            if (tn < n_tiles)
                load_kv(tn, tn % NUM_STAGES);
            cp_async_commit();
        }
        const elem_t *const tk = sK + st * BLOCK_N * kQkLd;
        const elem_t *const tv = sV + st * BLOCK_N * kVLd;

        // S = Q K^T and dP = dO V^T.
        acc_t s[kRM][kRN], dp[kRM][kRN];
#pragma unroll
        for (int i = 0; i < kRM; ++i)
#pragma unroll
            for (int j = 0; j < kRN; ++j)
                s[i][j] = dp[i][j] = 0;
        ex_dot_rows<kRM, kRN, HEAD_DIM, kQkLd, kQkLd, kGq, kTNq>(s, sQ, tk, group, lane_c);
        ex_dot_rows<kRM, kRN, HEAD_DIM_V, kVLd, kVLd, kGq, kTNq>(dp, sdO, tv, group, lane_c);

        // dS = P (dP - delta), P = exp(scale S - L) and 0 where masked: to shared memory.
        const bool need_mask = (!EVEN_N && k0 + BLOCK_N > nk) || tile_needs_mask(lo, hi, q0, q0 + BLOCK_M, k0, k0 + BLOCK_N);
#pragma unroll
        for (int i = 0; i < kRM; ++i) {
            const int r = group + kGq * i, row = q0 + r;
#pragma unroll
            for (int j = 0; j < kRN; ++j) {
                const int col = k0 + lane_c + kTNq * j;
                acc_t slope;
                acc_t p = ex_exp(score(s[i][j], slope) - lrow[i]);
                if (need_mask && ((!EVEN_N && col >= nk) || (CAUSAL && !ft_mask_visible(lo, hi, row, col))))
                    p = 0;
                sdS[r * kDsLd + lane_c + kTNq * j] = p * (dp[i][j] - drow[i]) * slope;
            }
        }
        __syncthreads();   // dS complete

        // dQ += dS K.
        ex_rows_times<kRM, kQCh, BLOCK_N, kDsLd, kQkLd, kGq, kTNq, kQRagged>(dq, sdS, tk, group, lane_c, kKAll);
    }

    cp_async_wait<0>();   // nothing in flight at exit, even when no key tile was visited

    // dQ = scale dS K for the rows that exist.
    elem_t *const gdq = (elem_t *)args.dq + seq_offset(args.dq_stride, b, h, VARLEN ? args.cu_seqlens_q[b] : 0);
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        const int row = q0 + group + kGq * i;
        if (EVEN_M || row < nq)
            ex_store_chunks<kTNq, kQCh, kQRagged, QK_DATA>(gdq + row * args.dq_stride[2], dq[i], lane_c, kKAll, scale);
    }
#endif
}

// ---- ft_bwd_dq_convert (DQ_MODE 0): dq = softmax_scale * dq_accum, in DTYPE -----------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_dq_convert(const ft_bwd_args args)
{
#if DQ_MODE == 0
    int bh, tile, part;   // the block's head row and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
    const ft_seq sq = seq_of(args, (unsigned)bh / args.heads);
    const int nq = sq.seqlen_q;
    const int b = bh / args.heads, h = bh - b * args.heads;
    const int q0 = tile * BLOCK_M;
    if (VARLEN && q0 >= nq)   // past this sequence's queries
        return;
    const acc_t *const gdqa = (const acc_t *)args.dq_accum + (seq_row(args, sq, b, h, bh) + q0) * HEAD_DIM;
    elem_t *const gdq = (elem_t *)args.dq + seq_offset(args.dq_stride, b, h, sq.q0) + q0 * args.dq_stride[2];
    const acc_t scale = (acc_t)args.softmax_scale;
    const int rows = EVEN_M ? BLOCK_M : min(BLOCK_M, nq - q0);
    for (int x = threadIdx.x; x < rows * HEAD_DIM; x += kThreads) {
        const int r = x / HEAD_DIM, d = x - r * HEAD_DIM;
        if (QK_DATA == HEAD_DIM || d < QK_DATA)
            gdq[r * args.dq_stride[2] + d] = gdqa[x] * scale;
    }
#endif
}
