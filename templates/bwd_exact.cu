// bwd_exact.cu: backward attention in exact f32/f64 arithmetic on CUDA cores (no tensor cores,
// no TF32, precise expf/exp). Entries, launched in this order (templates/README.md):
//   ft_bwd_preprocess  (query-major) delta = rowsum(dO * O), one warp per row;
//   ft_bwd_dkdv        (key-major)   dK, dV for BLOCK_N keys over all query tiles; with DQ_MODE 0
//                                    also adds dS K into dq_accum with atomics;
//   ft_bwd_dq          (query-major) DQ_MODE 1 only: dQ for BLOCK_M queries over all key tiles,
//                                    deterministic;
//   ft_bwd_dq_convert  (query-major) DQ_MODE 0 only: dq = softmax_scale * dq_accum.
// The entry a DQ_MODE does not launch compiles to an empty kernel, so every symbol exists.
// Threads NUM_WARPS*32; dynamic shared memory kDkdvSmemBytes (ft_bwd_dkdv) and kDqSmemBytes
// (ft_bwd_dq), the same formulas as smem_dkdv() and smem_dq() in generator/family_bwd_exact.c
// (change both together); the other two entries use none.
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

#if DTYPE != FT_DTYPE_F32 && DTYPE != FT_DTYPE_F64
#error "bwd_exact: DTYPE must be 0 (f32) or 3 (f64)"
#endif

// ---- helpers of the exact families (the same text opens bwd_exact.cu) ----------------------

constexpr int kThreads = NUM_WARPS * 32;
constexpr int kVec = 16 / (int)sizeof(elem_t);   // elements in one 16-byte vector

#if DTYPE == FT_DTYPE_F64
FT_DEVICE acc_t ex_exp(acc_t x) { return exp(x); }
FT_DEVICE acc_t ex_log(acc_t x) { return log(x); }
FT_DEVICE acc_t ex_neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }
#else
FT_DEVICE acc_t ex_exp(acc_t x) { return expf(x); }
FT_DEVICE acc_t ex_log(acc_t x) { return logf(x); }
FT_DEVICE acc_t ex_neg_inf() { return __int_as_float(0xff800000); }
#endif
FT_DEVICE acc_t ex_max(acc_t a, acc_t b) { return a > b ? a : b; }

// Reductions over the TN consecutive lanes of a row group (every lane gets the result).
template <int TN> FT_DEVICE acc_t ex_group_max(acc_t x)
{
#pragma unroll
    for (int o = TN / 2; o > 0; o /= 2)
        x = ex_max(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}
template <int TN> FT_DEVICE acc_t ex_group_sum(acc_t x)
{
#pragma unroll
    for (int o = TN / 2; o > 0; o /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// One 16-byte shared-memory load (p 16-byte aligned) into kVec registers.
struct __align__(16) ex_vec {
    elem_t v[kVec];
};
FT_DEVICE void ex_lds(acc_t (&r)[kVec], const elem_t *p)
{
    const ex_vec x = *reinterpret_cast<const ex_vec *>(p);
#pragma unroll
    for (int u = 0; u < kVec; ++u)
        r[u] = x.v[u];
}
// The same for a chunk a lane may own past the end of its row (ok = 0): zeros, no load.
FT_DEVICE void ex_lds_if(acc_t (&r)[kVec], const elem_t *p, bool ok)
{
    if (ok) {
        ex_lds(r, p);
    } else {
#pragma unroll
        for (int u = 0; u < kVec; ++u)
            r[u] = 0;
    }
}

// 1 when every row of a [batch, heads, seqlen, dim] tensor starts on 16 bytes, so rows can be
// copied with 16-byte cp.async; strides of extent-1 dimensions do not matter.
FT_DEVICE bool ex_aligned16(const void *p, long long sb, long long sh, long long ss, int batch,
                            int heads, int seqlen)
{
    const long long e = (long long)sizeof(elem_t);
    return ((unsigned long long)p & 15) == 0 && (batch == 1 || (sb * e) % 16 == 0) &&
           (heads == 1 || (sh * e) % 16 == 0) && (seqlen == 1 || (ss * e) % 16 == 0);
}

// Starts copying rows [0, ROWS) of a W-wide row-major matrix (global row stride gstride elements)
// to shared memory with row stride LD; rows at or past nvalid become zeros (unless EVEN). vec16:
// asynchronous 16-byte copies (the caller commits and waits); else plain loads, for tensors that
// are not 16-byte aligned, complete on return.
template <int ROWS, int W, int LD, bool EVEN>
FT_DEVICE void ex_stage_rows(elem_t *dst, const elem_t *src, long long gstride, int nvalid, bool vec16)
{
    if (vec16) {
        constexpr int kChunks = W / kVec, kTotal = ROWS * kChunks;
#pragma unroll
        for (int it = 0; it < (kTotal + kThreads - 1) / kThreads; ++it) {
            const int x = (int)threadIdx.x + it * kThreads;
            if (kTotal % kThreads == 0 || x < kTotal) {
                const int r = x / kChunks, ch = x - r * kChunks;
                const bool ok = EVEN || r < nvalid;
                const elem_t *g = ok ? src + r * gstride + ch * kVec : src;
                cp_async_16(smem_addr(dst + r * LD + ch * kVec), g, ok ? 16 : 0);
            }
        }
    } else {
        for (int x = (int)threadIdx.x; x < ROWS * W; x += kThreads) {
            const int r = x / W, c = x - r * W;
            dst[r * LD + c] = (EVEN || r < nvalid) ? src[r * gstride + c] : (elem_t)0;
        }
    }
}

// 16-byte chunks of a w-wide row that each of tn lanes owns (lane c: chunks c, c + tn, ...);
// when tn does not divide the row's chunks, the last one of some lanes falls past the row and
// they skip it (loads give zeros, stores are dropped).
__host__ __device__ constexpr int ex_chunks_per_lane(int w, int tn)
{
    return (w / kVec + tn - 1) / tn;
}

// Shared-memory wavefronts (128 bytes each) of one warp-wide 16-byte load that reads n distinct
// addresses without bank conflicts (the padded rows see to that).
__host__ __device__ constexpr int ex_wavefronts(int n)
{
    return n > 8 ? n / 8 : 1;
}

// Lanes per row group for a block of R rows that computes R x C scores (inner dims summing to
// ksum) and then nout products of widths w1, w2 (0: none) over those C columns. Valid when the
// group divides C and every thread gets at least one row; among those, the one whose loads
// cost the fewest shared-memory wavefronts per warp and tile (row data is read once per row
// group, 32/tn addresses; column data once per lane, tn addresses). 0 when none is valid.
// pick_tn() in generator/family_*_exact.c is the same function (change both together).
__host__ __device__ constexpr int ex_pick_tn(int R, int C, int ksum, int w1, int w2, int nout)
{
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (R * tn < kThreads || (R * tn) % kThreads != 0 || C % tn != 0)
            continue;
        const int rr = R * tn / kThreads, wf_row = ex_wavefronts(32 / tn), wf_col = ex_wavefronts(tn);
        const int chunks = ex_chunks_per_lane(w1, tn) + ex_chunks_per_lane(w2, tn);
        const long long cost = (long long)(ksum / kVec) * (rr * wf_row + (C / tn) * wf_col) +
                               (long long)(C / kVec) * (rr * nout * wf_row + kVec * chunks * wf_col);
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

// The same for one product of R rows x w columns over an inner dim k whose row operand is read
// one scalar at a time (ft_bwd_dkdv's dQ += dS K, dS^T being stored key-major).
__host__ __device__ constexpr int ex_pick_tn_scalar_rows(int R, int k, int w)
{
    int best = 0;
    long long best_cost = 0;
    for (int tn = 1; tn <= 32; tn *= 2) {
        if (R * tn < kThreads || (R * tn) % kThreads != 0)
            continue;
        const int rr = R * tn / kThreads;
        const long long cost = (long long)k * (rr + ex_chunks_per_lane(w, tn) * ex_wavefronts(tn));
        if (best == 0 || cost < best_cost) {
            best = tn;
            best_cost = cost;
        }
    }
    return best;
}

// ---- traits -----------------------------------------------------------------------------

constexpr int kQkLd = HEAD_DIM + kVec;     // shared row stride of Q and K tiles (elements)
constexpr int kVLd = HEAD_DIM_V + kVec;    // of V and dO tiles
constexpr int kWaitGroups = NUM_STAGES >= 2 ? NUM_STAGES - 2 : 0;   // cp.async groups left in flight

// ft_bwd_dkdv
constexpr int kPtLd = BLOCK_M + kVec;      // row stride of P^T and dS^T (one row per key)
constexpr int kDkdvSmemElems = BLOCK_N * (kQkLd + kVLd + 2 * kPtLd) + NUM_STAGES * BLOCK_M * (kQkLd + kVLd + 2);
constexpr int kDkdvSmemBytes = kDkdvSmemElems * (int)sizeof(elem_t);   // = smem_dkdv() in family_bwd_exact.c
constexpr int kTN1 = ex_pick_tn(BLOCK_N, BLOCK_M, HEAD_DIM + HEAD_DIM_V, HEAD_DIM, HEAD_DIM_V, 2);
constexpr int kG1 = kTN1 ? kThreads / kTN1 : 1;            // row groups
constexpr int kRK = BLOCK_N / kG1;                         // keys per thread
constexpr int kRQ = kTN1 ? BLOCK_M / kTN1 : 1;             // query columns per thread
constexpr int kKAll = HEAD_DIM / kVec;                     // 16-byte chunks in a Q/K row
constexpr int kVAll = HEAD_DIM_V / kVec;                   // in a V/dO row
constexpr int kKCh = kTN1 ? ex_chunks_per_lane(HEAD_DIM, kTN1) : 1;     // dK chunks per thread
constexpr int kVCh = kTN1 ? ex_chunks_per_lane(HEAD_DIM_V, kTN1) : 1;   // dV chunks per thread
constexpr bool kKRagged = kTN1 && kKAll % kTN1 != 0;       // some lanes own a chunk past the row
constexpr bool kVRagged = kTN1 && kVAll % kTN1 != 0;
#if DQ_MODE == 0
// dQ += dS K inside ft_bwd_dkdv: rows = queries, columns = HEAD_DIM, inner = keys.
constexpr int kTN3 = ex_pick_tn_scalar_rows(BLOCK_M, BLOCK_N, HEAD_DIM);
constexpr int kG3 = kTN3 ? kThreads / kTN3 : 1;
constexpr int kR3 = BLOCK_M / kG3;                         // queries per thread
constexpr int kCh3 = kTN3 ? ex_chunks_per_lane(HEAD_DIM, kTN3) : 1;   // 16-byte dQ chunks per thread
constexpr bool kRagged3 = kTN3 && kKAll % kTN3 != 0;
static_assert(kTN3 > 0, "BLOCK_M, BLOCK_N, NUM_WARPS: no dQ thread split for DQ_MODE 0 (see check_bwd)");
#else
// ft_bwd_dq
constexpr int kDsLd = BLOCK_N + kVec;      // row stride of dS (one row per query)
constexpr int kDqSmemElems = BLOCK_M * (kQkLd + kVLd + kDsLd) + NUM_STAGES * BLOCK_N * (kQkLd + kVLd);
constexpr int kDqSmemBytes = kDqSmemElems * (int)sizeof(elem_t);   // = smem_dq() in family_bwd_exact.c
constexpr int kTNq = ex_pick_tn(BLOCK_M, BLOCK_N, HEAD_DIM + HEAD_DIM_V, HEAD_DIM, 0, 1);
constexpr int kGq = kTNq ? kThreads / kTNq : 1;
constexpr int kRM = BLOCK_M / kGq;                         // queries per thread
constexpr int kRN = kTNq ? BLOCK_N / kTNq : 1;             // key columns per thread
constexpr int kQCh = kTNq ? ex_chunks_per_lane(HEAD_DIM, kTNq) : 1;   // 16-byte dQ chunks per thread
constexpr bool kQRagged = kTNq && kKAll % kTNq != 0;
static_assert(kTNq > 0, "BLOCK_M, BLOCK_N, NUM_WARPS: no ft_bwd_dq thread split (see check_bwd)");
static_assert(BLOCK_N % kVec == 0, "BLOCK_N: a multiple of 16 bytes of elements (4 f32, 2 f64) for DQ_MODE 1");
static_assert(kDqSmemBytes <= 232448, "BLOCK_M, BLOCK_N, NUM_STAGES: ft_bwd_dq shared memory over 227 KiB");
#endif

static_assert(HEAD_DIM % kVec == 0 && HEAD_DIM_V % kVec == 0, "HEAD_DIM, HEAD_DIM_V: whole 16-byte rows");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES: 1..4");
static_assert(BLOCK_M % kVec == 0, "BLOCK_M: a multiple of 16 bytes of elements (4 f32, 2 f64)");
static_assert(kTN1 > 0, "BLOCK_N, BLOCK_M, NUM_WARPS: no dK/dV thread split (see check_bwd)");
static_assert(kRK * kG1 == BLOCK_N && kRQ * kTN1 == BLOCK_M, "dK/dV thread split");
static_assert(kDkdvSmemBytes <= 232448, "BLOCK_M, BLOCK_N, NUM_STAGES: ft_bwd_dkdv shared memory over 227 KiB");

// ---- ft_bwd_preprocess: delta = rowsum(dO * O) ---------------------------------------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_preprocess(const ft_bwd_args args)
{
    const int nq = args.seqlen_q;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const elem_t *const go = (const elem_t *)args.o + b * args.o_stride[0] + h * args.o_stride[1];
    const elem_t *const gdo = (const elem_t *)args.dout + b * args.do_stride[0] + h * args.do_stride[1];
    acc_t *const gdelta = (acc_t *)args.delta + (long long)bh * nq;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < BLOCK_M; r += NUM_WARPS) {
        const int row = blockIdx.x * BLOCK_M + r;
        if (!EVEN_M && row >= nq)
            break;   // the whole warp leaves together
        const elem_t *const orow = go + row * args.o_stride[2];
        const elem_t *const dorow = gdo + row * args.do_stride[2];
        acc_t acc = 0;
        for (int d = lane; d < HEAD_DIM_V; d += 32)
            acc += orow[d] * dorow[d];
        acc = ex_group_sum<32>(acc);
        if (lane == 0)
            gdelta[row] = acc;
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

    const int nq = args.seqlen_q, nk = args.seqlen_k;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const int n0 = blockIdx.x * BLOCK_N;
    const long long qs = args.q_stride[2], dos = args.do_stride[2];
    const elem_t *const gq = (const elem_t *)args.q + b * args.q_stride[0] + h * args.q_stride[1];
    const elem_t *const gdo = (const elem_t *)args.dout + b * args.do_stride[0] + h * args.do_stride[1];
    const elem_t *const gk = (const elem_t *)args.k + b * args.k_stride[0] + h * args.k_stride[1] + n0 * args.k_stride[2];
    const elem_t *const gv = (const elem_t *)args.v + b * args.v_stride[0] + h * args.v_stride[1] + n0 * args.v_stride[2];
    const acc_t *const glse = (const acc_t *)args.lse + (long long)bh * nq;
    const acc_t *const gdelta = (const acc_t *)args.delta + (long long)bh * nq;
#if DQ_MODE == 0
    acc_t *const gdqa = (acc_t *)args.dq_accum + (long long)bh * nq * HEAD_DIM;
#endif
    const acc_t scale = (acc_t)args.softmax_scale;

    const bool qdo_vec = ex_aligned16(args.q, args.q_stride[0], args.q_stride[1], qs, args.batch, args.heads, nq) &&
                         ex_aligned16(args.dout, args.do_stride[0], args.do_stride[1], dos, args.batch, args.heads, nq);
    const bool kv_vec = ex_aligned16(args.k, args.k_stride[0], args.k_stride[1], args.k_stride[2], args.batch, args.heads, nk) &&
                        ex_aligned16(args.v, args.v_stride[0], args.v_stride[1], args.v_stride[2], args.batch, args.heads, nk);

    // Query tiles to visit: all, or with CAUSAL_SKIP those holding a query >= the first key.
    const int m_tiles = (nq + BLOCK_M - 1) / BLOCK_M;
    const int t_first = (CAUSAL && CAUSAL_SKIP) ? min(n0 / BLOCK_M, m_tiles) : 0;
    const int count = m_tiles - t_first;

    // Query tile t into stage st: Q and dO rows (past seqlen_q zero-filled), L and delta (0 there).
    auto load_q = [&](int t, int st) {
        const int m0 = t * BLOCK_M;
        ex_stage_rows<BLOCK_M, HEAD_DIM, kQkLd, EVEN_M>(sQ + st * BLOCK_M * kQkLd, gq + m0 * qs, qs, nq - m0, qdo_vec);
        ex_stage_rows<BLOCK_M, HEAD_DIM_V, kVLd, EVEN_M>(sdO + st * BLOCK_M * kVLd, gdo + m0 * dos, dos, nq - m0, qdo_vec);
        for (int x = threadIdx.x; x < BLOCK_M; x += kThreads) {
            const bool ok = EVEN_M || m0 + x < nq;
            sL[st * BLOCK_M + x] = ok ? glse[m0 + x] : (acc_t)0;
            sDl[st * BLOCK_M + x] = ok ? gdelta[m0 + x] : (acc_t)0;
        }
    };

    // K and V stay for the whole block: their own cp.async group, ahead of the query tiles.
    if (count > 0) {
        ex_stage_rows<BLOCK_N, HEAD_DIM, kQkLd, EVEN_N>(sK, gk, args.k_stride[2], nk - n0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, kVLd, EVEN_N>(sV, gv, args.v_stride[2], nk - n0, kv_vec);
    }
    cp_async_commit();
    for (int s = 0; s < NUM_STAGES - 1; ++s) {
        if (s < count)
            load_q(t_first + s, s);
        cp_async_commit();   // always, so that group 1 + i holds query tile i
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
        const int st = it % NUM_STAGES, m0 = (t_first + it) * BLOCK_M;
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's products are done with stage 0, P^T and dS^T
            load_q(t_first + it, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile it (and K, V) visible; everyone is past tile it-1
        if (NUM_STAGES > 1) {
            const int nx = it + NUM_STAGES - 1;   // refills the stage that tile it-1 used
            if (nx < count)
                load_q(t_first + nx, nx % NUM_STAGES);
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
#pragma unroll 2
        for (int d = 0; d < HEAD_DIM; d += kVec) {
            acc_t kv[kRK][kVec], qv[kRQ][kVec];
#pragma unroll
            for (int i = 0; i < kRK; ++i)
                ex_lds(kv[i], sK + (group + kG1 * i) * kQkLd + d);
#pragma unroll
            for (int j = 0; j < kRQ; ++j)
                ex_lds(qv[j], tq + (lane_c + kTN1 * j) * kQkLd + d);
#pragma unroll
            for (int i = 0; i < kRK; ++i)
#pragma unroll
                for (int j = 0; j < kRQ; ++j)
#pragma unroll
                    for (int u = 0; u < kVec; ++u)
                        s[i][j] += kv[i][u] * qv[j][u];
        }
#pragma unroll 2
        for (int d = 0; d < HEAD_DIM_V; d += kVec) {
            acc_t vv[kRK][kVec], ov[kRQ][kVec];
#pragma unroll
            for (int i = 0; i < kRK; ++i)
                ex_lds(vv[i], sV + (group + kG1 * i) * kVLd + d);
#pragma unroll
            for (int j = 0; j < kRQ; ++j)
                ex_lds(ov[j], tdo + (lane_c + kTN1 * j) * kVLd + d);
#pragma unroll
            for (int i = 0; i < kRK; ++i)
#pragma unroll
                for (int j = 0; j < kRQ; ++j)
#pragma unroll
                    for (int u = 0; u < kVec; ++u)
                        dp[i][j] += vv[i][u] * ov[j][u];
        }

        // P^T = exp(scale S^T - L) (0 where masked), dS^T = P^T (dP^T - delta): to shared memory.
        const bool need_mask = (!EVEN_M && m0 + BLOCK_M > nq) || (!EVEN_N && n0 + BLOCK_N > nk) ||
                               (CAUSAL && m0 < n0 + BLOCK_N - 1);
#pragma unroll
        for (int i = 0; i < kRK; ++i) {
            const int r = group + kG1 * i, key = n0 + r;
#pragma unroll
            for (int j = 0; j < kRQ; ++j) {
                const int c = lane_c + kTN1 * j, row = m0 + c;
                acc_t p = ex_exp(s[i][j] * scale - tl[c]);
                if (need_mask && ((!EVEN_M && row >= nq) || (!EVEN_N && key >= nk) || (CAUSAL && row < key)))
                    p = 0;
                sPT[r * kPtLd + c] = p;
                sdST[r * kPtLd + c] = p * (dp[i][j] - tdl[c]);
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
                    acc_t *const dst = gdqa + (long long)row * HEAD_DIM;
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
    elem_t *const gdk = (elem_t *)args.dk + b * args.dk_stride[0] + h * args.dk_stride[1];
    elem_t *const gdv = (elem_t *)args.dv + b * args.dv_stride[0] + h * args.dv_stride[1];
#pragma unroll
    for (int i = 0; i < kRK; ++i) {
        const int key = n0 + group + kG1 * i;
        if (EVEN_N || key < nk) {
            elem_t *const krow = gdk + key * args.dk_stride[2];
            elem_t *const vrow = gdv + key * args.dv_stride[2];
#pragma unroll
            for (int ch = 0; ch < kKCh; ++ch)
                if (!kKRagged || lane_c + kTN1 * ch < kKAll)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        krow[(lane_c + kTN1 * ch) * kVec + w] = dk[i][ch * kVec + w] * scale;
#pragma unroll
            for (int ch = 0; ch < kVCh; ++ch)
                if (!kVRagged || lane_c + kTN1 * ch < kVAll)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        vrow[(lane_c + kTN1 * ch) * kVec + w] = dv[i][ch * kVec + w];
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

    const int nq = args.seqlen_q, nk = args.seqlen_k;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const int q0 = blockIdx.x * BLOCK_M;
    const long long ks = args.k_stride[2], vs = args.v_stride[2];
    const elem_t *const gq = (const elem_t *)args.q + b * args.q_stride[0] + h * args.q_stride[1] + q0 * args.q_stride[2];
    const elem_t *const gdo = (const elem_t *)args.dout + b * args.do_stride[0] + h * args.do_stride[1] + q0 * args.do_stride[2];
    const elem_t *const gk = (const elem_t *)args.k + b * args.k_stride[0] + h * args.k_stride[1];
    const elem_t *const gv = (const elem_t *)args.v + b * args.v_stride[0] + h * args.v_stride[1];
    const acc_t *const glse = (const acc_t *)args.lse + (long long)bh * nq;
    const acc_t *const gdelta = (const acc_t *)args.delta + (long long)bh * nq;
    const acc_t scale = (acc_t)args.softmax_scale;

    const bool qdo_vec = ex_aligned16(args.q, args.q_stride[0], args.q_stride[1], args.q_stride[2], args.batch, args.heads, nq) &&
                         ex_aligned16(args.dout, args.do_stride[0], args.do_stride[1], args.do_stride[2], args.batch, args.heads, nq);
    const bool kv_vec = ex_aligned16(args.k, args.k_stride[0], args.k_stride[1], ks, args.batch, args.heads, nk) &&
                        ex_aligned16(args.v, args.v_stride[0], args.v_stride[1], vs, args.batch, args.heads, nk);

    int n_tiles = (nk + BLOCK_N - 1) / BLOCK_N;
    if (CAUSAL && CAUSAL_SKIP)
        n_tiles = min(n_tiles, (min(q0 + BLOCK_M, nq) - 1) / BLOCK_N + 1);

    auto load_kv = [&](int t, int st) {
        const int k0 = t * BLOCK_N;
        ex_stage_rows<BLOCK_N, HEAD_DIM, kQkLd, EVEN_N>(sK + st * BLOCK_N * kQkLd, gk + k0 * ks, ks, nk - k0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, kVLd, EVEN_N>(sV + st * BLOCK_N * kVLd, gv + k0 * vs, vs, nk - k0, kv_vec);
    };

    // Q and dO stay for the whole block and join the first cp.async group.
    ex_stage_rows<BLOCK_M, HEAD_DIM, kQkLd, EVEN_M>(sQ, gq, args.q_stride[2], nq - q0, qdo_vec);
    ex_stage_rows<BLOCK_M, HEAD_DIM_V, kVLd, EVEN_M>(sdO, gdo, args.do_stride[2], nq - q0, qdo_vec);
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

    for (int t = 0; t < n_tiles; ++t) {
        const int st = t % NUM_STAGES, k0 = t * BLOCK_N;
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's dS K is done with stage 0 and dS
            load_kv(t, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile t visible; everyone is past tile t-1
        if (NUM_STAGES > 1) {
            const int tn = t + NUM_STAGES - 1;
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
#pragma unroll 2
        for (int d = 0; d < HEAD_DIM; d += kVec) {
            acc_t qv[kRM][kVec], kv[kRN][kVec];
#pragma unroll
            for (int i = 0; i < kRM; ++i)
                ex_lds(qv[i], sQ + (group + kGq * i) * kQkLd + d);
#pragma unroll
            for (int j = 0; j < kRN; ++j)
                ex_lds(kv[j], tk + (lane_c + kTNq * j) * kQkLd + d);
#pragma unroll
            for (int i = 0; i < kRM; ++i)
#pragma unroll
                for (int j = 0; j < kRN; ++j)
#pragma unroll
                    for (int u = 0; u < kVec; ++u)
                        s[i][j] += qv[i][u] * kv[j][u];
        }
#pragma unroll 2
        for (int d = 0; d < HEAD_DIM_V; d += kVec) {
            acc_t ov[kRM][kVec], vv[kRN][kVec];
#pragma unroll
            for (int i = 0; i < kRM; ++i)
                ex_lds(ov[i], sdO + (group + kGq * i) * kVLd + d);
#pragma unroll
            for (int j = 0; j < kRN; ++j)
                ex_lds(vv[j], tv + (lane_c + kTNq * j) * kVLd + d);
#pragma unroll
            for (int i = 0; i < kRM; ++i)
#pragma unroll
                for (int j = 0; j < kRN; ++j)
#pragma unroll
                    for (int u = 0; u < kVec; ++u)
                        dp[i][j] += ov[i][u] * vv[j][u];
        }

        // dS = P (dP - delta), P = exp(scale S - L) and 0 where masked: to shared memory.
        const bool need_mask = (!EVEN_N && k0 + BLOCK_N > nk) || (CAUSAL && k0 + BLOCK_N - 1 > q0);
#pragma unroll
        for (int i = 0; i < kRM; ++i) {
            const int r = group + kGq * i, row = q0 + r;
#pragma unroll
            for (int j = 0; j < kRN; ++j) {
                const int col = k0 + lane_c + kTNq * j;
                acc_t p = ex_exp(s[i][j] * scale - lrow[i]);
                if (need_mask && ((!EVEN_N && col >= nk) || (CAUSAL && col > row)))
                    p = 0;
                sdS[r * kDsLd + lane_c + kTNq * j] = p * (dp[i][j] - drow[i]);
            }
        }
        __syncthreads();   // dS complete

        // dQ += dS K.
#pragma unroll 2
        for (int n = 0; n < BLOCK_N; n += kVec) {
            acc_t dsv[kRM][kVec];
#pragma unroll
            for (int i = 0; i < kRM; ++i)
                ex_lds(dsv[i], sdS + (group + kGq * i) * kDsLd + n);
#pragma unroll
            for (int u = 0; u < kVec; ++u) {
                acc_t kv[kQCh][kVec];
#pragma unroll
                for (int ch = 0; ch < kQCh; ++ch)
                    ex_lds_if(kv[ch], tk + (n + u) * kQkLd + (lane_c + kTNq * ch) * kVec,
                              !kQRagged || lane_c + kTNq * ch < kKAll);
#pragma unroll
                for (int i = 0; i < kRM; ++i)
#pragma unroll
                    for (int ch = 0; ch < kQCh; ++ch)
#pragma unroll
                        for (int w = 0; w < kVec; ++w)
                            dq[i][ch * kVec + w] += dsv[i][u] * kv[ch][w];
            }
        }
    }

    // dQ = scale dS K for the rows that exist.
    elem_t *const gdq = (elem_t *)args.dq + b * args.dq_stride[0] + h * args.dq_stride[1];
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        const int row = q0 + group + kGq * i;
        if (EVEN_M || row < nq) {
            elem_t *const qrow = gdq + row * args.dq_stride[2];
#pragma unroll
            for (int ch = 0; ch < kQCh; ++ch)
                if (!kQRagged || lane_c + kTNq * ch < kKAll)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        qrow[(lane_c + kTNq * ch) * kVec + w] = dq[i][ch * kVec + w] * scale;
        }
    }
#endif
}

// ---- ft_bwd_dq_convert (DQ_MODE 0): dq = softmax_scale * dq_accum, in DTYPE -----------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_bwd_dq_convert(const ft_bwd_args args)
{
#if DQ_MODE == 0
    const int nq = args.seqlen_q;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const int q0 = blockIdx.x * BLOCK_M;
    const acc_t *const gdqa = (const acc_t *)args.dq_accum + ((long long)bh * nq + q0) * HEAD_DIM;
    elem_t *const gdq = (elem_t *)args.dq + b * args.dq_stride[0] + h * args.dq_stride[1] + q0 * args.dq_stride[2];
    const acc_t scale = (acc_t)args.softmax_scale;
    const int rows = EVEN_M ? BLOCK_M : min(BLOCK_M, nq - q0);
    for (int x = threadIdx.x; x < rows * HEAD_DIM; x += kThreads) {
        const int r = x / HEAD_DIM, d = x - r * HEAD_DIM;
        gdq[r * args.dq_stride[2] + d] = gdqa[x] * scale;
    }
#endif
}
