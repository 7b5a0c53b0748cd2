#!/usr/bin/env python3
"""Tie sets against the plain fastest pick, judged across two truth sweeps of the same candidates.

For each workload of truth A, the plain pick is the fastest candidate; the tie-set pick takes,
among the candidates within MARGIN of that fastest, the one within MARGIN of the fastest at the
most other workloads of the same head dim (the choice that holds across neighbouring shapes),
then the fastest of those. Each pick is judged by truth B's times (B's best over B's time of the
pick), and the other way round. Usage: dev/truth-ties.py TRUTH_A.csv TRUTH_B.csv (the CSVs of
dev/gpu/truth.sh, one direction, the same workloads).
"""
import collections
import csv
import sys

KEY = ("head_dim", "causal", "seqlen")
SKIP = {"device", "arch", "winner", "kernel", "family", "status", "median_ms", "min_ms", "spread", "tflops",
        "rel_error", "registers", "spills", "smem", "message", "EVEN_M", "EVEN_N"}


def load(path):
    times = collections.defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok":
                continue
            params = tuple((k, v) for k, v in row.items() if k.isupper() and k not in SKIP)
            times[tuple(row[k] for k in KEY)][params] = float(row["median_ms"])
    return times


def pick(times, workload, margin):
    best = min(times[workload].values())
    ties = [c for c, t in times[workload].items() if t <= best * (1 + margin)]

    def holds(c):
        return sum(1 for w in times if w != workload and w[0] == workload[0] and c in times[w]
                   and times[w][c] <= min(times[w].values()) * (1 + margin))
    return max(ties, key=lambda c: (holds(c), -times[workload][c]))


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    for x, y, name in ((a, b, "A's picks judged by B"), (b, a, "B's picks judged by A")):
        for margin in (0, 0.01, 0.02, 0.03, 0.05):
            q = [min(y[w].values()) / y[w][pick(x, w, margin)] for w in x if w in y]
            print(f"{name}, margin {margin:.2f}: mean {sum(q) / len(q):.4f}, worst {min(q):.4f}")


if __name__ == "__main__":
    main()
