// ft_bwd_reduce.cuh: the second step of a backward whose K/V heads' query heads SPLITS blocks
// share (SPLITS > 1, ft_bwd_args dk_part / dv_part): a key row's dK and dV are the sum of the
// shares' fp32 partial sums, added in share order (so bitwise repeatable), then stored in the
// dtype. Launched key-major: grid.x the key tiles of BLOCK_N rows, grid.y batch*heads_k.
#if SPLITS > 1
// rows x DATA columns of dst (row stride ld) from the SPLITS partials at src (COLS floats a row,
// split_stride floats from one share to the next), 4 columns a thread at a time.
template <int COLS, int DATA>
FT_DEVICE void reduce_rows(elem_t *dst, long long ld, const float *src, long long split_stride, int rows)
{
    constexpr int CHUNKS = DATA / 4;
    for (int i = threadIdx.x; i < rows * CHUNKS; i += NUM_WARPS * 32) {
        const int r = i / CHUNKS, c = (i % CHUNKS) * 4;
        const float *x = src + (long long)r * COLS + c;
        float4 sum = *(const float4 *)x;
        for (int s = 1; s < SPLITS; s++) {
            const float4 y = *(const float4 *)(x + s * split_stride);
            sum.x += y.x;
            sum.y += y.y;
            sum.z += y.z;
            sum.w += y.w;
        }
        *(uint2 *)(dst + r * ld + c) = make_uint2(pack2(sum.x, sum.y), pack2(sum.z, sum.w));
    }
}

extern "C" __global__ void __launch_bounds__(NUM_WARPS * 32) ft_bwd_dkdv_reduce(const ft_bwd_args args)
{
    int bh, key_tile, part;   // the K/V head row (batch * heads_k) and key tile (ft_schedule.h)
    ft_schedule_block(blockIdx.x, blockIdx.y, 1, &bh, &key_tile, &part);
    const int b = bh / args.heads_k, h = bh % args.heads_k;
    const int n0 = key_tile * BLOCK_N;
    const int rows = min(BLOCK_N, args.seqlen_k - n0);
    const long long first = (long long)bh * args.seqlen_k + n0;   // the tile's first partial row
    elem_t *dk = (elem_t *)args.dk + head_offset(args.dk_stride, b, h) + n0 * args.dk_stride[2];
    elem_t *dv = (elem_t *)args.dv + head_offset(args.dv_stride, b, h) + n0 * args.dv_stride[2];
    reduce_rows<HEAD_DIM, QK_DATA>(dk, args.dk_stride[2], args.dk_part + first * HEAD_DIM, args.part_rows * HEAD_DIM,
                                   rows);
    reduce_rows<HEAD_DIM_V, V_DATA>(dv, args.dv_stride[2], args.dv_part + first * HEAD_DIM_V,
                                    args.part_rows * HEAD_DIM_V, rows);
}
#endif
