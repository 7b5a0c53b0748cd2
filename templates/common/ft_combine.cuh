// ft_combine.cuh: the second step of a forward whose keys SPLITS blocks share (SPLITS > 1,
// ft_fwd_args o_part / lse_part): each row's splits weighed by their share of its softmax sum.
// With L_s the log2 sum of split s (store_split_row) and M their largest, row O = sum_s
// 2^(L_s - M) O_s / sum_s 2^(L_s - M) and L = (M + log2 sum_s 2^(L_s - M)) ln 2. A row no split
// saw a key of gets O = 0 and L = +inf, as the unsplit kernels write it. SINKS: the sink joins
// here, once, as a split with no value (the splits leave it out): M and the sum take it.
// Launched as a query-major entry: grid.x the query tiles of BLOCK_M rows, grid.y batch*heads;
// each warp takes a row at a time, each lane 4 of its columns.
#if SPLITS > 1
extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32)
ft_fwd_combine(const ft_fwd_args args)
{
    int bh, m_tile, part;   // the query head row (batch * heads) and tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &m_tile, &part);
    const int b = bh / args.heads;
    const int h = bh % args.heads;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const ft_seq sq = seq_of(args, b);
    const int m0 = m_tile * BLOCK_M;
    elem_t *o = (elem_t *)args.o + seq_offset(args.o_stride, b, h, sq.q0);
    const long long row0 = seq_row(args, sq, b, h, bh);
    for (int r = warp; r < BLOCK_M && m0 + r < sq.seqlen_q; r += NUM_WARPS) {
        const int row = m0 + r;
        const long long idx = row0 + row;
        const float sink2 = sink_log2(args, h);
        float mx = sink2;
        for (int s = lane; s < SPLITS; s += 32)
            mx = fmaxf(mx, args.lse_part[s * args.part_rows + idx]);
#pragma unroll
        for (int m = 16; m >= 1; m /= 2)
            mx = warp_max_xor(mx, m);
        const float base = mx == -FT_INF_F ? 0.f : mx;   // every split empty: all weights 0
        float sum = SINKS && lane == 0 ? fast_exp2(sink2 - base) : 0.f;
        for (int s = lane; s < SPLITS; s += 32)
            sum += fast_exp2(args.lse_part[s * args.part_rows + idx] - base);
#pragma unroll
        for (int m = 16; m >= 1; m /= 2)
            sum = warp_sum_xor(sum, m);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        constexpr int CHUNKS = (V_DATA + 127) / 128;   // 4-column chunks per lane
        float acc[CHUNKS][4];
#pragma unroll
        for (int c = 0; c < CHUNKS; c++)
            acc[c][0] = acc[c][1] = acc[c][2] = acc[c][3] = 0.f;
        for (int s = 0; s < SPLITS; s++) {
            const long long part = s * args.part_rows + idx;
            const float w = fast_exp2(args.lse_part[part] - base) * inv;
            const float *src = args.o_part + part * HEAD_DIM_V;
#pragma unroll
            for (int c = 0; c < CHUNKS; c++) {
                const int col = c * 128 + lane * 4;
                if (col < V_DATA) {
                    const float4 x = *(const float4 *)(src + col);
                    acc[c][0] += w * x.x;
                    acc[c][1] += w * x.y;
                    acc[c][2] += w * x.z;
                    acc[c][3] += w * x.w;
                }
            }
        }
        elem_t *dst = o + row * args.o_stride[2];
#pragma unroll
        for (int c = 0; c < CHUNKS; c++) {
            const int col = c * 128 + lane * 4;
            if (col < V_DATA)
                store4(dst + col, acc[c][0], acc[c][1], acc[c][2], acc[c][3]);
        }
        if (lane == 0)
            ((float *)args.lse)[idx] = sum > 0.f ? (mx + __log2f(sum)) * (float)FT_LN2 : FT_INF_F;
    }
}
#endif
