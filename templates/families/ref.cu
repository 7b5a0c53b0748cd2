// families/ref.cu: the GPU reference kernels the tuner validates candidates against, written for
// clarity, not speed, for every DTYPE. Elements are read with load_acc and written with to_elem;
// arithmetic is in acc_t (fp32, fp64 for f64) with precise expf/exp. No shared memory and no
// N x N buffer: each pass recomputes the scores it needs.
//
// Launch shape: one warp per row, NUM_WARPS rows per block, so the family fixes
// BLOCK_M = BLOCK_N = NUM_WARPS (check_ref in generator/family_ref.c). Query-major entries
// (grid.x = ceil(seqlen_q / BLOCK_M)): ft_ref_fwd (ft_fwd_args), ft_ref_bwd_preprocess and
// ft_ref_bwd_dq (ft_bwd_args). Key-major (grid.x = ceil(seqlen_k / BLOCK_N), grid.y
// batch * heads_k): ft_ref_bwd_dkdv (ft_bwd_args). Backward order: preprocess (writes delta),
// then dq and dkdv in either order; dq_accum is not used. Lane l holds the head-dim elements l,
// l + 32, ... of its row. Grouped K/V heads (args.heads_k < args.heads) and the softcap
// (args.softcap) are taken: query head h reads K/V head h / (heads / heads_k), and dkdv sums a
// K/V head's dK and dV over its query heads. So are variable-length batches (VARLEN): each
// block takes its sequence's lengths, rows and band from seq_of, and rows past its sequence's
// end return at once. And attention sinks (args.sinks): head h's logit joins each row's running
// max and sum from the start (a score with no value), and the preprocess adds each row's share
// of the sinks' gradient, -exp(sink - L) delta, into args.dsinks[h].

// ---- helpers ------------------------------------------------------------------------------

constexpr int kDPerLane = (HEAD_DIM + 31) / 32;     // Q/K elements a lane holds
constexpr int kDvPerLane = (HEAD_DIM_V + 31) / 32;  // V/O elements a lane holds

static_assert(NUM_WARPS >= 1 && NUM_WARPS <= 16, "NUM_WARPS: 1..16");
static_assert(ref_rule(BLOCK_M, BLOCK_N, NUM_WARPS) == REF_OK, "BLOCK_M, BLOCK_N: must equal NUM_WARPS (one warp a row)");

#if DTYPE == FT_DTYPE_F64
FT_DEVICE acc_t ref_tanh(acc_t x) { return tanh(x); }
FT_DEVICE acc_t ref_exp(acc_t x) { return exp(x); }
FT_DEVICE acc_t ref_log(acc_t x) { return log(x); }
FT_DEVICE acc_t ref_neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }
FT_DEVICE acc_t ref_rcp(acc_t x) { return __drcp_rn(x); }
#else
FT_DEVICE acc_t ref_tanh(acc_t x) { return tanhf(x); }
FT_DEVICE acc_t ref_exp(acc_t x) { return expf(x); }
FT_DEVICE acc_t ref_log(acc_t x) { return logf(x); }
FT_DEVICE acc_t ref_neg_inf() { return __int_as_float(0xff800000); }
FT_DEVICE acc_t ref_rcp(acc_t x) { return __frcp_rn(x); }
#endif

// A score from scale * Q.K: capped to c tanh(s / c) with a softcap c (0: none).
FT_DEVICE acc_t ref_cap(acc_t s, acc_t cap) { return cap != 0 ? cap * ref_tanh(s / cap) : s; }
// d(capped score) / d(scale * Q.K) at capped score s: 1 - tanh^2, 1 without a softcap.
FT_DEVICE acc_t ref_cap_slope(acc_t s, acc_t cap) { return cap != 0 ? 1 - (s / cap) * (s / cap) : (acc_t)1; }

FT_DEVICE acc_t ref_warp_sum(acc_t x)
{
    for (int o = 16; o > 0; o /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// This lane's elements of a W-wide row (0 past the end).
template <int W, int N> FT_DEVICE void ref_load(acc_t (&r)[N], const elem_t *row, int lane)
{
#pragma unroll
    for (int t = 0; t < N; ++t)
        r[t] = lane + 32 * t < W ? load_acc(row + lane + 32 * t) : (acc_t)0;
}

// Dot product of a row held across the warp with a W-wide row in memory; every lane gets it.
template <int W, int N> FT_DEVICE acc_t ref_dot(const acc_t (&a)[N], const elem_t *row, int lane)
{
    acc_t x = 0;
#pragma unroll
    for (int t = 0; t < N; ++t)
        if (lane + 32 * t < W)
            x += a[t] * load_acc(row + lane + 32 * t);
    return ref_warp_sum(x);
}

// r += c * row.
template <int W, int N> FT_DEVICE void ref_axpy(acc_t (&r)[N], acc_t c, const elem_t *row, int lane)
{
#pragma unroll
    for (int t = 0; t < N; ++t)
        if (lane + 32 * t < W)
            r[t] += c * load_acc(row + lane + 32 * t);
}

// row = c * r (this lane's elements).
template <int W, int N> FT_DEVICE void ref_store(elem_t *row, const acc_t (&r)[N], acc_t c, int lane)
{
#pragma unroll
    for (int t = 0; t < N; ++t)
        if (lane + 32 * t < W)
            row[lane + 32 * t] = to_elem(r[t] * c);
}

// Query head h's sink logit (args.sinks, acc_t), and whether there is one.
template <class Args> FT_DEVICE bool ref_sink(const Args &args, int h, acc_t &sink)
{
    sink = args.sinks ? ((const acc_t *)args.sinks)[h] : (acc_t)0;
    return args.sinks != nullptr;
}

// ---- forward ------------------------------------------------------------------------------

// O = softmax(cap(scale Q K^T)) V and L = logsumexp: pass 1 keeps a running max and sum over the
// visible keys (a sink's score in both from the start), pass 2 recomputes each score and
// accumulates P V. A row that sees no key gets O = 0 and L = +inf (with a sink, L = the sink).
extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32, 1) ft_ref_fwd(const ft_fwd_args args)
{
    const int lane = threadIdx.x % 32, row = blockIdx.x * BLOCK_M + threadIdx.x / 32;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const ft_seq sq = seq_of(args, b);
    if (row >= sq.seqlen_q)
        return;   // the whole warp: no block-wide barrier follows
    const int hk = kv_head(args, h);
    const elem_t *const q = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0) + row * args.q_stride[2];
    const elem_t *const k = (const elem_t *)args.k + seq_offset(args.k_stride, b, hk, sq.k0);
    const elem_t *const v = (const elem_t *)args.v + seq_offset(args.v_stride, b, hk, sq.k0);
    const acc_t scale = (acc_t)args.softmax_scale, cap = (acc_t)args.softcap;
    int k0, k1;
    row_keys(sq.lo, sq.hi, row, sq.seqlen_k, k0, k1);

    acc_t qr[kDPerLane];
    ref_load<HEAD_DIM>(qr, q, lane);

    acc_t sink;
    const bool has_sink = ref_sink(args, h, sink);
    acc_t m = has_sink ? sink : ref_neg_inf(), l = has_sink ? (acc_t)1 : (acc_t)0;
    for (int j = k0; j < k1; ++j) {
        const acc_t s = ref_cap(scale * ref_dot<HEAD_DIM>(qr, k + j * args.k_stride[2], lane), cap);
        const acc_t m_new = s > m ? s : m;
        l = l * ref_exp(m - m_new) + ref_exp(s - m_new);
        m = m_new;
    }

    acc_t o[kDvPerLane];
#pragma unroll
    for (int t = 0; t < kDvPerLane; ++t)
        o[t] = 0;
    for (int j = k0; j < k1; ++j) {
        const acc_t s = ref_cap(scale * ref_dot<HEAD_DIM>(qr, k + j * args.k_stride[2], lane), cap);
        ref_axpy<HEAD_DIM_V>(o, ref_exp(s - m), v + j * args.v_stride[2], lane);
    }
    // A row that sees no key and no sink (l = 0) gets O = 0 and L = +inf. 1/l correctly rounded, as the
    // division was. The f64 division and log are calls; with the empty-row selects ptxas spilled
    // around them at its default register target, hence this entry's minimum of one block.
    const acc_t inv = ref_rcp(l);
    ref_store<HEAD_DIM_V>((elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0) + row * args.o_stride[2], o,
                          l > 0 ? inv : (acc_t)0, lane);
    if (lane == 0)
        ((acc_t *)args.lse)[seq_row(args, sq, b, h, bh) + row] = l > 0 ? m + ref_log(l) : -ref_neg_inf();
}

// ---- backward -----------------------------------------------------------------------------

// delta = rowsum(dO * O); with sinks, the row's share of dsinks[h]: -exp(sink - L) delta.
extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32, 1) ft_ref_bwd_preprocess(const ft_bwd_args args)
{
    const int lane = threadIdx.x % 32, row = blockIdx.x * BLOCK_M + threadIdx.x / 32;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const ft_seq sq = seq_of(args, b);
    if (row >= sq.seqlen_q)
        return;
    const elem_t *const o = (const elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0) + row * args.o_stride[2];
    const elem_t *const dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0) + row * args.do_stride[2];
    acc_t dor[kDvPerLane];
    ref_load<HEAD_DIM_V>(dor, dout, lane);
    const acc_t delta = ref_dot<HEAD_DIM_V>(dor, o, lane);
    acc_t sink;
    if (lane == 0) {
        const long long r = seq_row(args, sq, b, h, bh) + row;
        ((acc_t *)args.delta)[r] = delta;
        if (ref_sink(args, h, sink) && args.dsinks)
            atomicAdd((acc_t *)args.dsinks + h, -ref_exp(sink - ((const acc_t *)args.lse)[r]) * delta);
    }
}

// dQ_i = scale sum_j dS_ij K_j, with S_ij = cap(scale Q_i.K_j), P_ij = exp(S_ij - L_i),
// dS_ij = P_ij (dO_i.V_j - delta_i) times the cap's slope at S_ij.
extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32, 1) ft_ref_bwd_dq(const ft_bwd_args args)
{
    const int lane = threadIdx.x % 32, row = blockIdx.x * BLOCK_M + threadIdx.x / 32;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh - b * args.heads;
    const ft_seq sq = seq_of(args, b);
    if (row >= sq.seqlen_q)
        return;
    const int hk = kv_head(args, h);
    const elem_t *const q = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0) + row * args.q_stride[2];
    const elem_t *const dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0) + row * args.do_stride[2];
    const elem_t *const k = (const elem_t *)args.k + seq_offset(args.k_stride, b, hk, sq.k0);
    const elem_t *const v = (const elem_t *)args.v + seq_offset(args.v_stride, b, hk, sq.k0);
    const acc_t scale = (acc_t)args.softmax_scale, cap = (acc_t)args.softcap;
    const acc_t lse = ((const acc_t *)args.lse)[seq_row(args, sq, b, h, bh) + row];
    const acc_t delta = ((const acc_t *)args.delta)[seq_row(args, sq, b, h, bh) + row];
    int k0, k1;
    row_keys(sq.lo, sq.hi, row, sq.seqlen_k, k0, k1);

    acc_t qr[kDPerLane], dor[kDvPerLane], dq[kDPerLane];
    ref_load<HEAD_DIM>(qr, q, lane);
    ref_load<HEAD_DIM_V>(dor, dout, lane);
#pragma unroll
    for (int t = 0; t < kDPerLane; ++t)
        dq[t] = 0;
    for (int j = k0; j < k1; ++j) {
        const acc_t s = ref_cap(scale * ref_dot<HEAD_DIM>(qr, k + j * args.k_stride[2], lane), cap);
        const acc_t p = ref_exp(s - lse);
        const acc_t dp = ref_dot<HEAD_DIM_V>(dor, v + j * args.v_stride[2], lane);
        ref_axpy<HEAD_DIM>(dq, p * (dp - delta) * ref_cap_slope(s, cap), k + j * args.k_stride[2], lane);
    }
    ref_store<HEAD_DIM>((elem_t *)args.dq + seq_offset(args.dq_stride, b, h, sq.q0) + row * args.dq_stride[2],
                        dq, scale, lane);
}

// dV_j = sum_i P_ij dO_i and dK_j = scale sum_i dS_ij Q_i over the queries that see key j, of
// every query head that reads this K/V head (grid.y: batch * heads_k); a key no query sees gets
// zeros.
extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32, 1) ft_ref_bwd_dkdv(const ft_bwd_args args)
{
    const int lane = threadIdx.x % 32, key = blockIdx.x * BLOCK_N + threadIdx.x / 32;
    const int bhk = blockIdx.y, b = bhk / args.heads_k, hk = bhk - b * args.heads_k;
    const ft_seq sq = seq_of(args, b);
    if (key >= sq.seqlen_k)
        return;
    const int group = args.heads / args.heads_k;
    const elem_t *const k = (const elem_t *)args.k + seq_offset(args.k_stride, b, hk, sq.k0) + key * args.k_stride[2];
    const elem_t *const v = (const elem_t *)args.v + seq_offset(args.v_stride, b, hk, sq.k0) + key * args.v_stride[2];
    const acc_t scale = (acc_t)args.softmax_scale, cap = (acc_t)args.softcap;

    acc_t kr[kDPerLane], vr[kDvPerLane], dk[kDPerLane], dv[kDvPerLane];
    ref_load<HEAD_DIM>(kr, k, lane);
    ref_load<HEAD_DIM_V>(vr, v, lane);
#pragma unroll
    for (int t = 0; t < kDPerLane; ++t)
        dk[t] = 0;
#pragma unroll
    for (int t = 0; t < kDvPerLane; ++t)
        dv[t] = 0;
    int q0, q1;
    key_queries(sq.lo, sq.hi, key, sq.seqlen_q, q0, q1);
    for (int h = hk * group; h < (hk + 1) * group; ++h) {
        const elem_t *const q = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0);
        const elem_t *const dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0);
        const long long bh = (long long)b * args.heads + h;
        const acc_t *const lse = (const acc_t *)args.lse + seq_row(args, sq, b, h, bh);
        const acc_t *const delta = (const acc_t *)args.delta + seq_row(args, sq, b, h, bh);
        for (int i = q0; i < q1; ++i) {
            const elem_t *const qi = q + i * args.q_stride[2];
            const elem_t *const doi = dout + i * args.do_stride[2];
            const acc_t s = ref_cap(scale * ref_dot<HEAD_DIM>(kr, qi, lane), cap);
            const acc_t p = ref_exp(s - lse[i]);
            const acc_t dp = ref_dot<HEAD_DIM_V>(vr, doi, lane);
            ref_axpy<HEAD_DIM_V>(dv, p, doi, lane);
            ref_axpy<HEAD_DIM>(dk, p * (dp - delta[i]) * ref_cap_slope(s, cap), qi, lane);
        }
    }
    ref_store<HEAD_DIM>((elem_t *)args.dk + seq_offset(args.dk_stride, b, hk, sq.k0) + key * args.dk_stride[2],
                        dk, scale, lane);
    ref_store<HEAD_DIM_V>((elem_t *)args.dv + seq_offset(args.dv_stride, b, hk, sq.k0) + key * args.dv_stride[2],
                          dv, (acc_t)1, lane);
}

// ---- the tuner's inputs and checks, made on the device ------------------------------------
// Utilities with their own launch shape (any grid, grid-stride loops), used by the tuner's
// worker: generating tens of millions of inputs and comparing every output on the host took
// seconds per workload (tuner/tune_worker.c).

// splitmix64's finalizer: a counter-based generator, so element i is the same for any grid.
FT_DEVICE unsigned long long ref_mix(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// dst[i] = a standard normal value (Box-Muller; u1 in (0, 1], so log is finite) for stream seed.
extern "C" __global__ void ft_ref_fill_normal(elem_t *dst, long long count, unsigned long long seed)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += step) {
        const unsigned long long a = ref_mix(seed ^ ref_mix(2 * (unsigned long long)i));
        const unsigned long long c = ref_mix(seed ^ ref_mix(2 * (unsigned long long)i + 1));
        const double u1 = ((double)(a >> 11) + 1.0) * 0x1p-53;
        const double u2 = (double)(c >> 11) * 0x1p-53;
        dst[i] = to_elem((acc_t)(sqrt(-2.0 * log(u1)) * cospi(2.0 * u2)));
    }
}

FT_DEVICE double ref_warp_sum_f64(double x)
{
    for (int o = 16; o > 0; o /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// Error figures of got against want, n elements of elem_t (acc = 0) or acc_t (acc = 1, e.g. L),
// as tune_compare computes them on the host: stats[0] += sum of (got - want)^2 and stats[1] +=
// sum of want^2 over finite got; stats[2] = max |got - want| (stored as the bits of a
// non-negative double, which order like the values); stats[3] += count of non-finite got.
// The caller zeroes stats first.
extern "C" __global__ void ft_ref_compare(const void *got, const void *want, long long n, int acc, double *stats)
{
    double num = 0, den = 0, mx = 0, bad = 0;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += step) {
        const double g = acc ? (double)((const acc_t *)got)[i] : (double)load_acc((const elem_t *)got + i);
        const double w = acc ? (double)((const acc_t *)want)[i] : (double)load_acc((const elem_t *)want + i);
        if (!isfinite(g)) {
            bad += 1;
            continue;
        }
        const double d = g - w;
        num += d * d;
        den += w * w;
        mx = fmax(mx, fabs(d));
    }
    num = ref_warp_sum_f64(num);
    den = ref_warp_sum_f64(den);
    bad = ref_warp_sum_f64(bad);
    for (int o = 16; o > 0; o /= 2)
        mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&stats[0], num);
        atomicAdd(&stats[1], den);
        atomicMax((unsigned long long *)&stats[2], (unsigned long long)__double_as_longlong(mx));
        atomicAdd(&stats[3], bad);
    }
}
