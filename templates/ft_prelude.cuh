// ft_prelude.cuh: what every generated kernel shares. The element and accumulator types for
// DTYPE, conversions, and thin wrappers over the PTX instructions the templates use
// (mma.sync, ldmatrix, cp.async, ex2). Written against PTX only, so NVRTC needs no headers.
// Requires sm_80 or newer. Expects DTYPE (and the other parameters) #defined before it.

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

// Two floats into one 32-bit register of 16-bit elements: lo in bits 0-15, hi in 16-31,
// the order mma.sync expects for consecutive columns.
FT_DEVICE unsigned pack2(float lo, float hi)
{
    unsigned r;
#if DTYPE == FT_DTYPE_BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

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
// 16-byte global->shared copy; src_bytes < 16 zero-fills the rest (0 for rows out of range).
FT_DEVICE void cp_async_16(unsigned dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes));
}
FT_DEVICE void cp_async_commit()
{
    asm volatile("cp.async.commit_group;");
}
template <int N> FT_DEVICE void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
}

// ---- tensor cores (f16/bf16 only) --------------------------------------------------------
#if DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16
FT_DEVICE void ldmatrix_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
FT_DEVICE void ldmatrix_x4_trans(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
FT_DEVICE void ldmatrix_x2(unsigned &r0, unsigned &r1, unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
}
FT_DEVICE void ldmatrix_x2_trans(unsigned &r0, unsigned &r1, unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
}
// D (16x8, f32) += A (16x16, row) * B (16x8, col). Fragment layout per PTX ISA m16n8k16:
// lane = 4*group + quad; A regs a0..a3 hold rows {group, group+8} x cols {2quad, 2quad+1,
// +8}; B regs b0,b1 hold k {2quad,2quad+1, +8} of column group; C/D c0..c3 hold
// rows {group, group+8} x cols {2quad, 2quad+1}.
FT_DEVICE void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
#if DTYPE == FT_DTYPE_BF16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#endif
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- forward steps on a 16-row accumulator tile (fwd_mma, fwd_wgmma) ---------------------
// Lane 4g+q holds, for each 8-column tile j, elements s[4j+e]: row g + 8*(e/2), column
// 8j + 2q + e%2 (the m16n8 C layout, and a warp's share of a wgmma 64xN accumulator). A row's
// columns are spread over the 4 lanes of a quad. `half` picks row g (0) or g+8 (1).

// Sets to -inf the scores of keys >= seqlen_k and, when CAUSAL, of keys past the row's
// diagonal; n0: the tile's first key, row0: the query row of g.
template <int TILES> FT_DEVICE void mask_scores(float *s, int n0, int seqlen_k, int row0, int quad)
{
#pragma unroll
    for (int j = 0; j < TILES; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int key = n0 + j * 8 + quad * 2 + (e & 1);
            bool masked = key >= seqlen_k;
#if CAUSAL
            masked = masked || key > row0 + (e >> 1) * 8;
#endif
            if (masked)
                s[j * 4 + e] = -FT_INF_F;
        }
}

// One online-softmax step for one row: S (TILES 8-column tiles, raw scores) becomes
// P = exp2(S*scale_log2 - max), the running max and sum move on, and the row's O accumulators
// (O_TILES tiles) are rescaled by exp2(old max - new max).
template <int TILES, int O_TILES>
FT_DEVICE void softmax_step(float *s, float *o, float &row_max, float &row_sum, int half, float scale_log2)
{
    float mx = row_max;
#pragma unroll
    for (int j = 0; j < TILES; j++)
        mx = fmaxf(mx, fmaxf(s[j * 4 + half * 2], s[j * 4 + half * 2 + 1]) * scale_log2);
    mx = warp_max_xor(warp_max_xor(mx, 1), 2);
    // A row with every key so far masked keeps max -inf; use 0 so exp2 gives 0, not NaN.
    const float base = mx == -FT_INF_F ? 0.f : mx;
    const float correction = fast_exp2(row_max - base);
    row_max = mx;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < TILES; j++) {
        const float p0 = fast_exp2(s[j * 4 + half * 2] * scale_log2 - base);
        const float p1 = fast_exp2(s[j * 4 + half * 2 + 1] * scale_log2 - base);
        s[j * 4 + half * 2] = p0;
        s[j * 4 + half * 2 + 1] = p1;
        sum += p0 + p1;
    }
    row_sum = row_sum * correction + sum;
#pragma unroll
    for (int j = 0; j < O_TILES; j++) {
        o[j * 4 + half * 2] *= correction;
        o[j * 4 + half * 2 + 1] *= correction;
    }
}

// Epilogue for one row: O / rowsum in the input dtype at dst (the row's first element), and
// from lane q = 0, L = ln(sum) + max (natural log) at *lse. row_sum is this lane's partial sum;
// every lane of the quad must call this (it shuffles) before any of them skips its row.
template <int O_TILES>
FT_DEVICE void store_row(elem_t *dst, float *lse, const float *o, float row_max, float row_sum, int half,
                         int quad, bool in_range)
{
    const float sum = warp_sum_xor(warp_sum_xor(row_sum, 1), 2);
    if (!in_range)
        return;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
    for (int j = 0; j < O_TILES; j++)
        *(unsigned *)(dst + j * 8 + quad * 2) = pack2(o[j * 4 + half * 2] * inv, o[j * 4 + half * 2 + 1] * inv);
    if (quad == 0)
        *lse = (row_max + __log2f(sum)) * (float)FT_LN2;
}
#endif

// Swizzled shared-memory tile of 16-bit elements with COLS columns (a multiple of 32): the
// 16-byte chunk c of row r moves to c ^ (r mod SW) within its group of SW chunks (SW = 8 when
// COLS is a multiple of 64, else 4), so ldmatrix's eight row addresses and cp.async's stores
// spread over the banks without padding.
template <int COLS> FT_DEVICE int swz(int row, int col)
{
    constexpr int SW = (COLS % 64 == 0) ? 8 : 4;
    static_assert(COLS % 32 == 0, "swizzled tiles need a multiple of 32 columns");
    const int chunk = col >> 3;
    const int moved = (chunk & ~(SW - 1)) | ((chunk ^ row) & (SW - 1));
    return row * COLS + (moved << 3) + (col & 7);
}

// Address of a swizzled tile element relative to a lane's precomputed address of (row0, col0),
// for a compile-time step of chunk_step 16-byte chunks and row_step rows (row_step a multiple
// of 8, chunk_step not overlapping the bits of col0's chunk). Works because a row's chunk bits
// sit at address bits 4.. when the tile starts 128-byte aligned: the swizzle becomes one XOR,
// and the compiler keeps one address per lane instead of one per fragment.
template <int COLS> FT_DEVICE unsigned swz_step(unsigned lane_addr, int chunk_step, int row_step)
{
    constexpr int SW = (COLS % 64 == 0) ? 8 : 4;
    return (lane_addr ^ ((chunk_step & (SW - 1)) << 4)) + ((chunk_step & ~(SW - 1)) << 4) + row_step * COLS * 2;
}
