/* ft_mask.h: the attention mask, defined once for the host C code (runtime, tuner, tests) and
 * the kernels (NVRTC). Every mask flashtune knows (causal aligned top-left or bottom-right, a
 * local window, both) is a band around a shifted diagonal: key j is visible to query i when
 *
 *     i + lo <= j <= i + hi
 *
 * The kernels receive lo and hi in their argument block (mask_lo, mask_hi) and apply them when
 * the template parameter CAUSAL is 1; CAUSAL 0 compiles every mask test out. Plain C (no
 * includes, no C++), so that it is valid C11 and valid CUDA C++ alike. */
#ifndef FT_MASK_H
#define FT_MASK_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)   /* NVRTC, or nvcc on an emitted .cu */
#define FT_HD static __host__ __device__ __forceinline__
#else
#define FT_HD static inline
#endif

/* The band of a problem. causal: 1 = keys right of the diagonal are hidden (window_right is
 * then 0 or -1, which the caller has checked). bottom_right: 1 = the diagonal ends at the last
 * query and last key (query i's diagonal is key i + seqlen_k - seqlen_q, the KV-cache
 * convention); 0 = it starts at query 0, key 0 (PyTorch's is_causal). window_left,
 * window_right: how many keys left / right of the diagonal stay visible, -1 for no limit.
 * OUT: *lo, *hi, clamped to [-seqlen_q, seqlen_k] so that i + lo and i + hi stay in int for
 * any i < seqlen_q when seqlen_q + seqlen_k < 2^31. */
FT_HD void ft_mask_band(int causal, int bottom_right, int window_left, int window_right, int seqlen_q,
                        int seqlen_k, int *lo, int *hi)
{
    const long long off = bottom_right ? (long long)seqlen_k - seqlen_q : 0;
    const long long right = causal ? 0 : window_right;
    long long l = window_left < 0 ? -(long long)seqlen_q : off - window_left;
    long long h = right < 0 ? (long long)seqlen_k : off + right;
    l = l < -(long long)seqlen_q ? -(long long)seqlen_q : l > seqlen_k ? seqlen_k : l;
    h = h < -(long long)seqlen_q ? -(long long)seqlen_q : h > seqlen_k ? seqlen_k : h;
    *lo = (int)l;
    *hi = (int)h;
}

/* 1 when the problem needs a mask at all (the CAUSAL template parameter). */
FT_HD int ft_mask_active(int causal, int window_left, int window_right)
{
    return causal || window_left >= 0 || window_right >= 0;
}

/* Key j visible to query i: j - (i + lo) in [0, hi - lo], as one subtraction and one unsigned
 * compare (hi >= lo always; no overflow while seqlen_q + seqlen_k < 2^31). The exact families
 * and the CPU reference test it per element; the tensor-core families turn a row's band into a
 * range of its columns once instead (mask_columns in common/ft_block.cuh). */
FT_HD int ft_mask_visible(int lo, int hi, int i, int j)
{
    return (unsigned)(j - i - lo) <= (unsigned)(hi - lo);
}

/* Keys [*k0, *k1) that some query of rows [m0, m1) sees, within [0, seqlen_k); empty when
 * *k0 >= *k1. The key-tile range of a query-major kernel. */
FT_HD void ft_mask_key_range(int lo, int hi, int m0, int m1, int seqlen_k, int *k0, int *k1)
{
    const int a = m0 + lo, b = m1 - 1 + hi + 1;
    *k0 = a > 0 ? a : 0;
    *k1 = b < seqlen_k ? b : seqlen_k;
}

/* Queries [*q0, *q1) that see some key of [n0, n1), within [0, seqlen_q). The query-tile
 * range of a key-major kernel. */
FT_HD void ft_mask_query_range(int lo, int hi, int n0, int n1, int seqlen_q, int *q0, int *q1)
{
    const int a = n0 - hi, b = n1 - 1 - lo + 1;
    *q0 = a > 0 ? a : 0;
    *q1 = b < seqlen_q ? b : seqlen_q;
}

/* 1 when every (query, key) of rows [m0, m1) x keys [n0, n1) is visible: the tile needs no
 * per-element mask (bounds of seqlen aside). */
FT_HD int ft_mask_tile_full(int lo, int hi, int m0, int m1, int n0, int n1)
{
    return m1 - 1 + lo <= n0 && n1 - 1 <= m0 + hi;
}

#endif
