// ft_softcap.cuh: the logit softcap of the tensor-core families (fwd_mma, fwd_wgmma, bwd_mma,
// bwd_wgmma; the exact ones have ex_scorer): with SOFTCAP 1 and c = the arguments' softcap, a
// score S = scale Q.K becomes c tanh(S / c) before the softmax. The kernels keep
// t = tanh(raw * scale / c) in place of the raw score and take c as the softmax's scale, so
// everything after the scores is unchanged. tanh.approx is one special-function op a score
// (relative error about 2^-11, below the 16-bit inputs' rounding).

FT_DEVICE float fast_tanh(float x)
{
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The factor the softmax multiplies scores by, log2(e) folded in: the softmax scale, or with
// SOFTCAP the cap c (the scores having become t, cap_scores).
template <class Args> FT_DEVICE float softmax_log2_scale(const Args &args)
{
    return (float)((SOFTCAP ? args.softcap : args.softmax_scale) * FT_LOG2E);
}

// SOFTCAP: N raw scores in place as t = tanh(raw scale / c), before the mask.
template <int N, class Args> FT_DEVICE void cap_scores(float *s, const Args &args)
{
    const float cap_in = __fdividef((float)args.softmax_scale, (float)args.softcap);
#pragma unroll
    for (int i = 0; i < N; i++)
        s[i] = fast_tanh(s[i] * cap_in);
}

// The backward's factor on dS, d(c tanh(S / c)) / dS = 1 - t^2, from P = exp2(t * c log2 e + nl)
// (nl = -L log2 e) rather than from a kept t, which would cost a register a score:
// t = (log2 P - nl) / (c log2 e). 0 where P is 0 (dS is 0 there anyway).
FT_DEVICE float cap_slope(float p, float nl, float inv_cap_log2)
{
    const float t = (__log2f(p) - nl) * inv_cap_log2;
    return p > 0.f ? fmaxf(1.f - t * t, 0.f) : 0.f;
}
