// families/fwd_wgmma.cu: FlashAttention forward on Hopper's warpgroup tensor cores (f16/bf16,
// wgmma.mma_async, sm_90a only). Each warpgroup (4 warps, 128 threads) owns 64 query rows.
// Q and the streamed K/V tiles sit in shared memory in the layout wgmma reads directly
// (128-byte swizzled panels), so no ldmatrix is needed: S = Q K^T takes both operands from
// shared memory, and O += P V takes P from the S accumulators in registers (the accumulator
// layout of a 64xN tile is the register A layout of the next product) and V transposed from
// shared memory. The online softmax is the one of fwd_mma, in registers.

// ---- traits (traits/fwd_wgmma.h): tunables come from the generator's #defines --------------
constexpr int NUM_THREADS = NUM_WARPS * 32;
constexpr int S_REGS = BLOCK_N / 2;        // fp32 S accumulators per thread (64 x BLOCK_N / 128)
constexpr int O_REGS = HEAD_DIM_V / 2;     // fp32 O accumulators per thread
constexpr int P_STEPS = BLOCK_N / 16;      // k-steps of P V
constexpr int QK_STEPS = HEAD_DIM / 16;    // k-steps of Q K^T
// Shared memory: 1024 bytes of alignment slack, the Q tile, NUM_STAGES x (K tile, V tile), each
// stored as 64-column panels (panel_offset in arch/sm90.cuh).
constexpr int Q_BYTES = BLOCK_M * HEAD_DIM * 2;
constexpr int K_BYTES = BLOCK_N * HEAD_DIM * 2;
constexpr int V_BYTES = BLOCK_N * HEAD_DIM_V * 2;
constexpr int STAGE_BYTES = K_BYTES + V_BYTES;
constexpr int SMEM_END = 1024 + Q_BYTES + NUM_STAGES * STAGE_BYTES;
constexpr int MIN_BLOCKS = fwd_wgmma_min_blocks(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V, NUM_STAGES);

constexpr int RULE = fwd_wgmma_rule(BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V);
static_assert(DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16, "DTYPE: fwd_wgmma takes f16 or bf16");
static_assert(RULE != FWD_WGMMA_BAD_WARPS, "NUM_WARPS must be 4, 8 or 12 (whole warpgroups)");
static_assert(RULE != FWD_WGMMA_BAD_BLOCK_M, "BLOCK_M must be 64 per warpgroup (16*NUM_WARPS)");
static_assert(RULE != FWD_WGMMA_BAD_BLOCK_N, "BLOCK_N must be 64 or 128");
static_assert(RULE != FWD_WGMMA_BAD_HEAD_DIM, "HEAD_DIM and HEAD_DIM_V must be 64 or 128");
static_assert(RULE != FWD_WGMMA_BAD_REGISTERS, "BLOCK_N, HEAD_DIM_V, NUM_WARPS: accumulators would spill");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES must be 1..4");
static_assert(SMEM_END == FT_SMEM_BYTES_ft_fwd, "shared memory: the layout differs from traits/fwd_wgmma.h");

// Compiled for the occupancy the traits expect (MIN_BLOCKS): up to 255 registers a thread for
// two or three warpgroups, within 128 for one warpgroup on 64x64 tiles of head dim 64.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
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
    const elem_t *q = (const elem_t *)args.q + head_offset(args.q_stride, b, h) + m0 * args.q_stride[2];
    const elem_t *k = (const elem_t *)args.k + head_offset(args.k_stride, b, h);
    const elem_t *v = (const elem_t *)args.v + head_offset(args.v_stride, b, h);
    const long long ks = args.k_stride[2], vs = args.v_stride[2];
    const int seqlen_k = args.seqlen_k;
    const int lo = args.mask_lo, hi = args.mask_hi;

    // Key tiles to visit, counted from the first; k and v point at it (walk_keys).
    const key_walk kw = walk_keys<BLOCK_M, BLOCK_N>(lo, hi, m0, args.seqlen_q, seqlen_k, k, ks, v, vs);
    const int n_tiles = kw.n_tiles, n_begin = kw.n_begin, keys = kw.keys;

    load_panels<BLOCK_M, HEAD_DIM, EVEN_M, NUM_THREADS>(q_smem, q, args.q_stride[2], args.seqlen_q - m0);
    cp_async_commit();
    // Prologue: the first NUM_STAGES-1 K/V tiles; a group per slot, even an empty one, so that
    // wait_group<NUM_STAGES-2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < NUM_STAGES - 1; s++) {
        if (s < n_tiles) {
            const unsigned stage = kv_smem + s * STAGE_BYTES;
            const int n0 = s * BLOCK_N;
            load_panels<BLOCK_N, HEAD_DIM, EVEN_N, NUM_THREADS>(stage, k + n0 * ks, ks, keys - n0);
            load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N, NUM_THREADS>(stage + K_BYTES, v + n0 * vs, vs, keys - n0);
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
            load_panels<BLOCK_N, HEAD_DIM, EVEN_N, NUM_THREADS>(kv_smem, k + n0 * ks, ks, keys - n0);
            load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N, NUM_THREADS>(kv_smem + K_BYTES, v + n0 * vs, vs, keys - n0);
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
                load_panels<BLOCK_N, HEAD_DIM, EVEN_N, NUM_THREADS>(stage, k + n0 * ks, ks, keys - n0);
                load_panels<BLOCK_N, HEAD_DIM_V, EVEN_N, NUM_THREADS>(stage + K_BYTES, v + n0 * vs, vs, keys - n0);
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

        // Mask keys past seqlen_k and those the band hides. S element s[4j+e] is row
        // g + 8*(e/2), key 8j + 2q + e%2 of the tile.
        const bool tail = !EVEN_N && n0 + BLOCK_N > keys;
        const bool band = tile_needs_mask(lo, hi, m0 + warp_row0, m0 + warp_row0 + 16, n_begin + n0, n_begin + n0 + BLOCK_N);
        if (tail || band)
            mask_scores<BLOCK_N / 8>(s, n_begin + n0, seqlen_k, m0 + warp_row0 + group, quad, lo, hi);
#pragma unroll
        for (int half = 0; half < 2; half++)
            softmax_step<BLOCK_N / 8, HEAD_DIM_V / 8>(s, o, row_max[half], row_sum[half], half, scale_log2);

        // O += P V. Key tiles 2kk and 2kk+1 of S form the A registers of k-step kk; V is read
        // N-major (transposed): 16 keys per step are 2048 bytes, its 64-column panels are
        // BLOCK_N*128 bytes apart.
        unsigned pf[P_STEPS][4];
        wg_acc_to_a(pf, s);
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
    elem_t *o_out = (elem_t *)args.o + head_offset(args.o_stride, b, h);
    float *lse = (float *)args.lse + (long long)bh * args.seqlen_q;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = m0 + warp_row0 + group + half * 8;
        store_row<HEAD_DIM_V / 8>(o_out + row * args.o_stride[2], lse + row, o, row_max[half], row_sum[half], half,
                                  quad, EVEN_M || row < args.seqlen_q);
    }
}
