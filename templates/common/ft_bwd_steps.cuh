// ft_bwd_steps.cuh: the backward's steps around its main kernel, shared by the tensor-core
// backward families (each wraps them in its own entry, with its tile and thread counts):
// delta = rowsum(dO * O) per query row before it, and, where dQ is added in fp32 atomics,
// dq = softmax_scale * dq_accum in the element type after it.

// delta for the query rows [BM * blockIdx.x, + BM): four lanes per row, each summing DV/32
// 16-byte chunks (interleaved for coalescing), those of the DATA columns of data.
template <int THREADS, int BM, int DV, int DATA, bool EVEN>
FT_DEVICE void bwd_preprocess_rows(const ft_bwd_args args)
{
    constexpr int TPR = 4;
    constexpr int CHUNKS_PER_THREAD = DV / (8 * TPR);
    constexpr int ROWS_PER_PASS = THREADS / TPR;   // a multiple of 8, and 8 divides BM
    const int bh = blockIdx.y, b = bh / args.heads, h = bh % args.heads;
    const int m0 = blockIdx.x * BM;
    const int nq = args.seqlen_q;
    const elem_t *o = (const elem_t *)args.o + head_offset(args.o_stride, b, h);
    const elem_t *dout = (const elem_t *)args.dout + head_offset(args.do_stride, b, h);
    float *delta = (float *)args.delta + (long long)bh * nq;
    const int sub = threadIdx.x % TPR;

    for (int r = threadIdx.x / TPR; r < BM; r += ROWS_PER_PASS) {   // warp-uniform trip count
        const int row = m0 + r;
        const bool in = EVEN || row < nq;
        float acc = 0.f;
        if (in) {
            const elem_t *orow = o + row * args.o_stride[2];
            const elem_t *drow = dout + row * args.do_stride[2];
#pragma unroll
            for (int c = 0; c < CHUNKS_PER_THREAD; c++) {
                const int col = (sub + TPR * c) * 8;
                if (DATA < DV && col >= DATA)
                    break;
                const uint4 ov = *(const uint4 *)(orow + col);
                const uint4 dv = *(const uint4 *)(drow + col);
                const unsigned ow[4] = { ov.x, ov.y, ov.z, ov.w }, dw[4] = { dv.x, dv.y, dv.z, dv.w };
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    float o0, o1, d0, d1;
                    unpack2(ow[k], o0, o1);
                    unpack2(dw[k], d0, d1);
                    acc = fmaf(o0, d0, fmaf(o1, d1, acc));
                }
            }
        }
        acc = warp_sum_xor(acc, 1);
        acc = warp_sum_xor(acc, 2);
        if (in && sub == 0)
            delta[row] = acc;
    }
}

// dq = scale * dq_accum for the query rows [BM * blockIdx.x, + BM); dq_accum is fp32,
// [batch * heads][seqlen_q][D], and holds dS K unscaled; dq gets its first DATA columns.
template <int THREADS, int BM, int D, int DATA, bool EVEN>
FT_DEVICE void bwd_dq_convert_rows(const ft_bwd_args args)
{
    constexpr int CPR = D / 8;
    const int bh = blockIdx.y, b = bh / args.heads, h = bh % args.heads;
    const int m0 = blockIdx.x * BM;
    const int nq = args.seqlen_q;
    const float scale = (float)args.softmax_scale;
    const float *src = (const float *)args.dq_accum + ((long long)bh * nq + m0) * D;
    elem_t *dq = (elem_t *)args.dq + head_offset(args.dq_stride, b, h) + m0 * args.dq_stride[2];
    for (int c = threadIdx.x; c < BM * CPR; c += THREADS) {
        const int row = c / CPR, col = (c % CPR) * 8;
        if ((EVEN || m0 + row < nq) && (DATA == D || col < DATA)) {
            const float4 x = *(const float4 *)(src + row * D + col);
            const float4 y = *(const float4 *)(src + row * D + col + 4);
            *(uint4 *)(dq + row * args.dq_stride[2] + col) =
                make_uint4(pack2(x.x * scale, x.y * scale), pack2(x.z * scale, x.w * scale),
                           pack2(y.x * scale, y.y * scale), pack2(y.z * scale, y.w * scale));
        }
    }
}
