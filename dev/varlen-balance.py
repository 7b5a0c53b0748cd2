#!/usr/bin/env python3
"""How much a packed batch's forward could gain from a scheduler of its own (no GPU needed).

Written before the packed walk was built, to predict it (notes/kernels.md has the prediction and
what was measured): it replays the plain grid a packed batch then ran (the runtime turned the
persistent walk off for it), and the snake in the order ft_packed.h first had, causal tiles by
tile index across sequences, one tile a unit; the order built takes causal tiles in pairs by
sequence and heads in L2 groups (the balance of that one is not modelled here).
The plain grid: grid.x = the longest sequence's query tiles, grid.y =
batch x heads, one block a tile, x fastest (templates/traits/ft_schedule.h); a block past its
sequence's tiles returns at once, and under a causal mask a sequence's own tiles run last-first.
The hardware hands each block to the first SM with room, in that order. This replays that as
list scheduling on `--sms` SMs of one block each, against two alternatives:
  grid     today's plain grid, dead blocks costing --dead each,
  static   the persistent walk as built (tile_schedule in templates/families/fwd_wgmma.cu, in
           the simple form of grid order): --sms resident blocks, block b taking units b, b + G,
           ... of the longest sequence's tiles over every head, a dead unit costing --dead; a
           block's load is fixed in advance, so uneven lengths leave some blocks long,
  lpt      every live tile of the batch, heaviest first, to whichever resident block is free
           first (a tile counter in memory: the packed scheduler the forward issue asks for),
  snake    the same heaviest-first order (templates/traits/ft_packed.h) dealt in advance, round r
           giving block b unit r G + b, or r G + G - 1 - b in odd rounds: no counter, each block
           computes its own units as the walks built today do,
  dense    the dense batch bench/varlen.py compares with (B sequences of length L, L = sum(n^2) /
           sum(n) rounded to 64): the throughput a packed batch should keep.
A tile's work is the key tiles it visits (its sequence's, or m + 1 for causal tile m of square
tiles) plus its fixed cost: --overhead for a block of one tile (its Q and first K/V loads, its
epilogue, nothing under them), --persistent-overhead where a resident block loads the next tile
under this one (lpt, and the dense batch, whose winners are persistent). Prints each schedule's makespan against
the ideal (all work over all SMs) and the packed schedules' time against the dense one's at
equal work. Usage: dev/varlen-balance.py [--sms 132] [--tile 128] [--heads 16]
[--overhead 0.5] [--dead 0.02] [--docs N:LO:HI]
"""
import argparse
import heapq
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from varlen_lengths import documents, mixed_lengths  # noqa: E402


def tiles_of(n, tile):
    return (n + tile - 1) // tile


def tile_work(n, m, tile, causal, overhead):
    """Key tiles query tile m of a sequence of n tokens visits, plus the fixed cost."""
    return (m + 1 if causal else tiles_of(n, tile)) + overhead


def list_schedule(works, sms):
    """Makespan of the blocks in order, each to the SM free first."""
    free = [0.0] * sms
    heapq.heapify(free)
    for w in works:
        heapq.heappush(free, heapq.heappop(free) + w)
    return max(free)


def plain_grid(lengths, heads, tile, causal, overhead, dead):
    longest = max(tiles_of(n, tile) for n in lengths)
    works = []
    for n in lengths:
        mt = tiles_of(n, tile)
        for _ in range(heads):
            for x in range(longest):
                if x >= mt:
                    works.append(dead)
                else:
                    m = mt - 1 - x if causal else x   # a sequence's own tiles last-first under a mask
                    works.append(tile_work(n, m, tile, causal, overhead))
    return works


def live_tiles(lengths, heads, tile, causal, overhead):
    return [tile_work(n, m, tile, causal, overhead) for n in lengths for _ in range(heads)
            for m in range(tiles_of(n, tile))]


def packed_order(lengths, heads, tile, causal, overhead):
    """The tiles' work in ft_packed.h's first order: causal by tile index from the top, every
    sequence that has that tile; otherwise by tile count from the longest, every tile of those
    sequences."""
    tiles = [tiles_of(n, tile) for n in lengths]
    order = []
    for level in range(max(tiles) - 1, -1, -1):
        for s, n in enumerate(lengths):
            if causal and tiles[s] > level:
                order += [tile_work(n, level, tile, causal, overhead)] * heads
            elif not causal and tiles[s] == level + 1:
                order += [tile_work(n, 0, tile, causal, overhead)] * (tiles[s] * heads)
    return order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--tile", type=int, default=128)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--overhead", type=float, default=0.5)
    ap.add_argument("--persistent-overhead", type=float, default=None,
                    help="a persistent block's fixed cost a tile (default: --overhead)")
    ap.add_argument("--dead", type=float, default=0.02)
    ap.add_argument("--docs", help="N:LO:HI documents instead of bench/varlen.py's default batch")
    a = ap.parse_args()
    pov = a.overhead if a.persistent_overhead is None else a.persistent_overhead
    lengths = documents(a.docs) if a.docs else mixed_lengths()
    square = sum(n * n for n in lengths) / sum(lengths)
    dense_len = max(64, int(round(square / 64)) * 64)
    dense = [dense_len] * max(1, sum(lengths) // dense_len)
    print(f"{len(lengths)} sequences, {min(lengths)}-{max(lengths)} tokens ({sum(lengths)} in all), "
          f"{a.heads} heads, {a.tile}-row tiles, {a.sms} SMs; dense: {len(dense)} x {dense_len}")
    for causal in (0, 1):
        live = live_tiles(lengths, a.heads, a.tile, causal, a.overhead)
        ideal = sum(live) / a.sms
        grid = list_schedule(plain_grid(lengths, a.heads, a.tile, causal, a.overhead, a.dead), a.sms)
        live_p = live_tiles(lengths, a.heads, a.tile, causal, pov)
        lpt = list_schedule(sorted(live_p, reverse=True), a.sms)
        walk = plain_grid(lengths, a.heads, a.tile, causal, pov, a.dead)
        static = max(sum(walk[b::a.sms]) for b in range(a.sms))
        loads = [0.0] * a.sms
        for i, w in enumerate(packed_order(lengths, a.heads, a.tile, causal, pov)):
            r, k = divmod(i, a.sms)
            loads[k if r % 2 == 0 else a.sms - 1 - k] += w
        snake = max(loads)
        dense_works = plain_grid(dense, a.heads, a.tile, causal, pov, a.dead)
        dense_span = list_schedule(dense_works, a.sms)
        # Throughput at equal work (the key tiles visited, fixed costs aside): the dense batch's
        # work differs a little from the packed one's.
        useful = sum(live_tiles(lengths, a.heads, a.tile, causal, 0))
        dense_useful = sum(live_tiles(dense, a.heads, a.tile, causal, 0))
        dense_rate = dense_useful / dense_span
        print(f"{'causal' if causal else 'non-causal':>10}: makespan / ideal: grid {grid / ideal:.3f}, "
              f"lpt {lpt / (sum(live_p) / a.sms):.3f}, dense {dense_span / (sum(dense_works) / a.sms):.3f}; "
              f"throughput against the dense batch's: grid {useful / grid / dense_rate:.3f}, "
              f"static {useful / static / dense_rate:.3f}, lpt {useful / lpt / dense_rate:.3f}, "
              f"snake {useful / snake / dense_rate:.3f}")


if __name__ == "__main__":
    main()
