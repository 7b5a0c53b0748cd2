// ft_softmax.cuh: the forward's per-row steps on 16-row accumulator tiles (fwd_mma, fwd_wgmma):
// the mask, one online-softmax step, and the epilogue. Tensor-core families only: f16, bf16, and
// f32 as TF32.
#if DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16 || DTYPE == FT_DTYPE_F32
// Lane 4g+q holds, for each 8-column tile j, elements s[4j+e]: row g + 8*(e/2), column
// 8j + 2q + e%2 (the m16n8 C layout, and a warp's share of a wgmma 64xN accumulator). A row's
// columns are spread over the 4 lanes of a quad. `half` picks row g (0) or g+8 (1).

// Sets to -inf the scores of keys >= seqlen_k and, when CAUSAL, of keys outside the row's band
// (ft_mask.h); n0: the tile's first key, row0: the query row of g (row g + 8 is row0 + 8).
// mask_rows: the same where rows g and g + 8 are any two query rows (row0, row8), as a packed
// group's tile has them (PACK_GQA).
template <int TILES>
FT_DEVICE void mask_rows(float *s, int n0, int seqlen_k, int row0, int row8, int quad, int lo, int hi)
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        int k0, k1;
        row_keys(lo, hi, half ? row8 : row0, seqlen_k, k0, k1);
        mask_columns<TILES>(s, half, k0 - n0 - quad * 2, k1 - n0 - quad * 2, -FT_INF_F);
    }
}
template <int TILES>
FT_DEVICE void mask_scores(float *s, int n0, int seqlen_k, int row0, int quad, int lo, int hi)
{
    mask_rows<TILES>(s, n0, seqlen_k, row0, row0 + 8, quad, lo, hi);
}

// One online-softmax step for one row, its scores only: S (TILES 8-column tiles, raw scores)
// becomes P = exp2(S*scale_log2 - max) and the running max and sum move on. Returns the factor
// exp2(old max - new max) the row's O accumulators must be scaled by (rescale_row), which a
// caller whose P V product is still in flight applies once it has landed.
// With a positive scale the max is taken on the raw scores and scaled once (x -> x * scale is
// monotone and rounds monotonically, so the result is the same): a multiply an element fewer.
template <int TILES>
FT_DEVICE float softmax_scores(float *s, float &row_max, float &row_sum, int half, float scale_log2)
{
    float mx = row_max;
    if (scale_log2 > 0.f) {
        float raw = -FT_INF_F;
#pragma unroll
        for (int j = 0; j < TILES; j++)
            raw = fmaxf(raw, fmaxf(s[j * 4 + half * 2], s[j * 4 + half * 2 + 1]));
        mx = fmaxf(mx, warp_max_xor(warp_max_xor(raw, 1), 2) * scale_log2);
    } else {
#pragma unroll
        for (int j = 0; j < TILES; j++)
            mx = fmaxf(mx, fmaxf(s[j * 4 + half * 2], s[j * 4 + half * 2 + 1]) * scale_log2);
        mx = warp_max_xor(warp_max_xor(mx, 1), 2);
    }
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
    return correction;
}

// Scales one row's O accumulators (O_TILES 8-column tiles) by `correction`.
template <int O_TILES> FT_DEVICE void rescale_row(float *o, int half, float correction)
{
#pragma unroll
    for (int j = 0; j < O_TILES; j++) {
        o[j * 4 + half * 2] *= correction;
        o[j * 4 + half * 2 + 1] *= correction;
    }
}

// One online-softmax step for one row: softmax_scores, then the row's O rescaled at once.
template <int TILES, int O_TILES>
FT_DEVICE void softmax_step(float *s, float *o, float &row_max, float &row_sum, int half, float scale_log2)
{
    rescale_row<O_TILES>(o, half, softmax_scores<TILES>(s, row_max, row_sum, half, scale_log2));
}

// SINKS: query head h's sink logit in the rows' log2 units (args.sinks, fp32 for the 16-bit
// types); without sinks -inf, which finish_row ignores.
template <class Args> FT_DEVICE float sink_log2(const Args &args, int h)
{
    return SINKS ? ((const float *)args.sinks)[h] * (float)FT_LOG2E : -FT_INF_F;
}

// The end of one row: from lane q = 0 of an in-range row, L = ln(sum) + max (natural log) at
// *lse; returns what O is scaled by (1 / sum). A row that saw no key gets O = 0 and L = +inf, so
// that the backward's exp(S - L) is 0 there. SINKS: the sink (sink2, log2 units) joins the sum
// here, at the end, as a score with no value: the max moves to the larger of the two, the keys'
// sum and O scaled to it; a row with no key then gets O = 0 and L = the sink. row_sum is this
// lane's partial sum; every lane of the quad must call this (it shuffles) before any of them
// skips its row.
FT_DEVICE float finish_row(float *lse, float row_max, float row_sum, int quad, bool in_range,
                           float sink2 = -FT_INF_F)
{
    float sum = warp_sum_xor(warp_sum_xor(row_sum, 1), 2), keep = 1.f;
    if (SINKS) {
        const float mx = fmaxf(row_max, sink2);   // the sink is finite
        keep = fast_exp2(row_max - mx);           // 0 where no key was seen (max -inf)
        sum = sum * keep + fast_exp2(sink2 - mx);
        row_max = mx;
    }
    if (in_range && quad == 0)
        *lse = sum > 0.f ? (row_max + __log2f(sum)) * (float)FT_LN2 : FT_INF_F;
    return sum > 0.f ? keep / sum : 0.f;
}

// The end of one row of a split (SPLITS > 1): its O / rowsum in fp32 at dst, its first DATA
// columns, and log2 of its L at *lse2 (-inf where the split saw no key of the row), which the
// combine kernel weighs the splits by. Every lane of the quad calls it, as finish_row.
template <int O_TILES, int DATA>
FT_DEVICE void store_split_row(float *dst, float *lse2, const float *o, float row_max, float row_sum, int half,
                               int quad, bool in_range)
{
    const float sum = warp_sum_xor(warp_sum_xor(row_sum, 1), 2);
    if (!in_range)
        return;
    if (quad == 0)
        *lse2 = sum > 0.f ? row_max + __log2f(sum) : -FT_INF_F;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
    for (int j = 0; j < O_TILES && j * 8 < DATA; j++)
        *(float2 *)(dst + j * 8 + quad * 2) = make_float2(o[j * 4 + half * 2] * inv, o[j * 4 + half * 2 + 1] * inv);
}

// Epilogue for one row: finish_row, and O / rowsum in the input dtype at dst (the row's first
// element), its first DATA columns (a multiple of 8, or of 2 in f32).
template <int O_TILES, int DATA = O_TILES * 8>
FT_DEVICE void store_row(elem_t *dst, float *lse, const float *o, float row_max, float row_sum, int half,
                         int quad, bool in_range, float sink2 = -FT_INF_F)
{
    const float inv = finish_row(lse, row_max, row_sum, quad, in_range, sink2);
    if (!in_range)
        return;
#pragma unroll
    for (int j = 0; j < O_TILES && j * 8 < DATA; j++)
        if (DATA % 8 == 0 || j * 8 + quad * 2 < DATA)
            store2(dst + j * 8 + quad * 2, o[j * 4 + half * 2] * inv, o[j * 4 + half * 2 + 1] * inv);
}
#endif
