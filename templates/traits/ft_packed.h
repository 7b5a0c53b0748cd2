/* ft_packed.h: the order a packed (variable-length) batch's query tiles are taken in, heaviest
 * first, written once for the host and the kernels (ft_traits.h's rules: C11/C++17, no includes;
 * ft_traits.h first). The packed scheduler's part: resident blocks take unit numbers (dealt in
 * advance, round r giving block b unit r G + b, or r G + G - 1 - b in odd rounds; or from a
 * counter in memory) and decode each here, so the order needs only the batch's prefix sums of
 * lengths, read on the device (no host sort, nothing read back: a CUDA graph captures it).
 *
 * Why this order (notes/kernels.md, packed batches modelled): a block's fixed cost a tile is what
 * a packed batch loses against a dense one, which a persistent block hides by loading the next
 * tile under this one; and persistent blocks stay balanced over uneven lengths only if the
 * heaviest tiles go first to whichever block is free. A tile's work is the key tiles it visits:
 * - causal (square sequences, top-left): tile m of any sequence visits m + 1, so the walk goes by
 *   levels m from the longest sequence's last tile down, taking tile m of every sequence that
 *   has more than m tiles;
 * - otherwise a tile visits its whole sequence, so the levels are tile counts L from the longest
 *   down, taking every tile of every sequence of exactly L tiles.
 * Within a level: sequence by sequence in batch order, then (causal) head by head, or (otherwise)
 * head by head and each head's tiles in turn, so the blocks at work at once share a few heads' K
 * and V. Either way the work of the units never rises along the walk (tested: test_packed_walk).
 * A level's members are found by a scan of the batch, so a block walking its units upwards keeps
 * a cursor (the level it is in and that level's first unit) and rescans only as it moves on. */
#ifndef FT_PACKED_H
#define FT_PACKED_H

/* Sequence s's query tiles of block_m rows (cu_seqlens: the batch's prefix sums of lengths). */
FT_TRAIT int ft_packed_tiles(const int *cu_seqlens, int s, int block_m)
{
    return (cu_seqlens[s + 1] - cu_seqlens[s] + block_m - 1) / block_m;
}

/* 1 when sequence s has units at `level` (see above). */
FT_TRAIT int ft_packed_member(const int *cu_seqlens, int s, int block_m, int causal, int level)
{
    const int tiles = ft_packed_tiles(cu_seqlens, s, block_m);
    return causal ? tiles > level : tiles == level + 1;
}

/* The units of one member at `level`: one tile (causal) or level + 1, each in every head. */
FT_TRAIT int ft_packed_member_units(int causal, int level, int heads)
{
    return (causal ? 1 : level + 1) * heads;
}

/* The units at `level`, over the batch. */
FT_TRAIT long long ft_packed_level_units(const int *cu_seqlens, int batch, int block_m, int causal, int level,
                                         int heads)
{
    int members = 0;
    for (int s = 0; s < batch; s++)
        members += ft_packed_member(cu_seqlens, s, block_m, causal, level);
    return (long long)members * ft_packed_member_units(causal, level, heads);
}

/* Where a walk is: `level`, whose first unit is `base`. */
typedef struct ft_packed_cursor {
    int level;
    long long base;
} ft_packed_cursor;

/* A walk's start: the top level (the longest sequence's tiles, less one), unit 0. */
FT_TRAIT ft_packed_cursor ft_packed_start(const int *cu_seqlens, int batch, int block_m)
{
    int longest = 0;
    for (int s = 0; s < batch; s++) {
        const int tiles = ft_packed_tiles(cu_seqlens, s, block_m);
        longest = tiles > longest ? tiles : longest;
    }
    ft_packed_cursor c = { longest - 1, 0 };
    return c;
}

/* Unit u of the walk as (sequence, query tile, head); 1, or 0 when u is past the last unit.
 * The cursor only moves on: u must not fall below the unit its last call decoded (a block's
 * units rise; another order starts from ft_packed_start again). */
FT_TRAIT int ft_packed_unit(ft_packed_cursor *c, const int *cu_seqlens, int batch, int block_m, int causal,
                            int heads, long long u, int *seq, int *tile, int *head)
{
    for (; c->level >= 0; c->level--) {
        const long long n = ft_packed_level_units(cu_seqlens, batch, block_m, causal, c->level, heads);
        if (u < c->base + n)
            break;
        c->base += n;
    }
    if (c->level < 0)
        return 0;
    const int per = ft_packed_member_units(causal, c->level, heads);
    const long long at = u - c->base;
    int k = (int)(at / per);
    const int r = (int)(at % per);
    int s = 0;
    for (; s < batch; s++)   /* the k-th member: at < the level's units, so it exists */
        if (ft_packed_member(cu_seqlens, s, block_m, causal, c->level) && k-- == 0)
            break;
    *seq = s;
    *tile = causal ? c->level : r % (c->level + 1);
    *head = causal ? r : r / (c->level + 1);
    return 1;
}

#endif
