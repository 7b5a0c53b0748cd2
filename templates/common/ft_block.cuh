// ft_block.cuh: which tiles a block visits under the mask (FlashAttention-2's block_info, for
// every family): the key tiles of a query tile and the query tiles of a key tile, with causal /
// window block skipping (CAUSAL_SKIP), and whether a tile needs the per-element mask. All
// from the band of ft_mask.h, so a new mask kind changes ft_mask.h and nothing here.

// Key tiles [t0, t1) that query rows [r0, r1) visit: every tile, or with CAUSAL && CAUSAL_SKIP
// only those holding a visible key (possibly none: t0 == t1).
template <int BN>
FT_DEVICE void row_key_tiles(int lo, int hi, int r0, int r1, int seqlen_k, int &t0, int &t1)
{
    t0 = 0;
    t1 = (seqlen_k + BN - 1) / BN;
#if CAUSAL && CAUSAL_SKIP
    int k0, k1;
    ft_mask_key_range(lo, hi, r0, r1, seqlen_k, &k0, &k1);
    t0 = k0 / BN;
    t1 = k0 < k1 ? (k1 + BN - 1) / BN : t0;
#endif
}

// Those of the query tile's rows [m0, min(m0 + BM, seqlen_q)).
template <int BM, int BN>
FT_DEVICE void key_tiles(int lo, int hi, int m0, int seqlen_q, int seqlen_k, int &t0, int &t1)
{
    row_key_tiles<BN>(lo, hi, m0, min(m0 + BM, seqlen_q), seqlen_k, t0, t1);
}

// The key tiles a query-major block walks (key_tiles), counted from the first: k and v are
// moved to it, so that each tile's load addresses advance by a constant. With the first tile
// inside every tile's offset ptxas recomputed each row's 64-bit address per tile (fwd_wgmma's
// 64x64 loop: 466 instructions against 401). The mask still takes absolute keys, n_begin + n0.
struct key_walk {
    int n_tiles;   // tiles to visit
    int n_begin;   // the first visited key
    int keys;      // keys from n_begin to seqlen_k
};
// The walk of query rows [r0, r1) (row_key_tiles).
template <int BN, typename T>
FT_DEVICE key_walk walk_row_keys(int lo, int hi, int r0, int r1, int seqlen_k, const T *&k, long long ks, const T *&v,
                                 long long vs)
{
    int t0, t1;
    row_key_tiles<BN>(lo, hi, r0, r1, seqlen_k, t0, t1);
    const key_walk w = { t1 - t0, t0 * BN, seqlen_k - t0 * BN };
    k += (long long)w.n_begin * ks;
    v += (long long)w.n_begin * vs;
    return w;
}

// The walk of the query tile's rows [m0, min(m0 + BM, seqlen_q)).
template <int BM, int BN, typename T>
FT_DEVICE key_walk walk_keys(int lo, int hi, int m0, int seqlen_q, int seqlen_k, const T *&k, long long ks,
                             const T *&v, long long vs)
{
    return walk_row_keys<BN>(lo, hi, m0, min(m0 + BM, seqlen_q), seqlen_k, k, ks, v, vs);
}

// Share `split` of `splits` of a walk (a forward whose keys several blocks share, SPLITS): its
// tiles [n * split / splits, n * (split + 1) / splits) of the walk's n, so that the shares differ
// by one tile at most (some may be empty); k and v move to the share's first tile.
template <int BN, typename T>
FT_DEVICE void split_walk(key_walk &w, int split, int splits, const T *&k, long long ks, const T *&v, long long vs)
{
    const int first = w.n_tiles * split / splits, end = w.n_tiles * (split + 1) / splits;
    w.n_tiles = end - first;
    w.n_begin += first * BN;
    w.keys -= first * BN;
    k += (long long)first * BN * ks;
    v += (long long)first * BN * vs;
}

// Query tiles [t0, t1) that keys [n0, min(n0 + BN, seqlen_k)) are seen by (the key-major
// kernels' loop), as key_tiles.
template <int BM, int BN>
FT_DEVICE void query_tiles(int lo, int hi, int n0, int seqlen_q, int seqlen_k, int &t0, int &t1)
{
    t0 = 0;
    t1 = (seqlen_q + BM - 1) / BM;
#if CAUSAL && CAUSAL_SKIP
    int q0, q1;
    ft_mask_query_range(lo, hi, n0, min(n0 + BN, seqlen_k), seqlen_q, &q0, &q1);
    t0 = q0 / BM;
    t1 = q0 < q1 ? (q1 + BM - 1) / BM : t0;
#endif
}

// A key-major block's walk with grouped K/V heads: the block holds one K/V head and visits the
// query tiles [t0, t0 + per_head) (query_tiles) of each query head that reads it, the group's
// heads one after another, so that dK and dV sum over the group in registers, in a fixed order.
// Step i of the walk: the group's query head `head` (0 the first), query tile mt.
// Step by step (next: the step after, for tiles [t0, t1)), or step i at once (walk_group); the
// first costs no division, which matters where registers are few (a producer warp).
struct group_step {
    int head, mt;
    FT_DEVICE void next(int t0, int t1)
    {
        if (++mt == t1) {
            mt = t0;
            ++head;
        }
    }
};
FT_DEVICE group_step walk_group(int i, int t0, int per_head)   // per_head > 0 where a step i exists
{
    const int head = i / per_head;
    return { head, t0 + i - head * per_head };
}

// Heads that take their tiles together, so that the bytes each one streams through all its tiles
// (per_head) stay within 16 MB of L2 between them: at least 1, at most 8.
FT_DEVICE int l2_head_group(long long per_head)
{
    const long long heads = (16ll << 20) / (per_head > 0 ? per_head : 1);
    return heads < 1 ? 1 : heads > 8 ? 8 : (int)heads;
}


// Keys [k0, k1) query `row` sees: [0, seqlen_k), under CAUSAL only its band's (ft_mask.h).
FT_DEVICE void row_keys(int lo, int hi, int row, int seqlen_k, int &k0, int &k1)
{
    k0 = 0;
    k1 = seqlen_k;
#if CAUSAL
    ft_mask_key_range(lo, hi, row, row + 1, seqlen_k, &k0, &k1);
#endif
}

// Queries [q0, q1) that see `key`: [0, seqlen_q), under CAUSAL only its band's.
FT_DEVICE void key_queries(int lo, int hi, int key, int seqlen_q, int &q0, int &q1)
{
    q0 = 0;
    q1 = seqlen_q;
#if CAUSAL
    ft_mask_query_range(lo, hi, key, key + 1, seqlen_q, &q0, &q1);
#endif
}

// 1 when some (query, key) of rows [r0, r1) x keys [n0, n1) may be hidden by the mask, so the
// tile needs the per-element test; always 0 without CAUSAL.
FT_DEVICE bool tile_needs_mask(int lo, int hi, int r0, int r1, int n0, int n1)
{
#if CAUSAL
    return !ft_mask_tile_full(lo, hi, r0, r1, n0, n1);
#else
    return false;
#endif
}

// The per-element mask on one row of an accumulator tile in the m16n8 C layout (element
// s[4j + 2*half + e], e in {0, 1}, is column 8j + 2q + e of row `half`, q the lane's quad
// place): the elements outside the row's visible columns [first, end), counted from the lane's
// first column (2q), become `fill`. A column is a constant once unrolled, so an element costs a
// compare and a select where one end of the range lies outside the tile, as the band of a
// causal mask does on a diagonal tile; two compares only where a window crosses a row at both
// ends. (The band test per element, ft_mask_visible on its query and key, took 4-5 instructions
// an element: as long as the softmax of a diagonal tile at head dim 64.)
template <int TILES>
FT_DEVICE void mask_columns(float *s, int half, int first, int end, float fill)
{
    constexpr int LAST = 8 * (TILES - 1) + 1;   // the lane's last column
    if (first <= 0) {
#pragma unroll
        for (int j = 0; j < TILES; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                if (8 * j + e >= end)
                    s[4 * j + 2 * half + e] = fill;
    } else if (end > LAST) {
#pragma unroll
        for (int j = 0; j < TILES; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                if (8 * j + e < first)
                    s[4 * j + 2 * half + e] = fill;
    } else {
#pragma unroll
        for (int j = 0; j < TILES; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                if (8 * j + e < first || 8 * j + e >= end)
                    s[4 * j + 2 * half + e] = fill;
    }
}

// The backward's per-element mask on one key row of its S^T tiles (keys down, queries across in
// the m16n8 C layout; mask_columns' `half`): the key, `key` of the tile from n0, keeps P only for
// the queries its band lets see it ([q_first, q_end) without CAUSAL) and none past the keys
// (keys_in); q_first is the tile's first column's query, qd the lane's quad place.
template <int TILES>
FT_DEVICE void mask_key_row(float *s, int half, int lo, int hi, int n0, int key, int nq, int keys_in, int q_first,
                            int q_end, int qd)
{
    int q0 = 0, q1 = q_end;   // the queries that see the key
#if CAUSAL
    ft_mask_query_range(lo, hi, n0 + key, n0 + key + 1, nq, &q0, &q1);
#else
    (void)lo, (void)hi, (void)n0, (void)nq;
#endif
    if (!EVEN_N && key >= keys_in)
        q1 = q0;
    mask_columns<TILES>(s, half, q0 - q_first - 2 * qd, q1 - q_first - 2 * qd, 0.f);
}
