/* ft_packed.h: the order a packed (variable-length) batch's tiles are taken in, heaviest first,
 * written once for the host and the kernels (ft_traits.h's rules: C11/C++17, no includes;
 * ft_traits.h first). The tiles are rows of a sequence: query tiles (the forward, block_m its
 * query rows), or key tiles (the backward: its cu_seqlens_k and key tiles as cu_seqlens and
 * block_m, causal 0). The packed scheduler's part: resident blocks take unit numbers (dealt in
 * advance, round r giving block b unit r G + b, or r G + G - 1 - b in odd rounds: ft_packed_deal;
 * or the backward's tickets, which rise for each block) and decode each here, so the order needs only the batch's prefix sums of lengths, read on the
 * device (no host sort, nothing read back: a CUDA graph captures it). ft_schedule.h comes first
 * (its grouped walk of heads).
 *
 * Why this order (notes/kernels.md, packed batches modelled): a block's fixed cost a tile is what
 * a packed batch loses against a dense one, which a persistent block hides by loading the next
 * tile under this one; and persistent blocks stay balanced over uneven lengths only if the
 * heaviest units go first to whichever block is free. A unit is one head's query tile, or under
 * a causal mask a pair of them (the last tile with the first, the second last with the second,
 * ...; an odd count's middle tile alone), as in a dense batch's persistent walk: a pair of a
 * sequence of T tiles visits T + 1 key tiles whichever it is, a tile T. So a unit's work grows
 * with its sequence's tile count alone, and the walk goes by levels, tile counts from the
 * longest sequence's down, taking each sequence of exactly that many tiles in batch order.
 * Within a sequence its heads go in groups of `group` (the heads whose K and V fit L2 together):
 * unit 0 of each head of the group, then unit 1 of each, ..., so that the blocks at work at once
 * share a few heads' K and V, as the dense walk does (a walk by tile index across sequences,
 * heaviest tile first, shared no K and V between blocks at work: every tile's keys from memory).
 * The work of the units never rises along the walk (tested: test_packed_walk) where each sequence
 * is square and the mask causal or none; its keys' own lengths and a window's band are not
 * weighed (an order, not a bound: any order is correct). A level's members
 * are found by a scan of the batch, so a block walking its units upwards keeps a cursor (the
 * level it is in and that level's first unit) and rescans only as it moves on. */
#ifndef FT_PACKED_H
#define FT_PACKED_H

/* Sequence s's tiles of block_m rows (cu_seqlens: the batch's prefix sums of lengths). */
FT_TRAIT int ft_packed_tiles(const int *cu_seqlens, int s, int block_m)
{
    return (cu_seqlens[s + 1] - cu_seqlens[s] + block_m - 1) / block_m;
}

/* One head's units of a sequence of `tiles` query tiles: its tiles, or (causal) their pairs. */
FT_TRAIT int ft_packed_head_units(int tiles, int causal)
{
    return causal ? (tiles + 1) / 2 : tiles;
}

/* The units at `level` (sequences of level + 1 tiles), over the batch. */
FT_TRAIT int ft_packed_level_units(const int *cu_seqlens, int batch, int block_m, int causal, int level, int heads)
{
    int members = 0;
    for (int s = 0; s < batch; s++)
        members += ft_packed_tiles(cu_seqlens, s, block_m) == level + 1;
    return members * ft_packed_head_units(level + 1, causal) * heads;
}

/* Where a walk is: `level`, whose first unit is `base`. */
typedef struct ft_packed_cursor {
    int level, base;
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

/* The unit block b of `blocks` takes in round r: dealt as a snake, so that the blocks that take
 * the heavier unit of a round take the lighter one of the next (with one tile a unit, the order
 * first modelled, within 0.2-3.7 % of an ideal balance on dev/varlen-balance.py's batches). A
 * block's units rise with r. */
FT_TRAIT int ft_packed_deal(int r, int b, int blocks)
{
    return r * blocks + (r % 2 ? blocks - 1 - b : b);
}

/* Unit u of the walk as (sequence, the head's unit, head), `group` heads walked together; 1, or 0
 * when u is past the last unit. The head's unit is a query tile, or (causal) pair p: tiles
 * T - 1 - p and p of the sequence's T. The cursor only moves on: u must not fall below the unit
 * its last call decoded (a block's units rise; another order starts from ft_packed_start again). */
FT_TRAIT int ft_packed_unit(ft_packed_cursor *c, const int *cu_seqlens, int batch, int block_m, int causal,
                            int heads, int group, int u, int *seq, int *unit, int *head)
{
    for (; c->level >= 0; c->level--) {
        const int n = ft_packed_level_units(cu_seqlens, batch, block_m, causal, c->level, heads);
        if (u < c->base + n)
            break;
        c->base += n;
    }
    if (c->level < 0)
        return 0;
    const int per_head = ft_packed_head_units(c->level + 1, causal), at = u - c->base;
    int k = at / (per_head * heads);   /* the k-th member: at < the level's units, so it exists */
    const int r = at % (per_head * heads);
    int s = 0;
    for (; s < batch; s++)
        if (ft_packed_tiles(cu_seqlens, s, block_m) == c->level + 1 && k-- == 0)
            break;
    *seq = s;
    ft_schedule_grouped(r, group, per_head, heads, unit, head);
    return 1;
}

#endif
