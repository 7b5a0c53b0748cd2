// ft_bwd_steps.cuh: the backward's steps around its main kernel, shared by the tensor-core
// backward families (each wraps them in its own entry, with its tile and thread counts):
// delta = rowsum(dO * O) per query row before it, and, where dQ is added in fp32 atomics,
// dq = softmax_scale * dq_accum in the element type after it. Both are query-major and take
// their sequence from seq_of (VARLEN: a tile past its sequence's end returns at once). The row
// helper bwd_head_rows serves every backward family, the exact one included.

// Rows between one query head's and the next one's in lse, delta and (times the head dim)
// dq_accum: the sequence's seqlen_q dense, total_q under VARLEN ([heads, total_q]). A key-major
// block walking the heads of its group steps by this from seq_row of the group's first head.
template <class Args> FT_DEVICE int bwd_head_rows(const Args &a, const ft_seq &s)
{
    return VARLEN ? a.total_q : s.seqlen_q;
}

// The query tile a block of the query-major steps (delta, dQ's zeroing, its conversion) takes: the
// query head row bh (of batch * heads), b and h, the tile's first row m0 (BM rows a tile) and the
// sequence (ft_schedule.h, seq_of). False where the tile lies past a packed sequence's end (the grid
// is sized by the longest): nothing to do there.
struct bwd_query_tile {
    int bh, b, h, m0, nq;
    ft_seq sq;
};
template <int BM> FT_DEVICE bool bwd_block_query_tile(const ft_bwd_args &args, bwd_query_tile &t)
{
    int m_tile, part;
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &t.bh, &m_tile, &part);
    t.b = t.bh / args.heads, t.h = t.bh % args.heads;
    t.m0 = m_tile * BM;
    t.sq = seq_of(args, t.b);
    t.nq = t.sq.seqlen_q;
    return !(VARLEN && t.m0 >= t.nq);
}

// delta for the query rows [BM * tile, + BM) of the block's unit: four lanes per row, each summing
// a quarter of the row's 16-byte pieces (interleaved for coalescing), those of the DATA columns of
// data.
template <int THREADS, int BM, int DV, int DATA, bool EVEN>
FT_DEVICE void bwd_preprocess_rows(const ft_bwd_args args)
{
    constexpr int TPR = 4;
    constexpr int CHUNKS_PER_THREAD = DV / (FT_PIECE_ELEMS * TPR);
    constexpr int ROWS_PER_PASS = THREADS / TPR;   // a multiple of 8, and 8 divides BM
    bwd_query_tile qt;
    if (!bwd_block_query_tile<BM>(args, qt))
        return;
    const int bh = qt.bh, b = qt.b, h = qt.h, m0 = qt.m0, nq = qt.nq;
    const ft_seq &sq = qt.sq;
    const elem_t *o = (const elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0);
    const elem_t *dout = (const elem_t *)args.dout + seq_offset(args.do_stride, b, h, sq.q0);
    float *delta = (float *)args.delta + seq_row(args, sq, b, h, bh);
    const int sub = threadIdx.x % TPR;
    // SINKS: this thread's rows' shares of the sinks' gradient, -exp(sink - L) delta each.
    const float sink = SINKS ? ((const float *)args.sinks)[h] : 0.f;
    const float *lse = (const float *)args.lse + seq_row(args, sq, b, h, bh);
    float dsink = 0.f;

    for (int r = threadIdx.x / TPR; r < BM; r += ROWS_PER_PASS) {   // warp-uniform trip count
        const int row = m0 + r;
        const bool in = EVEN || row < nq;
        float acc = 0.f;
        if (in) {
            const elem_t *orow = o + row * args.o_stride[2];
            const elem_t *drow = dout + row * args.do_stride[2];
#pragma unroll
            for (int c = 0; c < CHUNKS_PER_THREAD; c++) {
                const int col = (sub + TPR * c) * FT_PIECE_ELEMS;
                if (DATA < DV && col >= DATA)
                    break;
                float ov[FT_PIECE_ELEMS], dv[FT_PIECE_ELEMS];
                load_piece(orow + col, ov);
                load_piece(drow + col, dv);
#pragma unroll
                for (int k = 0; k < FT_PIECE_ELEMS; k += 2)
                    acc = fmaf(ov[k], dv[k], fmaf(ov[k + 1], dv[k + 1], acc));
            }
        }
        acc = warp_sum_xor(acc, 1);
        acc = warp_sum_xor(acc, 2);
        if (in && sub == 0) {
            delta[row] = acc;
            if (SINKS)
                dsink -= __expf(sink - lse[row]) * acc;
        }
    }
    if (SINKS && args.dsinks) {   // one add a warp (NULL: the caller wants no gradient of the sinks)
#pragma unroll
        for (int m = 16; m >= 1; m /= 2)
            dsink = warp_sum_xor(dsink, m);
        if (threadIdx.x % 32 == 0)
            atomicAdd((float *)args.dsinks + h, dsink);
    }
}

// dq = 0 for the query rows [BM * tile, + BM) of the block's unit, its first DATA of D columns
// (DATA whole 16-byte pieces: gen_validate's check_data_dims): where the main kernel adds its
// scaled shares into dQ itself (DQ_MODE direct), run in the same pass as delta, before it.
template <int THREADS, int BM, int D, int DATA, bool EVEN>
FT_DEVICE void bwd_dq_zero_rows(const ft_bwd_args args)
{
    constexpr int CPR = D / FT_PIECE_ELEMS;
    bwd_query_tile qt;
    if (!bwd_block_query_tile<BM>(args, qt))
        return;
    elem_t *dq = (elem_t *)args.dq + seq_offset(args.dq_stride, qt.b, qt.h, qt.sq.q0) + qt.m0 * args.dq_stride[2];
    for (int c = threadIdx.x; c < BM * CPR; c += THREADS) {
        const int row = c / CPR, col = (c % CPR) * FT_PIECE_ELEMS;
        if ((EVEN || qt.m0 + row < qt.nq) && (DATA == D || col < DATA))
            *(uint4 *)(dq + row * args.dq_stride[2] + col) = make_uint4(0u, 0u, 0u, 0u);   // a piece: 16 bytes
    }
}

// dq = scale * dq_accum for the query rows [BM * tile, + BM) of the block's unit; dq_accum is fp32,
// [batch * heads][seqlen_q][D] (VARLEN: [heads][total_q][D], seq_row), and holds dS K
// unscaled; dq gets its first DATA columns.
template <int THREADS, int BM, int D, int DATA, bool EVEN>
FT_DEVICE void bwd_dq_convert_rows(const ft_bwd_args args)
{
    constexpr int CPR = D / FT_PIECE_ELEMS;
    bwd_query_tile qt;
    if (!bwd_block_query_tile<BM>(args, qt))
        return;
    const float scale = (float)args.softmax_scale;
    const float *src = (const float *)args.dq_accum + (seq_row(args, qt.sq, qt.b, qt.h, qt.bh) + qt.m0) * D;
    elem_t *dq = (elem_t *)args.dq + seq_offset(args.dq_stride, qt.b, qt.h, qt.sq.q0) + qt.m0 * args.dq_stride[2];
    for (int c = threadIdx.x; c < BM * CPR; c += THREADS) {
        const int row = c / CPR, col = (c % CPR) * FT_PIECE_ELEMS;
        if ((EVEN || qt.m0 + row < qt.nq) && (DATA == D || col < DATA))
            store_piece(dq + row * args.dq_stride[2] + col, src + row * D + col, scale);
    }
}
