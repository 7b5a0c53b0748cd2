// ft_types.cuh: what every kernel shares: the element and accumulator types for DTYPE,
// conversions, fast math and warp reductions, shared-memory addresses. Written against PTX
// only, so NVRTC needs no headers. Expects DTYPE (and the other parameters) defined before it.

#define FT_DTYPE_F32 0
#define FT_DTYPE_F16 1
#define FT_DTYPE_BF16 2
#define FT_DTYPE_F64 3

#define FT_DEVICE __device__ __forceinline__

// elem_t is how one element is stored in memory; acc_t is the arithmetic type.
#if DTYPE == FT_DTYPE_F32
typedef float elem_t;
typedef float acc_t;
#elif DTYPE == FT_DTYPE_F64
typedef double elem_t;
typedef double acc_t;
#elif DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16
typedef unsigned short elem_t;   // raw 16-bit pattern; converted with cvt below
typedef float acc_t;
#else
#error "DTYPE must be 0 (f32), 1 (f16), 2 (bf16) or 3 (f64)"
#endif

// The head dims of the data: the compiled HEAD_DIM and HEAD_DIM_V, or smaller ones that the kernel
// pads to them (DATA_DIM, DATA_DIM_V). Columns past the data are loaded as zeros (never read from
// memory), add zeros to every product, and are never stored.
constexpr int QK_DATA = DATA_DIM ? DATA_DIM : HEAD_DIM;
constexpr int V_DATA = DATA_DIM_V ? DATA_DIM_V : HEAD_DIM_V;

#define FT_LOG2E 1.4426950408889634
#define FT_LN2 0.6931471805599453
// NVRTC has no math.h, so no INFINITY.
#define FT_INF_F __int_as_float(0x7f800000)

// ---- conversions --------------------------------------------------------------------------
FT_DEVICE float half_bits_to_float(unsigned short h)
{
    float f;
    asm("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h));
    return f;
}
FT_DEVICE unsigned short float_to_half_bits(float f)
{
    unsigned short h;
    asm("{ .reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t; }" : "=h"(h) : "f"(f));
    return h;
}
FT_DEVICE float bf16_bits_to_float(unsigned short h)
{
    return __uint_as_float(((unsigned)h) << 16);
}
FT_DEVICE unsigned short float_to_bf16_bits(float f)
{
    unsigned short h;
    asm("{ .reg .b16 t; cvt.rn.bf16.f32 t, %1; mov.b16 %0, t; }" : "=h"(h) : "f"(f));
    return h;
}

FT_DEVICE acc_t load_acc(const elem_t *p)
{
#if DTYPE == FT_DTYPE_F16
    return half_bits_to_float(*p);
#elif DTYPE == FT_DTYPE_BF16
    return bf16_bits_to_float(*p);
#else
    return *p;
#endif
}
FT_DEVICE elem_t to_elem(acc_t x)
{
#if DTYPE == FT_DTYPE_F16
    return float_to_half_bits(x);
#elif DTYPE == FT_DTYPE_BF16
    return float_to_bf16_bits(x);
#else
    return x;
#endif
}

// Two floats rounded to bfloat16 (nearest, ties to even) in one 32-bit register, a in bits 0-15,
// b in 16-31: the bf16 form of pack2, in every dtype (f32's bfloat16 parts take it too).
FT_DEVICE unsigned bf16x2_rn(float a, float b)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
    return r;
}

// Two floats into one 32-bit register of 16-bit elements: lo in bits 0-15, hi in 16-31,
// the order mma.sync expects for consecutive columns.
FT_DEVICE unsigned pack2(float lo, float hi)
{
#if DTYPE == FT_DTYPE_BF16
    return bf16x2_rn(lo, hi);
#else
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#endif
}

// Two (four) consecutive elements of a row from floats, in one store: p 4-byte (8-byte) aligned
// in the 16-bit types, 8-byte (16-byte) in f32. Not in f64, whose results are doubles.
#if DTYPE != FT_DTYPE_F64
FT_DEVICE void store2(elem_t *p, float lo, float hi)
{
#if DTYPE == FT_DTYPE_F32
    *(float2 *)p = make_float2(lo, hi);
#else
    *(unsigned *)p = pack2(lo, hi);
#endif
}
FT_DEVICE void store4(elem_t *p, float a, float b, float c, float d)
{
#if DTYPE == FT_DTYPE_F32
    *(float4 *)p = make_float4(a, b, c, d);
#else
    *(uint2 *)p = make_uint2(pack2(a, b), pack2(c, d));
#endif
}
#endif

// ---- math ---------------------------------------------------------------------------------
FT_DEVICE float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
FT_DEVICE float warp_max_xor(float x, int lane_mask)
{
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, lane_mask));
}
FT_DEVICE float warp_sum_xor(float x, int lane_mask)
{
    return x + __shfl_xor_sync(0xffffffffu, x, lane_mask);
}

// ---- shared memory and asynchronous copies -----------------------------------------------
FT_DEVICE unsigned smem_addr(const void *p)
{
    unsigned long long a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (unsigned)a;
}

// Two 16-bit elements (lo = lower address) to floats.
FT_DEVICE void unpack2(unsigned u, float &lo, float &hi)
{
#if DTYPE == FT_DTYPE_BF16
    lo = __uint_as_float(u << 16);
    hi = __uint_as_float(u & 0xffff0000u);
#else
    lo = half_bits_to_float((unsigned short)(u & 0xffffu));
    hi = half_bits_to_float((unsigned short)(u >> 16));
#endif
}

#if DTYPE != FT_DTYPE_F64
// Elements of a 16-byte piece of a row, the unit the tensor-core kernels copy rows in: 8 16-bit
// ones or 4 floats.
constexpr int FT_PIECE_ELEMS = 16 / (int)sizeof(elem_t);
// The piece at p (16-byte aligned) as floats.
FT_DEVICE void load_piece(const elem_t *p, float (&x)[FT_PIECE_ELEMS])
{
#if DTYPE == FT_DTYPE_F32
    const float4 v = *(const float4 *)p;
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
#else
    const uint4 v = *(const uint4 *)p;
    unpack2(v.x, x[0], x[1]);
    unpack2(v.y, x[2], x[3]);
    unpack2(v.z, x[4], x[5]);
    unpack2(v.w, x[6], x[7]);
#endif
}
// The piece at p (16-byte aligned) from the floats at x (16-byte aligned), each times scale.
FT_DEVICE void store_piece(elem_t *p, const float *x, float scale)
{
    const float4 a = *(const float4 *)x;
#if DTYPE == FT_DTYPE_F32
    *(float4 *)p = make_float4(a.x * scale, a.y * scale, a.z * scale, a.w * scale);
#else
    const float4 b = *(const float4 *)(x + 4);
    *(uint4 *)p = make_uint4(pack2(a.x * scale, a.y * scale), pack2(a.z * scale, a.w * scale),
                             pack2(b.x * scale, b.y * scale), pack2(b.z * scale, b.w * scale));
#endif
}
#endif

// Global offset of the (batch b, head h) slice of a [batch, heads, seq, dim] tensor whose
// strides (in elements) are s[0..2].
FT_DEVICE long long head_offset(const long long *s, int b, int h)
{
    return b * s[0] + h * s[1];
}

// ---- the sequence a block works on --------------------------------------------------------
// A dense batch's sequences all have the argument block's lengths and band, and the batch index
// places them through the strides. A variable-length one (VARLEN 1, ft_kernel_args.h) packs
// them: sequence b's lengths and first rows come from the prefix sums, its band from its own
// lengths. Every family takes its sizes, band and rows from here, so that VARLEN 0 compiles to
// what the argument block alone gave.
struct ft_seq {
    int seqlen_q, seqlen_k;   // this sequence's lengths
    int q0, k0;               // its first row in the packed Q/O and K/V tensors (0: dense)
    int lo, hi;               // its band (ft_mask.h; used with CAUSAL)
};
template <class Args> FT_DEVICE ft_seq seq_of(const Args &a, int b)
{
#if VARLEN
    ft_seq s;
    s.q0 = a.cu_seqlens_q[b];
    s.k0 = a.cu_seqlens_k[b];
    s.seqlen_q = a.cu_seqlens_q[b + 1] - s.q0;
    s.seqlen_k = a.cu_seqlens_k[b + 1] - s.k0;
    ft_mask_band(0, a.mask_bottom_right, a.mask_left, a.mask_right, s.seqlen_q, s.seqlen_k, &s.lo, &s.hi);
    return s;
#else
    return { a.seqlen_q, a.seqlen_k, 0, 0, a.mask_lo, a.mask_hi };
#endif
}

// Offset of row `row0` of (sequence b, head h) in a tensor of strides s (row0: the sequence's
// q0 or k0): a variable-length batch has no batch stride.
FT_DEVICE long long seq_offset(const long long *s, int b, int h, int row0)
{
#if VARLEN
    return h * s[1] + (long long)row0 * s[2];
#else
    return head_offset(s, b, h);
#endif
}

// Index of the first row of (sequence b, head h) in lse, delta and (times HEAD_DIM) dq_accum:
// [batch, heads, seqlen_q] dense, [heads, total_q] variable-length. bh is b * heads + h, the
// caller's: ptxas does not fold (b * heads + h) back into the bh that b and h were divided from,
// and spends instructions on it.
template <class Args> FT_DEVICE long long seq_row(const Args &a, const ft_seq &s, int b, int h, long long bh)
{
#if VARLEN
    return (long long)h * a.total_q + s.q0;
#else
    return bh * s.seqlen_q;   // the argument block's (seq_of)
#endif
}

// The batch coordinate of a copy-engine map (ft_kernel_args.h): a variable-length batch's
// maps have one, its rows placed by the sequence's q0 or k0.
FT_DEVICE int map_batch(int b)
{
    return VARLEN ? 0 : b;
}

// Grouped-query attention (ft_fwd_args / ft_bwd_args heads_k): the query heads per K/V head
// (kv_group: heads / heads_k consecutive ones share one) and the K/V head query head h reads
// (kv_head: h itself when heads_k = heads).
template <class Args> FT_DEVICE int kv_group(const Args &args)
{
    return args.heads / args.heads_k;
}
template <class Args> FT_DEVICE int kv_head(const Args &args, int h)
{
    return h / kv_group(args);
}
