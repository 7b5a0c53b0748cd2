// sm80.cuh: the sm_80+ instructions the mma.sync families use: cp.async copies, ldmatrix,
// mma.sync.m16n8k16 and its fragment conversions, TF32 products of split floats (m16n8k8),
// fp32 reductions to global memory, the one swizzle of 16-bit shared-memory tiles (with
// ldmatrix addressing over it), and the acquire/release pair of a semaphore in global memory
// that orders blocks, and named barriers.

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

// 4-byte global->shared copy (rows of L and delta, only 4-byte aligned); src_bytes 0 zero-fills.
FT_DEVICE void cp_async_4(unsigned dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(src_bytes));
}

// *p += a, p[1] += b in fp32, without a return value (p 8-byte aligned).
FT_DEVICE void red_add_f32x2(float *p, float a, float b)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(a) : "memory");
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p + 1), "f"(b) : "memory");
#endif
}

// ---- named barriers (sm_70+; the warp-specialized Hopper families and bwd_mma's slab pairs) ----
// A barrier among `threads` threads (a multiple of 32) of the block, by name (1..15; 0 is
// __syncthreads'), so a subset of the warps can meet while the others go on.
FT_DEVICE void named_barrier_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Arrives at named barrier `id` without waiting: with `threads` counting the waiters too, a
// group of warps lets another group, waiting there with bar.sync, go on.
FT_DEVICE void named_barrier_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// ---- tensor cores -------------------------------------------------------------------------
// ldmatrix moves 8x8 matrices of 16-bit elements: in f32 an 8x4 matrix of floats, each lane
// getting float (lane % 4) of row lane / 4, which is the TF32 m16n8k8 fragment's layout.
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

// Loads 4 bytes of a shared tile at a 32-bit shared address, as ldmatrix reads them: after the
// barrier that made the tile visible, and (no memory clobber) free to be scheduled among the
// products, unlike ld_shared_b32.
FT_DEVICE unsigned ld_shared_tile_b32(unsigned addr)
{
    unsigned x;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(addr));
    return x;
}

#if DTYPE == FT_DTYPE_F32
// ---- f32 on tensor cores: TF32 products ----------------------------------------------------
// A float x is split into a TF32 high part and the TF32 rounding of the remainder (both round
// to nearest, ties away, as cvt.rna; x - hi is exact in float): x = hi + lo to about 2^-22 of x. A product a b is then
// a_hi b_lo + a_lo b_hi + a_hi b_hi (the a_lo b_lo term, about 2^-22 of it, dropped), each on
// the tensor cores with fp32 accumulation: float32's accuracy (notes/fp32.md). With ALLOW_TF32
// one product a_hi b_hi: TF32's 2^-11, and lo is never computed.
struct tf32x2 {
    unsigned hi, lo;
};
// x rounded to TF32 as cvt.rna.tf32.f32 rounds a finite float: half of the 13 dropped bits' range
// added to the magnitude's bits, then those bits cleared (a carry moves the exponent, as it
// should). Two integer instructions where cvt.rna took four with its checks for NaN and
// infinity, which no finite input needs (ptxas on sm_90: the split was most of the kernel's
// instructions). Attention's operands are finite; a NaN or infinity in them is lost anyway.
FT_DEVICE unsigned tf32_round_bits(unsigned x)
{
    return (x + 0x1000u) & 0xffffe000u;
}
FT_DEVICE tf32x2 tf32_split_bits(unsigned x)
{
    const unsigned hi = tf32_round_bits(x);
    return { hi, ALLOW_TF32 ? 0u : tf32_round_bits(__float_as_uint(__uint_as_float(x) - __uint_as_float(hi))) };
}
FT_DEVICE tf32x2 tf32_split(float x)
{
    return tf32_split_bits(__float_as_uint(x));
}
// D (16x8, f32) += A (16x8, row) * B (8x8, col), TF32 operands. Fragments per the PTX ISA's
// m16n8k8: lane = 4*group + quad; a0..a3 hold (row, k) = (g, q) (g+8, q) (g, q+4) (g+8, q+4);
// b0, b1 hold (k, col) = (q, g) (q+4, g); C/D as m16n8k16's.
FT_DEVICE void mma_1688_tf32(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                             unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// D += A B from split operands: the two small products first, then the large one (one product
// with ALLOW_TF32).
FT_DEVICE void mma_tf32(float (&d)[4], const tf32x2 (&a)[4], tf32x2 b0, tf32x2 b1)
{
    if (!ALLOW_TF32) {
        mma_1688_tf32(d, a[0].lo, a[1].lo, a[2].lo, a[3].lo, b0.hi, b1.hi);
        mma_1688_tf32(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.lo, b1.lo);
    }
    mma_1688_tf32(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.hi, b1.hi);
}
// mma_tf32 with the two small products in accumulators of their own, started at zero and added
// to d with one rounded add: d's running sum takes one truncating accumulation a k-step, not
// three, which halved the backward's errors against float64 (dQ at N 4096: 1.55e-6 to 6.9e-7;
// notes/fp32.md) for about 10 % of its speed. The backward's products (mma_abt, mma_c_kn).
FT_DEVICE void mma_tf32_apart(float (&d)[4], const tf32x2 (&a)[4], tf32x2 b0, tf32x2 b1)
{
    if (ALLOW_TF32) {
        mma_1688_tf32(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.hi, b1.hi);
        return;
    }
    float t[4] = { 0.f, 0.f, 0.f, 0.f };
    mma_1688_tf32(t, a[0].lo, a[1].lo, a[2].lo, a[3].lo, b0.hi, b1.hi);
    mma_1688_tf32(t, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.lo, b1.lo);
    mma_1688_tf32(d, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.hi, b1.hi);
#pragma unroll
    for (int e = 0; e < 4; e++)
        d[e] += t[e];
}
#endif

#if DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16
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


// A fragment (16 rows x 16 k) from four C tiles: c_lo covers k 0-7, c_hi k 8-15.
FT_DEVICE void c_to_a(unsigned (&a)[4], const float (&c_lo)[4], const float (&c_hi)[4])
{
    a[0] = pack2(c_lo[0], c_lo[1]);   // row g,   k 2qd..+1
    a[1] = pack2(c_lo[2], c_lo[3]);   // row g+8, k 2qd..+1
    a[2] = pack2(c_hi[0], c_hi[1]);   // row g,   k 8+2qd..+1
    a[3] = pack2(c_hi[2], c_hi[3]);   // row g+8, k 8+2qd..+1
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

// Byte offset of (row, col) in a swizzled COLS-column 16-bit tile.
template <int COLS> FT_DEVICE unsigned toff(int row, int col)
{
    return 2u * (unsigned)swz<COLS>(row, col);
}

// Keeps the compiler from hoisting address arithmetic on x out of the main loop: hoisted, every
// unrolled ldmatrix address became a live register and the dK/dV kernel spilled.
FT_DEVICE unsigned opaque(unsigned x)
{
    asm volatile("" : "+r"(x));
    return x;
}

// gridDim.x read where it is used: the compiler hoists a plain read out of a loop, and a producer
// warp of 24 registers (bwd_wgmma's persistent units) then spilled it.
FT_DEVICE int grid_blocks_here()
{
    unsigned n;
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(n));
    return (int)n;
}

// One lane's ldmatrix row address in a swizzled COLS-column tile, for 16x16 blocks at
// compile-time (r0, c0), r0 a multiple of 8 and c0 of 16. The lane reads row lrow + r0 and
// column lcol + c0; swz's XOR then depends on c0 only through (c0/16) mod SW/2, so SW/2
// offsets per lane serve every block. A runtime row base (a multiple of 8 rows) and column base
// (a multiple of 8*SW columns) go into `base`; other column bases into lcol.
template <int COLS> struct lm_tile {
    static constexpr int SW = (COLS % 64 == 0) ? 8 : 4;   // as in swz
    unsigned base;
    unsigned off[SW / 2];
    __device__ __forceinline__ lm_tile(unsigned tile_base, int lrow, int lcol)
    {
        base = tile_base;
#pragma unroll
        for (int p = 0; p < SW / 2; p++)
            off[p] = toff<COLS>(lrow, lcol + 16 * p);
    }
    __device__ __forceinline__ unsigned at(int r0, int c0) const
    {
        return (opaque(base) + off[(c0 / 16) % (SW / 2)]) + 2u * (unsigned)(r0 * COLS + (c0 / (8 * SW)) * 8 * SW);
    }
};
// The lm_tile for a sub-block of a tile whose top-left is (row0, col0), row0 a multiple of 8:
// col0 goes into the base when the swizzle allows, else into the lane's column.
template <int COLS>
FT_DEVICE lm_tile<COLS> lm_sub(unsigned tile_base, int row0, int col0, int lrow, int lcol, bool col0_aligned)
{
    return col0_aligned ? lm_tile<COLS>(tile_base + 2u * (unsigned)(row0 * COLS + col0), lrow, lcol)
                        : lm_tile<COLS>(tile_base + 2u * (unsigned)(row0 * COLS), lrow, lcol + col0);
}
#define LM_ALIGNED(COLS, STEP) ((STEP) % (8 * lm_tile<COLS>::SW) == 0)   // column bases k*STEP fold into the base

// ldmatrix lane -> row address patterns for a 16x16 block at (r0, c0) of a row-major tile:
//  LM_ROWS16: lane l gives row r0 + (l & 15), col c0 + 8*(l >> 4). As an A operand (non-trans)
//   the four 8x8 matrices are (rows 0-7,k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) = a0..a3.
//   As a B operand stored [k][n] (.trans): (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15),
//   (k 8-15, n 8-15) = b0,b1 of n-tile 0 then b0,b1 of n-tile 1.
//  LM_ROWS8: lane l gives row r0 + (l & 7) + 8*(l >> 4), col c0 + 8*((l >> 3) & 1). As a B operand
//   stored [n][k] (non-trans): (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
//   = b0,b1 of n-tile 0 then of n-tile 1. As an A operand stored [k][m] (.trans):
//   (k 0-7, m 0-7) = a0, (k 0-7, m 8-15) = a1, (k 8-15, m 0-7) = a2, (k 8-15, m 8-15) = a3.

#if DTYPE != FT_DTYPE_F64
// An mma_abt operand register as its products take it, from the 32 bits ldmatrix gave: a 16-bit
// pair as it is, or in f32 one float split into TF32 parts; and the product of such operands
// (f32: three TF32 products, the small two apart, mma_tf32_apart).
#if DTYPE == FT_DTYPE_F32
typedef tf32x2 abt_frag;
FT_DEVICE abt_frag abt_operand(unsigned x)
{
    return tf32_split_bits(x);
}
FT_DEVICE void abt_mma(float (&d)[4], const abt_frag (&a)[4], abt_frag b0, abt_frag b1)
{
    mma_tf32_apart(d, a, b0, b1);
}
// An operand split in shared memory beforehand (bwd_mma's SPLIT_SMEM): its high part and its
// remainder as read (0 where no remainder plane was read: mma_abt's B_LO 0, ALLOW_TF32).
FT_DEVICE abt_frag abt_parts(unsigned hi, unsigned lo)
{
    return { hi, lo };
}
#else
typedef unsigned abt_frag;
FT_DEVICE abt_frag abt_operand(unsigned x)
{
    return x;
}
FT_DEVICE void abt_mma(float (&d)[4], const abt_frag (&a)[4], abt_frag b0, abt_frag b1)
{
    mma_16816(d, a, b0, b1);
}
FT_DEVICE abt_frag abt_parts(unsigned hi, unsigned)
{
    return hi;
}
#endif

// acc (ROWS x COLS fp32 C tiles) = A B^T, A's ROWS rows and B's COLS rows (from b_row0, a
// compile-time multiple of 8 once unrolled) being rows of swizzled DIM-column tiles read with
// ldmatrix (A in the LM_ROWS16 lane pattern, B in LM_ROWS8). Past 128 columns the reduction runs
// as a loop over KD-column groups: fully unrolled, ptxas preloads fragments for the whole head
// dim (bwd_mma at head dim 256: 248-250 registers against 224-246 grouped). f32 tiles are 16-bit
// tiles of twice the columns (DIM and KD in 16-bit columns): ldmatrix's 8x8 16-bit matrices are
// the TF32 m16n8k8 fragments' 8x4 float ones in the same lane patterns (LM_ROWS16: a0..a3;
// LM_ROWS8: b0, b1 of two n-tiles), so a 16-column step is one 8-float k-step, each fragment
// split once. B_LO: -1, B is split as read; else B's tile holds TF32 high parts (f32, split
// beforehand: abt_parts) and, unless ALLOW_TF32, their remainders B_LO bytes on.
template <int ROWS, int COLS, int DIM, int KD, int B_LO = -1>
FT_DEVICE void mma_abt(float (&acc)[ROWS / 16][COLS / 8][4], const lm_tile<DIM> &a, const lm_tile<DIM> &b,
                       int b_row0)
{
#pragma unroll
    for (int i = 0; i < ROWS / 16; i++)
#pragma unroll
        for (int j = 0; j < COLS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.f;
#pragma unroll 1
    for (int kg = 0; kg < DIM / KD; kg++) {   // a runtime loop past head dim 128
        const unsigned kgo = 2u * kg * KD;     // byte offset of this group of columns
#pragma unroll
        for (int kd = 0; kd < KD / 16; kd++) {
            abt_frag af[ROWS / 16][4];
#pragma unroll
            for (int i = 0; i < ROWS / 16; i++) {
                unsigned r0, r1, r2, r3;
                ldmatrix_x4(r0, r1, r2, r3, a.at(16 * i, 16 * kd) + kgo);
                af[i][0] = abt_operand(r0), af[i][1] = abt_operand(r1);
                af[i][2] = abt_operand(r2), af[i][3] = abt_operand(r3);
            }
#pragma unroll
            for (int j = 0; j < COLS / 16; j++) {
                unsigned b0, b1, b2, b3;
                const unsigned at = b.at(b_row0 + 16 * j, 16 * kd) + kgo;
                ldmatrix_x4(b0, b1, b2, b3, at);
                abt_frag s0, s1, s2, s3;
                if constexpr (B_LO < 0) {
                    s0 = abt_operand(b0), s1 = abt_operand(b1), s2 = abt_operand(b2), s3 = abt_operand(b3);
                } else {
                    unsigned l0 = 0, l1 = 0, l2 = 0, l3 = 0;
                    if (B_LO > 0)
                        ldmatrix_x4(l0, l1, l2, l3, at + B_LO);
                    s0 = abt_parts(b0, l0), s1 = abt_parts(b1, l1), s2 = abt_parts(b2, l2), s3 = abt_parts(b3, l3);
                }
#pragma unroll
                for (int i = 0; i < ROWS / 16; i++) {
                    abt_mma(acc[i][2 * j], af[i], s0, s1);
                    abt_mma(acc[i][2 * j + 1], af[i], s2, s3);
                }
            }
        }
    }
}
#endif

#if DTYPE == FT_DTYPE_F32
// The A fragment of one 8-wide k-step from one C tile (rows g, g + 8; columns 2q, 2q + 1), split:
// the step's columns taken in the order 0, 2, 4, 6, 1, 3, 5, 7 (a0 = column 2q, a2 = 2q + 1),
// which B's rows must follow (kn_lanes).
FT_DEVICE void c_to_a_tf32(tf32x2 (&a)[4], const float (&c)[4])
{
    a[0] = tf32_split(c[0]);
    a[1] = tf32_split(c[2]);
    a[2] = tf32_split(c[1]);
    a[3] = tf32_split(c[3]);
}

// A B operand stored [k][n] in a swizzled f32 tile of COLS 16-bit columns (COLS a multiple of
// 64), read a float a lane in c_to_a_tf32's k order: b0 = (k 2q, n g), b1 = (k 2q + 1, n g) of
// the 8 x 8 block at (8 ks, 8 ns) from (row0, col0), row0 a multiple of 8 and col0 (floats) of
// 32, which then fold into the lanes' two addresses (swz_step); ks and ns compile-time.
// Conflict-free: rows 2q of one 8-float column block land in distinct 16-byte chunks.
// LO: -1, the floats are split as read; else the tile holds TF32 high parts (split beforehand,
// bwd_mma's SPLIT_SMEM) and, unless ALLOW_TF32 (LO 0), their remainders LO bytes on.
template <int COLS, int LO = -1> struct kn_lanes {
    unsigned r0, r1;   // the lane's addresses of (row0 + 2q, col0 + g) and (row0 + 2q + 1, col0 + g)
    __device__ __forceinline__ kn_lanes(unsigned tile, int row0, int col0, int g, int q)
    {
        static_assert(COLS % 64 == 0, "kn_lanes: whole swizzle groups a row");
        r0 = tile + toff<COLS>(row0 + 2 * q, 2 * (col0 + g));
        r1 = tile + toff<COLS>(row0 + 2 * q + 1, 2 * (col0 + g));
    }
    __device__ __forceinline__ void at(int ks, int ns, tf32x2 &b0, tf32x2 &b1) const
    {
        const unsigned a0 = swz_step<COLS>(opaque(r0), 2 * ns, 8 * ks), a1 = swz_step<COLS>(opaque(r1), 2 * ns, 8 * ks);
        if constexpr (LO < 0) {
            b0 = tf32_split_bits(ld_shared_tile_b32(a0));
            b1 = tf32_split_bits(ld_shared_tile_b32(a1));
        } else {
            b0 = { ld_shared_tile_b32(a0), LO > 0 ? ld_shared_tile_b32(a0 + LO) : 0u };
            b1 = { ld_shared_tile_b32(a1), LO > 0 ? ld_shared_tile_b32(a1 + LO) : 0u };
        }
    }
};

// acc (16 ROWS16 rows x 8 N8 columns) += A B over STEPS 8-wide k-steps: A the C tiles c[i][kk]
// (c_to_a_tf32), B stored [k][n] read by kn_lanes from k-step ks0 on (compile-time once unrolled).
template <int STEPS, int N8, int ROWS16, int CT, int AT, int BC, int LO>
FT_DEVICE void mma_c_kn(float (&acc)[ROWS16][AT][4], const float (&c)[ROWS16][CT][4], const kn_lanes<BC, LO> &b,
                        int ks0)
{
#pragma unroll
    for (int kk = 0; kk < STEPS; kk++) {
        tf32x2 a[ROWS16][4];
#pragma unroll
        for (int i = 0; i < ROWS16; i++)
            c_to_a_tf32(a[i], c[i][kk]);
#pragma unroll
        for (int jd = 0; jd < N8; jd++) {
            tf32x2 b0, b1;
            b.at(ks0 + kk, jd, b0, b1);
#pragma unroll
            for (int i = 0; i < ROWS16; i++)
                mma_tf32_apart(acc[i][jd], a[i], b0, b1);
        }
    }
}
#endif

// Stores 16 bytes to shared memory at a 32-bit shared address (16-byte aligned): a constant
// offset from one base then folds into the instruction, where a generic pointer may not.
FT_DEVICE void st_shared_f32x4(unsigned addr, float a, float b, float c, float d)
{
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

// Stores 4 bytes to shared memory at a 32-bit shared address (4-byte aligned).
FT_DEVICE void st_shared_b32(unsigned addr, unsigned x)
{
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(x) : "memory");
}

// Stores 8 bytes (two 32-bit words) to shared memory at a 32-bit shared address (8-byte aligned).
FT_DEVICE void st_shared_b32x2(unsigned addr, unsigned x, unsigned y)
{
    asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(addr), "r"(x), "r"(y) : "memory");
}

// Loads 4 bytes from shared memory at a 32-bit shared address (4-byte aligned).
FT_DEVICE unsigned ld_shared_b32(unsigned addr)
{
    unsigned x;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(addr) : "memory");
    return x;
}

// Loads 16 bytes from shared memory at a 32-bit shared address (16-byte aligned).
FT_DEVICE float4 ld_shared_f32x4(unsigned addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
    return v;
}

#if DTYPE == FT_DTYPE_F32
// Four floats split into TF32 parts (tf32_split): their high parts stored at hi, and with three
// products (not ALLOW_TF32) their remainders at lo, 16 bytes each.
FT_DEVICE void st_split4(unsigned hi, unsigned lo, float a, float b, float c, float d)
{
    const tf32x2 x = tf32_split(a), y = tf32_split(b), z = tf32_split(c), w = tf32_split(d);
    st_shared_f32x4(hi, __uint_as_float(x.hi), __uint_as_float(y.hi), __uint_as_float(z.hi), __uint_as_float(w.hi));
    if (!ALLOW_TF32)
        st_shared_f32x4(lo, __uint_as_float(x.lo), __uint_as_float(y.lo), __uint_as_float(z.lo), __uint_as_float(w.lo));
}
// ---- f32 in bfloat16 parts (BF16_PARTS) ----------------------------------------------------
// A float is exactly three bfloat16 parts: its rounding to bfloat16 (nearest, ties to even), the
// rounding of the remainder, and the remainder of that (each subtraction exact in float). Two
// floats' parts packed in pairs as 16-bit operands take them (a in bits 0-15, b in 16-31;
// bf16x2_rn in common/ft_types.cuh).
FT_DEVICE void bf16_parts2(float a, float b, unsigned &hi, unsigned &mid, unsigned &lo)
{
    hi = bf16x2_rn(a, b);
    a -= __uint_as_float(hi << 16);
    b -= __uint_as_float(hi & 0xffff0000u);
    mid = bf16x2_rn(a, b);
    a -= __uint_as_float(mid << 16);
    b -= __uint_as_float(mid & 0xffff0000u);
    lo = bf16x2_rn(a, b);
}
// Rows row0.. row0 + ROWS - 1 of a tile's GROUPS groups of three 128-byte-swizzled panels (PANEL
// bytes each, a group's 64 columns), split in place by THREADS threads (t: this one's index):
// the row's 64 floats, landed in the group's first two panels (32 a panel), become its three
// bfloat16 parts, 64 of each in the same row of the group's three panels (high, middle, low).
// A half-warp a row: each lane reads one 16-byte chunk (4 floats) and writes 8 bytes of each
// part; a quarter-warp's reads meet 8 distinct chunks of one row, and a half-warp's writes one
// whole row. A row's bytes are its own half-warp's alone, and the half-warp reads all of them
// before any is overwritten (the __syncwarp; both halves of a warp go round together). Two rows
// a lane at a time (unit u and the one a round later): the split is a chain of dependent
// conversions and subtractions, and a second chain beside it fills the first one's waits.
struct bf16_parts4 {
    unsigned hi[2], mid[2], lo[2];   // four floats' parts, two to a word
    FT_DEVICE explicit bf16_parts4(const float4 &x)
    {
        bf16_parts2(x.x, x.y, hi[0], mid[0], lo[0]);
        bf16_parts2(x.z, x.w, hi[1], mid[1], lo[1]);
    }
};
struct split_row {
    unsigned row;   // the row's place in its group's first panel
    int r, c;       // its row index (the swizzle's), the lane's chunk (c / 8: which landed panel)
    FT_DEVICE float4 load(unsigned panel) const
    {
        return ld_shared_f32x4(row + (c / 8) * panel + (((c % 8) ^ (r % 8)) << 4));
    }
    FT_DEVICE void store(unsigned panel, const bf16_parts4 &p) const
    {
        const unsigned at = row + (((c / 2) ^ (r % 8)) << 4) + (c % 2) * 8;
        st_shared_b32x2(at, p.hi[0], p.hi[1]);
        st_shared_b32x2(at + panel, p.mid[0], p.mid[1]);
        st_shared_b32x2(at + 2 * panel, p.lo[0], p.lo[1]);
    }
};
template <int GROUPS, int PANEL, int ROWS, int THREADS>
FT_DEVICE void split_rows_bf16(unsigned tile, int row0, int t)
{
    static_assert(THREADS % 32 == 0 && ROWS % 2 == 0, "split_rows_bf16: a warp's two rows both in range or both not");
    constexpr int UNITS = GROUPS * ROWS, ROUND = THREADS / 16;
    const auto unit = [&](int u) {
        const int r = row0 + u % ROWS;
        return split_row{ tile + (u / ROWS) * 3 * PANEL + r * 128, r, t % 16 };
    };
#pragma unroll 1
    for (int u = t / 16; u < UNITS; u += 2 * ROUND) {
        const bool second = u + ROUND < UNITS;   // (the same for the warp's two halves)
        const split_row a = unit(u), b = unit(u + ROUND);
        const float4 xa = a.load(PANEL), xb = second ? b.load(PANEL) : xa;
        const bf16_parts4 pa(xa), pb(xb);   // (both always: the two chains interleave)
        __syncwarp();   // both rows read before either is overwritten
        a.store(PANEL, pa);
        if (second)
            b.store(PANEL, pb);
    }
}

// BYTES of floats at src split (st_split4) into their high parts at hi and their remainders
// lo_offset bytes past those, 16 bytes a piece, by THREADS threads (t: this one's index;
// consecutive threads on consecutive pieces). hi may be src: each piece is read before it is
// written, by the thread that writes it.
template <int BYTES, int THREADS> FT_DEVICE void split_pieces(unsigned src, unsigned hi, unsigned lo_offset, int t)
{
#pragma unroll 4
    for (int i = t * 16; i < BYTES; i += THREADS * 16) {
        const float4 x = ld_shared_f32x4(src + i);
        st_split4(hi + i, hi + lo_offset + i, x.x, x.y, x.z, x.w);
    }
}
#endif

// A semaphore in global memory between blocks: spin until *sem holds `value`, then see every
// write the block that stored it made before (acquire, GPU scope). The spin reads relaxed, and
// one acquiring read follows: an acquire invalidates the L1 each time, which a spin need not.
FT_DEVICE void sem_wait_value(const int *sem, int value)
{
    int now;
    do
        asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(now) : "l"(sem) : "memory");
    while (now != value);
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(now) : "l"(sem) : "memory");
}
// Until *sem holds at least `value`, then acquire as sem_wait_value does; one acquiring read
// where it already does (the common case: one round trip), else a relaxed spin first.
FT_DEVICE void sem_wait_at_least(const int *sem, int value)
{
    int now;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(now) : "l"(sem) : "memory");
    while (now < value) {
        do
            asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(now) : "l"(sem) : "memory");
        while (now < value);
        asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(now) : "l"(sem) : "memory");
    }
}
// Adds 1 to *sem and returns what it held before: a ticket, the first one 0 (relaxed: whoever
// needs what the first wrote waits for it with sem_wait_at_least).
FT_DEVICE int sem_take(int *sem)
{
    int old;
    asm volatile("atom.relaxed.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(sem) : "memory");
    return old;
}
// Adds `value` to *sem after every write of this thread so far (release, GPU scope).
FT_DEVICE void sem_release_add(int *sem, int value)
{
    asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(sem), "r"(value) : "memory");
}
// Stores `value` after every write of this thread so far, and of the block's threads that
// fenced (__threadfence) before a block barrier this thread passed since (release, GPU scope).
FT_DEVICE void sem_release_value(int *sem, int value)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(sem), "r"(value) : "memory");
}
