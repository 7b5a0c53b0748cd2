"""The packed batches bench/varlen.py times, without torch (dev/varlen-balance.py models their
schedules on the CPU): log-uniform sequence lengths from a fixed seed."""
import math
import random

TOKENS = 65536


def mixed_lengths(seed=0, lo=256, hi=8192, total=TOKENS):
    """Log-uniform lengths in [lo, hi] summing to total (the last one trimmed, kept >= lo)."""
    rng, lengths = random.Random(seed), []
    while sum(lengths) < total:
        lengths.append(int(round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))
    lengths[-1] -= sum(lengths) - total
    if lengths[-1] < lo:
        lengths[-2] += lengths.pop()
    return lengths


def documents(spec, seed=0):
    """--docs N:LO:HI: N log-uniform lengths in [LO, HI]."""
    n, lo, hi = (int(x) for x in spec.split(":"))
    rng = random.Random(seed)
    return [int(round(math.exp(rng.uniform(math.log(lo), math.log(hi))))) for _ in range(n)]
