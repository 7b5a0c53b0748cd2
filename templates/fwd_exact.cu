// fwd_exact.cu: forward attention in exact f32/f64 arithmetic on CUDA cores (no tensor cores,
// no TF32, precise expf/exp), K/V tiles streamed through shared memory with cp.async.
//
// Entry: ft_fwd(ft_fwd_args). Grid (ceil(seqlen_q / BLOCK_M), batch*heads), NUM_WARPS*32
// threads, kSmemBytes of dynamic shared memory: the same formula as smem_fwd() in
// generator/family_fwd_exact.c (change both together).
//
// Work split. The threads form row groups of kTN consecutive lanes (kTN divides 32, so a row's
// reductions are warp shuffles). Row group g owns the tile's query rows g, g + kGroups, ... (kRM
// rows, interleaved so that the row groups of one warp read different banks); lane c of a group
// owns the score columns c, c + kTN, ... (kRN of them) and the output columns in 16-byte chunks
// c, c + kTN, ... (kRO elements; when kTN does not divide the row's chunks, a lane's last chunk
// may lie past the row and is skipped). Scores and output stay in registers; P goes through shared
// memory between the two products. kTN is chosen at compile time (ex_pick_tn) to need the
// fewest shared-memory loads per FMA; the per-thread register arrays (about BLOCK_M*HEAD_DIM_V
// and BLOCK_M*BLOCK_N elements over the threads) hardly depend on it. Registers per thread are
// bounded in check_fwd so that ptxas does not spill.
//
// Shared memory (elements of DTYPE; every row padded by 16 bytes so that rows start on
// different banks): Q [BLOCK_M][HEAD_DIM+kVec], K [NUM_STAGES][BLOCK_N][HEAD_DIM+kVec],
// V [NUM_STAGES][BLOCK_N][HEAD_DIM_V+kVec], P [BLOCK_M][BLOCK_N+kVec].

#if DTYPE != FT_DTYPE_F32 && DTYPE != FT_DTYPE_F64
#error "fwd_exact: DTYPE must be 0 (f32) or 3 (f64)"
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

constexpr int kQkLd = HEAD_DIM + kVec;     // shared row stride of Q and K (elements)
constexpr int kVLd = HEAD_DIM_V + kVec;    // of V
constexpr int kPLd = BLOCK_N + kVec;       // of P
constexpr int kSmemElems = BLOCK_M * kQkLd + NUM_STAGES * BLOCK_N * (kQkLd + kVLd) + BLOCK_M * kPLd;
constexpr int kSmemBytes = kSmemElems * (int)sizeof(elem_t);   // = smem_fwd() in family_fwd_exact.c
constexpr int kTN = ex_pick_tn(BLOCK_M, BLOCK_N, HEAD_DIM, HEAD_DIM_V, 0, 1);   // lanes per row group
constexpr int kGroups = kTN ? kThreads / kTN : 1;                              // row groups
constexpr int kRM = BLOCK_M / kGroups;                // query rows per thread
constexpr int kRN = kTN ? BLOCK_N / kTN : 1;          // score columns per thread
constexpr int kOAll = HEAD_DIM_V / kVec;             // 16-byte chunks in an output row
constexpr int kOChunks = kTN ? ex_chunks_per_lane(HEAD_DIM_V, kTN) : 1;   // of them per thread
constexpr bool kORagged = kTN && kOAll % kTN != 0;    // some lanes own a chunk past the row
constexpr int kRO = kOChunks * kVec;                  // output columns per thread
constexpr int kWaitGroups = NUM_STAGES >= 2 ? NUM_STAGES - 2 : 0;   // cp.async groups left in flight

static_assert(HEAD_DIM % kVec == 0 && HEAD_DIM_V % kVec == 0, "HEAD_DIM, HEAD_DIM_V: whole 16-byte rows");
static_assert(BLOCK_N % kVec == 0, "BLOCK_N: a multiple of 16 bytes of elements (4 f32, 2 f64)");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES: 1..4");
static_assert(kSmemBytes <= 232448, "BLOCK_M, BLOCK_N, NUM_STAGES: shared memory over the 227 KiB of sm_90");
static_assert(kTN > 0, "BLOCK_M, BLOCK_N, NUM_WARPS: no thread split (see check_fwd)");
static_assert(kRM * kGroups == BLOCK_M && kRN * kTN == BLOCK_N && kOChunks * kTN >= kOAll, "thread split");

// ---- kernel -----------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_fwd(const ft_fwd_args args)
{
    extern __shared__ __align__(16) unsigned char ft_smem[];
    elem_t *const sQ = reinterpret_cast<elem_t *>(ft_smem);
    elem_t *const sK = sQ + BLOCK_M * kQkLd;
    elem_t *const sV = sK + NUM_STAGES * BLOCK_N * kQkLd;
    elem_t *const sP = sV + NUM_STAGES * BLOCK_N * kVLd;

    const int nq = args.seqlen_q, nk = args.seqlen_k;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const int q0 = blockIdx.x * BLOCK_M;
    const elem_t *const gq = (const elem_t *)args.q + b * args.q_stride[0] + h * args.q_stride[1] + q0 * args.q_stride[2];
    const elem_t *const gk = (const elem_t *)args.k + b * args.k_stride[0] + h * args.k_stride[1];
    const elem_t *const gv = (const elem_t *)args.v + b * args.v_stride[0] + h * args.v_stride[1];
    elem_t *const go = (elem_t *)args.o + b * args.o_stride[0] + h * args.o_stride[1];
    acc_t *const glse = (acc_t *)args.lse + (long long)bh * nq;
    const long long ks = args.k_stride[2], vs = args.v_stride[2], os = args.o_stride[2];
    const acc_t scale = (acc_t)args.softmax_scale;

    const bool q_vec = ex_aligned16(args.q, args.q_stride[0], args.q_stride[1], args.q_stride[2], args.batch, args.heads, nq);
    const bool kv_vec = ex_aligned16(args.k, args.k_stride[0], args.k_stride[1], ks, args.batch, args.heads, nk) &&
                        ex_aligned16(args.v, args.v_stride[0], args.v_stride[1], vs, args.batch, args.heads, nk);

    // Key tiles to visit: all, or with CAUSAL_SKIP those holding a key <= the tile's last row.
    int n_tiles = (nk + BLOCK_N - 1) / BLOCK_N;
    if (CAUSAL && CAUSAL_SKIP)
        n_tiles = min(n_tiles, (min(q0 + BLOCK_M, nq) - 1) / BLOCK_N + 1);

    // K/V tile t into pipeline stage st (rows past seqlen_k zero-filled, so that 0 * P stays 0).
    auto load_kv = [&](int t, int st) {
        const int k0 = t * BLOCK_N;
        ex_stage_rows<BLOCK_N, HEAD_DIM, kQkLd, EVEN_N>(sK + st * BLOCK_N * kQkLd, gk + k0 * ks, ks, nk - k0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, kVLd, EVEN_N>(sV + st * BLOCK_N * kVLd, gv + k0 * vs, vs, nk - k0, kv_vec);
    };

    // Q joins the first cp.async group (with tile 0 when NUM_STAGES > 1).
    ex_stage_rows<BLOCK_M, HEAD_DIM, kQkLd, EVEN_M>(sQ, gq, args.q_stride[2], nq - q0, q_vec);
    for (int s = 0; s < NUM_STAGES - 1; ++s) {
        if (s < n_tiles)
            load_kv(s, s);
        cp_async_commit();   // always, so that group i holds tile i
    }

    const int tid = threadIdx.x, lane_c = tid % kTN, group = tid / kTN;
    acc_t o[kRM][kRO], m[kRM], l[kRM];   // output, running max, per-lane partial sum
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        m[i] = ex_neg_inf();
        l[i] = 0;
#pragma unroll
        for (int c = 0; c < kRO; ++c)
            o[i][c] = 0;
    }

    for (int t = 0; t < n_tiles; ++t) {
        const int st = t % NUM_STAGES, k0 = t * BLOCK_N;
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's P V is done with stage 0 and P
            load_kv(t, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile t visible to all; everyone is past tile t-1 (stage and P free)
        if (NUM_STAGES > 1) {
            const int tn = t + NUM_STAGES - 1;   // refills the stage that tile t-1 used
            if (tn < n_tiles)
                load_kv(tn, tn % NUM_STAGES);
            cp_async_commit();
        }
        const elem_t *const tk = sK + st * BLOCK_N * kQkLd;
        const elem_t *const tv = sV + st * BLOCK_N * kVLd;

        // S = Q K^T for this thread's rows and columns.
        acc_t s[kRM][kRN];
#pragma unroll
        for (int i = 0; i < kRM; ++i)
#pragma unroll
            for (int j = 0; j < kRN; ++j)
                s[i][j] = 0;
#pragma unroll 2
        for (int d = 0; d < HEAD_DIM; d += kVec) {
            acc_t qv[kRM][kVec], kv[kRN][kVec];
#pragma unroll
            for (int i = 0; i < kRM; ++i)
                ex_lds(qv[i], sQ + (group + kGroups * i) * kQkLd + d);
#pragma unroll
            for (int j = 0; j < kRN; ++j)
                ex_lds(kv[j], tk + (lane_c + kTN * j) * kQkLd + d);
#pragma unroll
            for (int i = 0; i < kRM; ++i)
#pragma unroll
                for (int j = 0; j < kRN; ++j)
#pragma unroll
                    for (int u = 0; u < kVec; ++u)
                        s[i][j] += qv[i][u] * kv[j][u];
        }

        // Scale, mask, online softmax; P to shared memory.
        const bool need_mask = (!EVEN_N && k0 + BLOCK_N > nk) || (CAUSAL && k0 + BLOCK_N - 1 > q0);
#pragma unroll
        for (int i = 0; i < kRM; ++i) {
            const int r = group + kGroups * i, row = q0 + r;
            acc_t mx = ex_neg_inf();
#pragma unroll
            for (int j = 0; j < kRN; ++j) {
                const int col = k0 + lane_c + kTN * j;
                acc_t x = s[i][j] * scale;
                if (need_mask && ((!EVEN_N && col >= nk) || (CAUSAL && col > row)))
                    x = ex_neg_inf();
                s[i][j] = x;
                mx = ex_max(mx, x);
            }
            mx = ex_group_max<kTN>(mx);
            const acc_t m_new = ex_max(m[i], mx);
            const acc_t m_use = m_new == ex_neg_inf() ? (acc_t)0 : m_new;   // row fully masked so far
            const acc_t alpha = ex_exp(m[i] - m_use);
            m[i] = m_new;
            acc_t rs = 0;
#pragma unroll
            for (int j = 0; j < kRN; ++j) {
                const acc_t p = ex_exp(s[i][j] - m_use);
                rs += p;
                sP[r * kPLd + lane_c + kTN * j] = p;
            }
            l[i] = l[i] * alpha + rs;
#pragma unroll
            for (int c = 0; c < kRO; ++c)
                o[i][c] *= alpha;
        }
        __syncthreads();   // P complete

        // O += P V.
#pragma unroll 2
        for (int n = 0; n < BLOCK_N; n += kVec) {
            acc_t pv[kRM][kVec];
#pragma unroll
            for (int i = 0; i < kRM; ++i)
                ex_lds(pv[i], sP + (group + kGroups * i) * kPLd + n);
#pragma unroll
            for (int u = 0; u < kVec; ++u) {
                acc_t vv[kOChunks][kVec];
#pragma unroll
                for (int ch = 0; ch < kOChunks; ++ch)
                    ex_lds_if(vv[ch], tv + (n + u) * kVLd + (lane_c + kTN * ch) * kVec,
                              !kORagged || lane_c + kTN * ch < kOAll);
#pragma unroll
                for (int i = 0; i < kRM; ++i)
#pragma unroll
                    for (int ch = 0; ch < kOChunks; ++ch)
#pragma unroll
                        for (int w = 0; w < kVec; ++w)
                            o[i][ch * kVec + w] += pv[i][u] * vv[ch][w];
            }
        }
    }

    // O = acc / l and L = m + log(l), for the rows that exist.
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        const int row = q0 + group + kGroups * i;
        const acc_t li = ex_group_sum<kTN>(l[i]);
        if (EVEN_M || row < nq) {
            elem_t *const orow = go + row * os;
#pragma unroll
            for (int ch = 0; ch < kOChunks; ++ch)
                if (!kORagged || lane_c + kTN * ch < kOAll)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        orow[(lane_c + kTN * ch) * kVec + w] = o[i][ch * kVec + w] / li;
            if (lane_c == 0)
                glse[row] = m[i] + ex_log(li);
        }
    }
}
