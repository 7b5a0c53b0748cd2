// families/fwd_exact.cu: forward attention in exact f32/f64 arithmetic on CUDA cores (no tensor cores,
// no TF32, precise expf/exp), K/V tiles streamed through shared memory with cp.async.
//
// Entry: ft_fwd(ft_fwd_args). Grid (ceil(seqlen_q / BLOCK_M), batch*heads), NUM_WARPS*32
// threads, kSmemBytes of dynamic shared memory (checked against traits/exact.h's
// fwd_exact_smem_bytes, which the generator launches with).
//
// Work split. The threads form row groups of kTN consecutive lanes (kTN divides 32, so a row's
// reductions are warp shuffles). Row group g owns the tile's query rows g, g + kGroups, ... (kRM
// rows, interleaved so that the row groups of one warp read different banks); lane c of a group
// owns the score columns c, c + kTN, ... (kRN of them) and the output columns in 16-byte chunks
// c, c + kTN, ... (kRO elements; when kTN does not divide the row's chunks, a lane's last chunk
// may lie past the row and is skipped). Scores and output stay in registers; P goes through shared
// memory between the two products. kTN is chosen at compile time (exact_pick_tn in traits/exact.h) to need the
// fewest shared-memory loads per FMA; the per-thread register arrays (about BLOCK_M*HEAD_DIM_V
// and BLOCK_M*BLOCK_N elements over the threads) hardly depend on it. Registers per thread are
// bounded in check_fwd so that ptxas does not spill.
//
// Shared memory (elements of DTYPE; every row padded by 16 bytes so that rows start on
// different banks): Q [BLOCK_M][HEAD_DIM+kVec], K [NUM_STAGES][BLOCK_N][HEAD_DIM+kVec],
// V [NUM_STAGES][BLOCK_N][HEAD_DIM_V+kVec], P [BLOCK_M][BLOCK_N+kVec].
//
// Variable-length batches (VARLEN): the block takes its sequence's lengths, rows and band from
// seq_of; a tile past its sequence's end returns at once, and rows and keys past it are masked
// as a dense tail tile's (loads zero-filled, scores -inf, rows not stored).


// ---- traits -----------------------------------------------------------------------------

constexpr int kQkLd = HEAD_DIM + kVec;     // shared row stride of Q and K (elements)
constexpr int kVLd = HEAD_DIM_V + kVec;    // of V
constexpr int kPLd = BLOCK_N + kVec;       // of P
constexpr int kSmemElems = BLOCK_M * kQkLd + NUM_STAGES * BLOCK_N * (kQkLd + kVLd) + BLOCK_M * kPLd;
constexpr int kSmemBytes = kSmemElems * (int)sizeof(elem_t);
constexpr int kTN = fwd_exact_tn(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM, HEAD_DIM_V);   // lanes per row group
constexpr int kGroups = kTN ? kThreads / kTN : 1;                              // row groups
constexpr int kRM = BLOCK_M / kGroups;                // query rows per thread
constexpr int kRN = kTN ? BLOCK_N / kTN : 1;          // score columns per thread
constexpr int kOAll = HEAD_DIM_V / kVec;             // 16-byte chunks in an output row
constexpr int kOChunks = kTN ? exact_chunks_per_lane(HEAD_DIM_V, kTN, kVec) : 1;   // of them per thread
constexpr bool kORagged = kTN && kOAll % kTN != 0;    // some lanes own a chunk past the row
constexpr int kRO = kOChunks * kVec;                  // output columns per thread
constexpr int kWaitGroups = NUM_STAGES >= 2 ? NUM_STAGES - 2 : 0;   // cp.async groups left in flight

constexpr int kRule = fwd_exact_rule(DTYPE, BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, HEAD_DIM, HEAD_DIM_V);
static_assert(HEAD_DIM % kVec == 0 && HEAD_DIM_V % kVec == 0, "HEAD_DIM, HEAD_DIM_V: whole 16-byte rows");
static_assert(NUM_STAGES >= 1 && NUM_STAGES <= 4, "NUM_STAGES: 1..4");
static_assert(kRule != EXACT_BAD_TILES, "BLOCK_M, BLOCK_N: powers of two");
static_assert(kRule != EXACT_BAD_VEC_N, "BLOCK_N: a multiple of 16 bytes of elements (4 f32, 2 f64)");
static_assert(kRule != EXACT_BAD_SPLIT, "BLOCK_M, BLOCK_N, NUM_WARPS: no thread split");
static_assert(kRule != EXACT_BAD_SMEM, "BLOCK_M, BLOCK_N, NUM_STAGES: shared memory over the 227 KiB of sm_90");
static_assert(kRule != EXACT_BAD_REGISTERS, "BLOCK_M, BLOCK_N, NUM_WARPS, HEAD_DIM_V: accumulators would spill");
static_assert(kRule == EXACT_OK, "fwd_exact: a rule of traits/exact.h");
static_assert(kRM * kGroups == BLOCK_M && kRN * kTN == BLOCK_N && kOChunks * kTN >= kOAll, "thread split");
static_assert(kSmemBytes == FT_SMEM_BYTES_ft_fwd, "shared memory: the layout differs from traits/exact.h");

// ---- kernel -----------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(kThreads, 1) ft_fwd(const ft_fwd_args args)
{
    extern __shared__ __align__(16) unsigned char ft_smem[];
    elem_t *const sQ = reinterpret_cast<elem_t *>(ft_smem);
    elem_t *const sK = sQ + BLOCK_M * kQkLd;
    elem_t *const sV = sK + NUM_STAGES * BLOCK_N * kQkLd;
    elem_t *const sP = sV + NUM_STAGES * BLOCK_N * kVLd;

    int bh, tile, part;   // the block's head row and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &tile, &part);
    const int b = bh / args.heads, h = bh - b * args.heads;
    const ft_seq sq = seq_of(args, b);
    const int nq = sq.seqlen_q, nk = sq.seqlen_k;
    const int q0 = tile * BLOCK_M;
    if (VARLEN && q0 >= nq)
        return;   // the grid covers the longest sequence; before any barrier
    const elem_t *const gq_seq = (const elem_t *)args.q + seq_offset(args.q_stride, b, h, sq.q0);
    const elem_t *const gq = gq_seq + q0 * args.q_stride[2];
    const elem_t *gk = (const elem_t *)args.k + seq_offset(args.k_stride, b, kv_head(args, h), sq.k0);
    const elem_t *gv = (const elem_t *)args.v + seq_offset(args.v_stride, b, kv_head(args, h), sq.k0);
    elem_t *const go = (elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0);
    acc_t *const glse = (acc_t *)args.lse + seq_row(args, sq, b, h, bh);
    const long long ks = args.k_stride[2], vs = args.v_stride[2], os = args.o_stride[2];
    const ex_scorer score(args);

    // 16-byte copies where every row read is aligned: over the whole tensor (dense), or the rows
    // of this block's (sequence, head) (variable-length: the packed tensor has no batch stride).
#if VARLEN
    const bool q_vec = ex_aligned16(gq_seq, 0, 0, args.q_stride[2], 1, 1, nq);
    const bool kv_vec = ex_aligned16(gk, 0, 0, ks, 1, 1, nk) && ex_aligned16(gv, 0, 0, vs, 1, 1, nk);
#else
    const bool q_vec = ex_aligned16(args.q, args.q_stride[0], args.q_stride[1], args.q_stride[2], args.batch, args.heads, nq);
    const bool kv_vec = ex_aligned16(args.k, args.k_stride[0], args.k_stride[1], ks, args.batch, args.heads_k, nk) &&
                        ex_aligned16(args.v, args.v_stride[0], args.v_stride[1], vs, args.batch, args.heads_k, nk);
#endif

    // Key tiles [t_begin, t_end) to visit; with block skipping only those holding a visible key.
    // A dense batch's band is read here, not with the lengths at the top: the earlier load gave
    // other SASS (one more integer division, CAUSAL 1).
    const int lo = VARLEN ? sq.lo : args.mask_lo, hi = VARLEN ? sq.hi : args.mask_hi;
    const key_walk kw = walk_keys<BLOCK_M, BLOCK_N>(lo, hi, q0, nq, nk, gk, ks, gv, vs);   // gk, gv: its first tile
    const int n_tiles = kw.n_tiles;

    // K/V tile t into pipeline stage st (rows past seqlen_k zero-filled, so that 0 * P stays 0).
    auto load_kv = [&](int t, int st) {   // t counts from the first visited tile
        const int k0 = t * BLOCK_N;
        ex_stage_rows<BLOCK_N, HEAD_DIM, QK_DATA, kQkLd, EVEN_N>(sK + st * BLOCK_N * kQkLd, gk + k0 * ks, ks, kw.keys - k0, kv_vec);
        ex_stage_rows<BLOCK_N, HEAD_DIM_V, V_DATA, kVLd, EVEN_N>(sV + st * BLOCK_N * kVLd, gv + k0 * vs, vs, kw.keys - k0, kv_vec);
    };

    // Q joins the first cp.async group (with tile 0 when NUM_STAGES > 1).
    ex_stage_rows<BLOCK_M, HEAD_DIM, QK_DATA, kQkLd, EVEN_M>(sQ, gq, args.q_stride[2], nq - q0, q_vec);
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

    for (int it = 0; it < n_tiles; ++it) {
        const int st = it % NUM_STAGES, k0 = kw.n_begin + it * BLOCK_N;   // k0: absolute, for the mask
        if (NUM_STAGES == 1) {
            __syncthreads();   // the previous tile's P V is done with stage 0 and P
            load_kv(it, 0);
            cp_async_commit();
        }
        cp_async_wait<kWaitGroups>();
        __syncthreads();   // tile t visible to all; everyone is past tile t-1 (stage and P free)
        if (NUM_STAGES > 1) {
            const int tn = it + NUM_STAGES - 1;   // refills the stage that tile t-1 used
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
        ex_dot_rows<kRM, kRN, HEAD_DIM, kQkLd, kQkLd, kGroups, kTN>(s, sQ, tk, group, lane_c);

        // Scale, mask, online softmax; P to shared memory.
        const bool need_mask = (!EVEN_N && k0 + BLOCK_N > nk) || tile_needs_mask(lo, hi, q0, q0 + BLOCK_M, k0, k0 + BLOCK_N);
#pragma unroll
        for (int i = 0; i < kRM; ++i) {
            const int r = group + kGroups * i, row = q0 + r;
            acc_t mx = ex_neg_inf();
#pragma unroll
            for (int j = 0; j < kRN; ++j) {
                const int col = k0 + lane_c + kTN * j;
                acc_t x = score(s[i][j]);
                if (need_mask && ((!EVEN_N && col >= nk) || (CAUSAL && !ft_mask_visible(lo, hi, row, col))))
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
        ex_rows_times<kRM, kOChunks, BLOCK_N, kPLd, kVLd, kGroups, kTN, kORagged>(o, sP, tv, group, lane_c, kOAll);
    }

    cp_async_wait<0>();   // nothing in flight at exit, even when no key tile was visited

    // O = acc / l and L = m + log(l), for the rows that exist; a row that saw no key gets O = 0
    // and L = +inf. SINKS: the head's sink joins l here, a score with no value (the max moves to
    // the larger, l and O scaled to it): a row with no key then gets O = 0 and L = the sink.
    const acc_t sink = SINKS ? ((const acc_t *)args.sinks)[h] : (acc_t)0;
#pragma unroll
    for (int i = 0; i < kRM; ++i) {
        const int row = q0 + group + kGroups * i;
        acc_t li = ex_group_sum<kTN>(l[i]), keep = 1;
        if (SINKS) {
            const acc_t mx = m[i] > sink ? m[i] : sink;
            keep = ex_exp(m[i] - mx);   // 0 where no key was seen (m = -inf)
            li = li * keep + ex_exp(sink - mx);
            m[i] = mx;
        }
        if (EVEN_M || row < nq) {
            elem_t *const orow = go + row * os;
#pragma unroll
            for (int ch = 0; ch < kOChunks; ++ch)
                if (!kORagged || lane_c + kTN * ch < kOAll)
#pragma unroll
                    for (int w = 0; w < kVec; ++w)
                        if ((lane_c + kTN * ch) * kVec + w < V_DATA)
                            orow[(lane_c + kTN * ch) * kVec + w] = li > 0 ? o[i][ch * kVec + w] * keep / li : (acc_t)0;
            if (lane_c == 0)
                glse[row] = li > 0 ? m[i] + ex_log(li) : -ex_neg_inf();
        }
    }
}
