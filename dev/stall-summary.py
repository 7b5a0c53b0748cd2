#!/usr/bin/env python3
"""Where a kernel's warps wait, from the SASS page dev/gpu/profile-peer.sh brings back
(sass-*.csv: Nsight Compute's source page with stall samples): the stall reasons' shares of all
samples, the opcodes by samples (with how often each ran), and the instructions with the most
samples and their two main reasons. Samples of warps that only spin (a producer's try-wait loops,
BRA on long scoreboard) count like any other: read the top instructions, not the totals alone.

Usage: dev/stall-summary.py SASS.csv [TOP]     (TOP instructions, default 25)
       dev/stall-summary.py SASS.csv --around ADDRESS_SUFFIX [N]   (N instructions before it)
       dev/stall-summary.py SASS.csv --ranges [--per N] ADDR ADDR ...
           (the samples, instructions run and main reasons between consecutive addresses, each
           given by its last hex digits as --around prints them: a step's phases, bounded by its
           barriers and waits; --per divides the instructions run, e.g. by the steps)"""
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def load(path):
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if SAMPLES in r)
    cols = rows[head]
    data = [dict(zip(cols, r)) for r in rows[head + 1:] if len(r) == len(cols)]
    reasons = [c for c in cols if c.startswith("stall_") and "(Not" not in c]
    return data, reasons


def count(row, col):
    return int(row.get(col) or 0)


def opcode(source):
    words = source.split()
    word = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
    return word.split(".")[0]


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    data, reasons = load(argv[1])
    total = sum(count(r, SAMPLES) for r in data) or 1
    if len(argv) > 3 and argv[2] == "--around":
        at = next(i for i, r in enumerate(data) if r["Address"].endswith(argv[3]))
        n = int(argv[4]) if len(argv) > 4 else 20
        for r in data[max(0, at - n):at + 4]:
            print(f"{r['Address'][-5:]} {100 * count(r, SAMPLES) / total:5.1f}% "
                  f"ran {count(r, 'Instructions Executed'):>10,d}  {r['Source'].strip()[:90]}")
        return
    if len(argv) > 3 and argv[2] == "--ranges":
        rest = argv[3:]
        per = 1.0
        if rest[:1] == ["--per"]:
            per, rest = float(rest[1]), rest[2:]
        low = lambda a: int(a[-5:], 16)
        bounds = [int(b, 16) for b in rest]
        for lo, hi in zip(bounds, bounds[1:]):
            part = [r for r in data if lo <= low(r["Address"]) < hi]
            s = sum(count(r, SAMPLES) for r in part)
            ran = sum(count(r, "Instructions Executed") for r in part) / per
            main = sorted(((sum(count(r, c) for r in part), c[6:]) for c in reasons), reverse=True)[:4]
            print(f"{lo:05x}-{hi:05x} {100 * s / total:5.1f}%  ran {ran:10.1f}  " +
                  ", ".join(f"{name} {100 * v / total:.1f}" for v, name in main))
        return
    top = int(argv[2]) if len(argv) > 2 else 25
    by_reason = {c: sum(count(r, c) for r in data) for c in reasons}
    print(f"{total:,d} samples; " + ", ".join(f"{c[6:]} {100 * v / total:.1f}%"
                                             for c, v in sorted(by_reason.items(), key=lambda x: -x[1])[:10]))
    ops = {}
    for r in data:
        o = ops.setdefault(opcode(r["Source"].strip()), [0, 0])
        o[0] += count(r, "Instructions Executed")
        o[1] += count(r, SAMPLES)
    print("opcode      ran (warp instructions)  samples")
    for name, (ran, s) in sorted(ops.items(), key=lambda x: -x[1][1])[:20]:
        print(f"  {name:10s} {ran:>14,d}  {100 * s / total:6.1f}%")
    print("instructions with the most samples:")
    for r in sorted(data, key=lambda r: -count(r, SAMPLES))[:top]:
        main_two = sorted(((count(r, c), c[6:]) for c in reasons), reverse=True)[:2]
        print(f"  {r['Address'][-5:]} {100 * count(r, SAMPLES) / total:5.1f}%  "
              f"{main_two[0][1]} {main_two[0][0]}, {main_two[1][1]} {main_two[1][0]}  {r['Source'].strip()[:70]}")


if __name__ == "__main__":
    main(sys.argv)
