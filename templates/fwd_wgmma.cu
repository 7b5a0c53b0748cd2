// fwd_wgmma.cu: FlashAttention forward on Hopper's warpgroup tensor cores (f16/bf16,
// wgmma.mma_async, sm_90a only). Each warpgroup (4 warps, 128 threads) owns 64 query rows.
// Q and the streamed K/V tiles sit in shared memory in the layout wgmma reads directly
// (128-byte swizzled panels), so no ldmatrix is needed: S = Q K^T takes both operands from
// shared memory, and O += P V takes P from the S accumulators in registers (the accumulator
// layout of a 64xN tile is the register A layout of the next product) and V transposed from
// shared memory. The online softmax is the one of fwd_mma, in registers.

// ---- traits: tunables come from the generator's #defines --------------------------------
#define NUM_THREADS (NUM_WARPS * 32)
#define NUM_WG (NUM_WARPS / 4)                   // warpgroups, 64 query rows each
#define S_REGS (BLOCK_N / 2)                     // fp32 S accumulators per thread (64 x BLOCK_N / 128)
#define O_REGS (HEAD_DIM_V / 2)                  // fp32 O accumulators per thread
#define P_STEPS (BLOCK_N / 16)                   // k-steps of P V
#define QK_STEPS (HEAD_DIM / 16)                 // k-steps of Q K^T
// Tiles are stored as panels of 64 columns: row r of a panel is 128 bytes at r*128, its
// 16-byte chunk c at (c ^ r%8)*16 (wgmma's 128-byte swizzle). Panels follow each other.
#define Q_BYTES (BLOCK_M * HEAD_DIM * 2)
#define K_BYTES (BLOCK_N * HEAD_DIM * 2)
#define V_BYTES (BLOCK_N * HEAD_DIM_V * 2)
#define STAGE_BYTES (K_BYTES + V_BYTES)
// Must equal generator/family_fwd_wgmma.c's smem_fwd(); 1024 bytes of slack let the kernel
// align the tiles to 1024 (the swizzle is a function of address bits 4-9).
#define SMEM_BYTES (1024 + Q_BYTES + NUM_STAGES * STAGE_BYTES)

static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16, "DTYPE: fwd_wgmma takes f16 or bf16");
static_assert(NUM_WARPS % 4 == 0 && BLOCK_M == 16 * NUM_WARPS, "BLOCK_M must be 64 per warpgroup");
static_assert(BLOCK_N == 64 || BLOCK_N == 128, "BLOCK_N must be 64 or 128");
static_assert(HEAD_DIM % 64 == 0, "HEAD_DIM must be a multiple of 64");
static_assert(HEAD_DIM_V == 64 || HEAD_DIM_V == 128, "HEAD_DIM_V must be 64 or 128");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES must be 1..4");

// ---- wgmma wrappers ----------------------------------------------------------------------
#if DTYPE == FT_DTYPE_BF16
#define FT_WG_TYPES ".f32.bf16.bf16"
#else
#define FT_WG_TYPES ".f32.f16.f16"
#endif
#define FT_WG_ACC_32 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define FT_WG_ACC_64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define FT_ACC8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                      "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define FT_ACC16(d, i) FT_ACC8(d, i), FT_ACC8(d, i + 8)
#define FT_ACC32(d, i) FT_ACC16(d, i), FT_ACC16(d, i + 16)
#define FT_ACC64(d, i) FT_ACC32(d, i), FT_ACC32(d, i + 32)

// A shared-memory matrix descriptor: start address, leading and stride byte offsets, 128-byte
// swizzle (mode 1 in bits 62-63). Addresses and offsets are stored divided by 16.
FT_DEVICE unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

// D (64xN, f32) (+)= A (64x16, shared, K-major) * B (16xN, shared; K-major, or N-major when
// TRANS_B). accumulate = 0 overwrites D. The operand numbers after the R accumulators are
// passed as literals (OA, OB: descriptors; OF: the accumulate flag; OT: TRANS_B).
template <int N, int TRANS_B> struct wg_ss;
template <int N, int TRANS_B> struct wg_rs;
#define FT_WG_SS(N, R, LIST, ACC, OA, OB, OF, OT)                                                \
    template <int TRANS_B> struct wg_ss<N, TRANS_B> {                                           \
        static FT_DEVICE void run(float (&d)[R], unsigned long long a, unsigned long long b,     \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                            \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16" FT_WG_TYPES " " LIST ", "  \
                         OA ", " OB ", p, 1, 1, 0, " OT "; }"                                     \
                         : ACC(d, 0) : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B));          \
        }                                                                                        \
    };
// The same with A (64x16) from registers, in the layout of a 64x16 accumulator tile packed
// to 16-bit pairs: a[0] row g cols 2q, 2q+1; a[1] row g+8; a[2] cols +8; a[3] both (g: lane/4
// plus 16 per warp, q: lane%4). OA0..OA3: A registers; OB, OF, OT as above.
#define FT_WG_RS(N, R, LIST, ACC, OA0, OA1, OA2, OA3, OB, OF, OT)                                \
    template <int TRANS_B> struct wg_rs<N, TRANS_B> {                                           \
        static FT_DEVICE void run(float (&d)[R], const unsigned (&a)[4], unsigned long long b,   \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                            \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16" FT_WG_TYPES " " LIST ", {"  \
                         OA0 "," OA1 "," OA2 "," OA3 "}, " OB ", p, 1, 1, " OT "; }"              \
                         : ACC(d, 0)                                                              \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate),   \
                           "n"(TRANS_B));                                                         \
        }                                                                                        \
    };
FT_WG_SS(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34", "%35")
FT_WG_SS(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66", "%67")
FT_WG_RS(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34", "%35", "%36", "%37", "%38")
FT_WG_RS(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66", "%67", "%68", "%69", "%70")

FT_DEVICE void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
FT_DEVICE void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
FT_DEVICE void wg_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// The compiler sees an accumulator as written when the wgmma is issued, not when it lands:
// pin each register behind the wait so no read of it moves above the wait.
template <int R> FT_DEVICE void wg_pin(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}
// cp.async writes through the generic proxy; wgmma reads through the async proxy.
FT_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Copies a ROWS x COLS tile (row stride `stride` elements, `valid` rows in range) into the
// panel layout with 16-byte cp.async; rows past `valid` are zero-filled.
template <int ROWS, int COLS, bool EVEN>
FT_DEVICE void load_panels(unsigned smem, const elem_t *gmem, long long stride, int valid)
{
    constexpr int CHUNKS = COLS / 8;
#pragma unroll
    for (int it = 0; it < (ROWS * CHUNKS + NUM_THREADS - 1) / NUM_THREADS; it++) {
        const int i = it * NUM_THREADS + threadIdx.x;
        if ((ROWS * CHUNKS) % NUM_THREADS != 0 && i >= ROWS * CHUNKS)
            break;
        const int row = i / CHUNKS;
        const int chunk = i % CHUNKS;
        const bool in = EVEN || row < valid;
        const elem_t *src = in ? gmem + row * stride + chunk * 8 : gmem;
        const unsigned dst = smem + (chunk / 8) * (ROWS * 128) + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
        cp_async_16(dst, src, in ? 16 : 0);
    }
}

// One block per SM at least: lets ptxas use up to 255 registers per thread (2 warpgroups).
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
ft_fwd(const ft_fwd_args args)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned q_smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const unsigned kv_smem = q_smem + Q_BYTES;

    const int m_block = blockIdx.x;
    const int bh = blockIdx.y;
    const int b = bh / args.heads;
    const int h = bh % args.heads;
    const int wg = threadIdx.x / 128;
    const int warp = threadIdx.x / 32;       // warp w owns rows 16w..16w+15 of the tile
    const int lane = threadIdx.x % 32;
    const int group = lane / 4;
    const int quad = lane % 4;
    const int warp_row0 = warp * 16;

    const int m0 = m_block * BLOCK_M;
    const elem_t *q = (const elem_t *)args.q + b * args.q_stride[0] + h * args.q_stride[1] + m0 * args.q_stride[2];
    const elem_t *k = (const elem_t *)args.k + b * args.k_stride[0] + h * args.k_stride[1];
    const elem_t *v = (const elem_t *)args.v + b * args.v_stride[0] + h * args.v_stride[1];
    const long long ks = args.k_stride[2], vs = args.v_stride[2];
    const int seqlen_k = args.seqlen_k;

    int n_tiles = (seqlen_k + BLOCK_N - 1) / BLOCK_N;
#if CAUSAL && CAUSAL_SKIP
    n_tiles = min(n_tiles, (m0 + BLOCK_M + BLOCK_N - 1) / BLOCK_N);
#endif

    load_panels<BLOCK_M, HEAD_DIM, EVEN_M>(q_smem, q, args.q_stride[2], args.seqlen_q - m0);
    cp_async_commit();
    // Prologue: the first NUM_STAGES-1 K/V tiles; a group per slot, even an empty one, so that
    // wait_group<NUM_STAGES-2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < NUM_STAGES - 1; s++) {
        if (s < n_tiles) {
            const unsigned stage = kv_smem + s * STAGE_BYTES;
            const int n0 = s * BLOCK_N;
            load_panels<BLOCK_N, HEAD_DIM, EVEN_N>(stage, k + n0 * ks, ks, seqlen_k - n0);
            load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N>(stage + K_BYTES, v + n0 * vs, vs, seqlen_k - n0);
        }
        cp_async_commit();
    }

    const float scale_log2 = (float)(args.softmax_scale * FT_LOG2E);
    float o[O_REGS];
#pragma unroll
    for (int i = 0; i < O_REGS; i++)
        o[i] = 0.f;
    float row_max[2] = { -FT_INF_F, -FT_INF_F }, row_sum[2] = { 0.f, 0.f };   // rows g, g+8
    // This warpgroup's 64 rows of Q: within a panel they start at row 64*wg.
    const unsigned q_wg = q_smem + wg * 64 * 128;

    for (int t = 0; t < n_tiles; t++) {
        if (NUM_STAGES == 1) {
            __syncthreads();   // everyone is done with the single buffer
            const int n0 = t * BLOCK_N;
            load_panels<BLOCK_N, HEAD_DIM, EVEN_N>(kv_smem, k + n0 * ks, ks, seqlen_k - n0);
            load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N>(kv_smem + K_BYTES, v + n0 * vs, vs, seqlen_k - n0);
            cp_async_commit();
            cp_async_wait<0>();
            fence_proxy_async();
            __syncthreads();
        } else {
            cp_async_wait<(NUM_STAGES > 1 ? NUM_STAGES - 2 : 0)>();
            fence_proxy_async();
            __syncthreads();   // tile t visible to all; buffer of tile t-1 free for reuse
            const int next = t + NUM_STAGES - 1;
            if (next < n_tiles) {
                const unsigned stage = kv_smem + (next % NUM_STAGES) * STAGE_BYTES;
                const int n0 = next * BLOCK_N;
                load_panels<BLOCK_N, HEAD_DIM, EVEN_N>(stage, k + n0 * ks, ks, seqlen_k - n0);
                load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N>(stage + K_BYTES, v + n0 * vs, vs, seqlen_k - n0);
            }
            cp_async_commit();
        }
        const unsigned k_tile = kv_smem + (NUM_STAGES == 1 ? 0 : (t % NUM_STAGES) * STAGE_BYTES);
        const unsigned v_tile = k_tile + K_BYTES;
        const int n0 = t * BLOCK_N;

        // S = Q K^T: 16 columns of the head dim per step; a 64-column panel is 4 steps of 32 bytes.
        float s[S_REGS];
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < QK_STEPS; kk++) {
            const unsigned col = (kk % 4) * 32;   // byte offset within the panel row
            const unsigned long long qd = wg_desc(q_wg + (kk / 4) * (BLOCK_M * 128) + col, 16, 1024);
            const unsigned long long kd = wg_desc(k_tile + (kk / 4) * (BLOCK_N * 128) + col, 16, 1024);
            wg_ss<BLOCK_N, 0>::run(s, qd, kd, kk > 0);
        }
        wg_commit();
        wg_wait_all();
        wg_pin(s);

        // Mask keys past seqlen_k and, for causal, keys past the row's diagonal. S element
        // s[4j+e] is row g + 8*(e/2), key 8j + 2q + e%2 of the tile.
        const bool tail = !EVEN_N && n0 + BLOCK_N > seqlen_k;
#if CAUSAL
        const bool diag = !CAUSAL_SKIP || n0 + BLOCK_N - 1 > m0 + warp_row0;
#else
        const bool diag = false;
#endif
        if (tail || diag)
            mask_scores<BLOCK_N / 8>(s, n0, seqlen_k, m0 + warp_row0 + group, quad);
#pragma unroll
        for (int half = 0; half < 2; half++)
            softmax_step<BLOCK_N / 8, HEAD_DIM_V / 8>(s, o, row_max[half], row_sum[half], half, scale_log2);

        // O += P V. Key tiles 2kk and 2kk+1 of S form the A registers of k-step kk; V is read
        // N-major (transposed): 16 keys per step are 2048 bytes, its 64-column panels are
        // BLOCK_N*128 bytes apart.
        unsigned pf[P_STEPS][4];
#pragma unroll
        for (int kk = 0; kk < P_STEPS; kk++) {
            pf[kk][0] = pack2(s[kk * 8 + 0], s[kk * 8 + 1]);
            pf[kk][1] = pack2(s[kk * 8 + 2], s[kk * 8 + 3]);
            pf[kk][2] = pack2(s[kk * 8 + 4], s[kk * 8 + 5]);
            pf[kk][3] = pack2(s[kk * 8 + 6], s[kk * 8 + 7]);
        }
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < P_STEPS; kk++)
            wg_rs<HEAD_DIM_V, 1>::run(o, pf[kk], wg_desc(v_tile + kk * 2048, BLOCK_N * 128, 1024), 1);
        wg_commit();
        wg_wait_all();
        wg_pin(o);
    }
    cp_async_wait<0>();

    // Epilogue: O / rowsum in the input dtype, and L = ln(sum) + max in natural log.
    elem_t *o_out = (elem_t *)args.o + b * args.o_stride[0] + h * args.o_stride[1];
    float *lse = (float *)args.lse + (long long)bh * args.seqlen_q;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = m0 + warp_row0 + group + half * 8;
        store_row<HEAD_DIM_V / 8>(o_out + row * args.o_stride[2], lse + row, o, row_max[half], row_sum[half], half,
                                  quad, EVEN_M || row < args.seqlen_q);
    }
}
