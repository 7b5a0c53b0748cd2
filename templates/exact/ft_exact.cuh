// ft_exact.cuh: what the exact f32/f64 families share (fwd_exact, bwd_exact): precise math in
// acc_t, reductions over a row group of lanes, 16-byte shared-memory vectors, and staging rows
// into padded shared tiles (cp.async when 16-byte aligned, plain loads otherwise). The thread
// splits are traits/exact.h's.
#if DTYPE != FT_DTYPE_F32 && DTYPE != FT_DTYPE_F64
#error "the exact families take DTYPE 0 (f32) or 3 (f64)"
#endif

constexpr int kThreads = NUM_WARPS * 32;
constexpr int kVec = 16 / (int)sizeof(elem_t);   // elements in one 16-byte vector

#if DTYPE == FT_DTYPE_F64
FT_DEVICE acc_t ex_exp(acc_t x) { return exp(x); }
FT_DEVICE acc_t ex_log(acc_t x) { return log(x); }
FT_DEVICE acc_t ex_tanh(acc_t x) { return tanh(x); }
FT_DEVICE acc_t ex_neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }
#else
FT_DEVICE acc_t ex_exp(acc_t x) { return expf(x); }
FT_DEVICE acc_t ex_log(acc_t x) { return logf(x); }
FT_DEVICE acc_t ex_tanh(acc_t x) { return tanhf(x); }
FT_DEVICE acc_t ex_neg_inf() { return __int_as_float(0xff800000); }
#endif
FT_DEVICE acc_t ex_max(acc_t a, acc_t b) { return a > b ? a : b; }

// The score of raw = Q.K: scale raw, or with SOFTCAP c tanh(scale raw / c) (ft_types.cuh), and
// its slope d(score) / d(scale raw): 1, or 1 - tanh^2 (the backward's factor on dS).
struct ex_scorer {
    acc_t scale, cap, cap_in;
    template <class Args> FT_DEVICE explicit ex_scorer(const Args &args)
        : scale((acc_t)args.softmax_scale), cap((acc_t)args.softcap),
          cap_in(SOFTCAP ? (acc_t)(args.softmax_scale / args.softcap) : (acc_t)0) {}
    FT_DEVICE acc_t operator()(acc_t raw) const { return SOFTCAP ? cap * ex_tanh(raw * cap_in) : raw * scale; }
    FT_DEVICE acc_t operator()(acc_t raw, acc_t &slope) const
    {
        if (!SOFTCAP) {
            slope = 1;
            return raw * scale;
        }
        const acc_t t = ex_tanh(raw * cap_in);
        slope = 1 - t * t;
        return cap * t;
    }
};

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

// Starts copying rows [0, ROWS) of a W-wide row-major matrix (global row stride gstride elements,
// the first DATA columns data) to shared memory with row stride LD; rows at or past nvalid (unless
// EVEN) and columns past DATA become zeros. vec16: asynchronous 16-byte copies (the caller
// commits and waits); else plain loads, for tensors that are not 16-byte aligned, complete on
// return.
template <int ROWS, int W, int DATA, int LD, bool EVEN>
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
                if constexpr (DATA >= W) {
                    const elem_t *g = ok ? src + r * gstride + ch * kVec : src;
                    cp_async_16(smem_addr(dst + r * LD + ch * kVec), g, ok ? 16 : 0);
                } else if ((ch + 1) * kVec <= DATA || ch * kVec >= DATA) {   // data, or padding (zeros)
                    const bool in = ok && ch * kVec < DATA;
                    cp_async_16(smem_addr(dst + r * LD + ch * kVec), in ? src + r * gstride + ch * kVec : src,
                                in ? 16 : 0);
                } else {   // the chunk the data ends in, element by element: 16 bytes could pass the tensor's end
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        dst[r * LD + ch * kVec + w] =
                            ok && ch * kVec + w < DATA ? src[r * gstride + ch * kVec + w] : (elem_t)0;
                }
            }
        }
    } else {
        for (int x = (int)threadIdx.x; x < ROWS * W; x += kThreads) {
            const int r = x / W, c = x - r * W;
            dst[r * LD + c] = (EVEN || r < nvalid) && (DATA >= W || c < DATA) ? src[r * gstride + c] : (elem_t)0;
        }
    }
}

// Stores scale times this lane's CH 16-byte chunks of a row (lane c: chunks c, c + TN, ...);
// with RAGGED, chunks past the row's `all` chunks are skipped, and elements past the row's DATA
// columns of data always are.
template <int TN, int CH, bool RAGGED, int DATA>
FT_DEVICE void ex_store_chunks(elem_t *row, const acc_t *vals, int lane_c, int all, acc_t scale)
{
#pragma unroll
    for (int ch = 0; ch < CH; ++ch)
        if (!RAGGED || lane_c + TN * ch < all)
#pragma unroll
            for (int w = 0; w < kVec; ++w)
                if ((lane_c + TN * ch) * kVec + w < DATA)
                    row[(lane_c + TN * ch) * kVec + w] = vals[ch * kVec + w] * scale;
}

// acc[i][j] += row_i . col_j over W elements: this thread's R rows of a row tile (rows group +
// G*i, row stride LDR) against its C rows of a column tile (rows lane_c + TN*j, stride LDC),
// both in shared memory, read as 16-byte vectors. S = Q K^T, dP = dO V^T and their transposes.
template <int R, int C, int W, int LDR, int LDC, int G, int TN>
FT_DEVICE void ex_dot_rows(acc_t (&acc)[R][C], const elem_t *rows, const elem_t *cols, int group, int lane_c)
{
#pragma unroll 2
    for (int d = 0; d < W; d += kVec) {
        acc_t rv[R][kVec], cv[C][kVec];
#pragma unroll
        for (int i = 0; i < R; ++i)
            ex_lds(rv[i], rows + (group + G * i) * LDR + d);
#pragma unroll
        for (int j = 0; j < C; ++j)
            ex_lds(cv[j], cols + (lane_c + TN * j) * LDC + d);
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
            for (int j = 0; j < C; ++j)
#pragma unroll
                for (int u = 0; u < kVec; ++u)
                    acc[i][j] += rv[i][u] * cv[j][u];
    }
}

// acc[i] += p_i B: this thread's R rows of a K-wide tile p (rows group + G*i, stride LDP) times
// a K x (ALL 16-byte chunks) tile b (stride LDB), into its CH output chunks (lane c: chunks c,
// c + TN, ...; with RAGGED, chunks past ALL are skipped). O += P V, dQ += dS K.
template <int R, int CH, int K, int LDP, int LDB, int G, int TN, bool RAGGED>
FT_DEVICE void ex_rows_times(acc_t (&acc)[R][CH * kVec], const elem_t *p, const elem_t *b, int group, int lane_c,
                             int all)
{
#pragma unroll 2
    for (int n = 0; n < K; n += kVec) {
        acc_t pv[R][kVec];
#pragma unroll
        for (int i = 0; i < R; ++i)
            ex_lds(pv[i], p + (group + G * i) * LDP + n);
#pragma unroll
        for (int u = 0; u < kVec; ++u) {
            acc_t bv[CH][kVec];
#pragma unroll
            for (int ch = 0; ch < CH; ++ch)
                ex_lds_if(bv[ch], b + (n + u) * LDB + (lane_c + TN * ch) * kVec, !RAGGED || lane_c + TN * ch < all);
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int ch = 0; ch < CH; ++ch)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        acc[i][ch * kVec + w] += pv[i][u] * bv[ch][w];
        }
    }
}
