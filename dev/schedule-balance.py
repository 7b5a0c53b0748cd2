#!/usr/bin/env python3
"""How evenly a persistent forward's static schedule loads its blocks (no GPU needed).

fwd_wgmma's PERSISTENT blocks take work units in turn, block b the units b, b + G, b + 2G, ...
(G resident blocks), walking heads in groups whose K and V fit in 16 MB of L2 (at most 8 heads),
a unit of every head of the group before the next (templates/traits/ft_schedule.h, ft_schedule_grouped).
Under a causal mask a unit is a pair of query tiles, the last with the first (tile_schedule in
templates/families/fwd_wgmma.cu). This prints, for compare.py's grid (hidden 2048, 16384 tokens),
the most loaded block's work over the mean for three schedules:
  single  one query tile a unit (the schedule before the pairs),
  pairs   the causal pairs (today's),
  dynamic each tile, heaviest first, to whichever block is free first (a tile counter in memory,
          FlashAttention-3's causal scheduler), for comparison.
A query tile's work is the key tiles it visits (m + 1 for causal tile m with square tiles) plus
OVERHEAD for its prologue and epilogue. Usage: dev/schedule-balance.py [--blocks 132]
[--tile 128] [--overhead 0.5]
"""
import argparse
import heapq


def l2_group(seqlen, head_dim):
    """Heads whose K and V (bf16) fit in 16 MB together, 1 to 8 (l2_head_group in ft_block.cuh)."""
    per_head = seqlen * 2 * head_dim * 2
    return max(1, min(8, (16 << 20) // per_head))


def units(bh, tiles, group, paired):
    """The work units in walk order: lists of the query tiles' key-tile counts."""
    per_head = (tiles + 1) // 2 if paired else tiles
    out = []
    for first in range(0, bh, group):
        for u in range(per_head):
            for _ in range(min(group, bh - first)):
                if paired:
                    long_tile, short_tile = tiles - 1 - u, u
                    out.append([long_tile + 1] + ([short_tile + 1] if short_tile < long_tile else []))
                else:
                    out.append([tiles - u])   # longest first
    return out


def static_max(work, blocks, overhead):
    load = [0.0] * blocks
    for i, unit in enumerate(work):
        load[i % blocks] += sum(unit) + overhead * len(unit)
    return max(load), sum(load) / blocks


def dynamic_max(tiles_work, blocks, overhead):
    free = [(0.0, b) for b in range(blocks)]
    total = 0.0
    for w in sorted(tiles_work, reverse=True):
        t, b = heapq.heappop(free)
        heapq.heappush(free, (t + w + overhead, b))
        total += w + overhead
    return max(t for t, _ in free), total / blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=132, help="resident blocks (one an SM on the H100)")
    ap.add_argument("--tile", type=int, default=128, help="query and key tile rows")
    ap.add_argument("--overhead", type=float, default=0.5, help="a query tile's fixed cost, in key tiles")
    args = ap.parse_args()
    print("causal: the most loaded block / the mean")
    print(f"{'D':>4} {'N':>6} {'tiles':>6} {'single':>7} {'pairs':>7} {'dynamic':>8}")
    for d in (64, 128):
        for n in (512, 1024, 2048, 4096, 8192, 16384):
            bh = (16384 // n) * (2048 // d)
            t = n // args.tile
            g = l2_group(n, d)
            row = []
            for paired in (False, True):
                mx, mean = static_max(units(bh, t, g, paired), args.blocks, args.overhead)
                row.append(mx / mean)
            all_tiles = [m + 1 for _ in range(bh) for m in range(t)]
            mx, mean = dynamic_max(all_tiles, args.blocks, args.overhead)
            row.append(mx / mean)
            print(f"{d:>4} {n:>6} {bh * t:>6} {row[0]:>7.2f} {row[1]:>7.2f} {row[2]:>8.2f}")


if __name__ == "__main__":
    main()
