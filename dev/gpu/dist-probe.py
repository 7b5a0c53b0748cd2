"""How one kernel's time moves from call to call under sustained load, through the Python package
on a GPU: for a few forward shapes ([B, N, H, D] bf16, the runtime's choice), 300 calls each
between CUDA events, with 256 MB zeroed before each call (as triton.testing.do_bench flushes L2)
and then without; prints the quantiles, the count of calls in each 2 % above the fastest, and the
first 40 times in order. Steps that persist over many calls are the board's clocks falling under
its power cap, not the kernel (notes/tuning.md, section 11).

Run after `source dev/gpu/build-lib.sh` (FLASHTUNE_LIBRARY set). Usage:
python3 dev/gpu/dist-probe.py [B,H,N,D,causal ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import flashtune  # noqa: E402

SHAPES = [(4, 16, 4096, 128, 1), (4, 16, 4096, 96, 0), (1, 16, 16384, 128, 0), (4, 16, 4096, 128, 0)]


def run(b, h, n, d, causal, flush_on=True, reps=300):
    q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2) for _ in range(3))
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(30):
        flashtune.attention(q, k, v, is_causal=bool(causal))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        if flush_on:
            flush.zero_()
        start.record()
        flashtune.attention(q, k, v, is_causal=bool(causal))
        end.record()
    torch.cuda.synchronize()
    times = [start.elapsed_time(end) * 1e3 for start, end in events]
    ordered = sorted(times)
    pct = lambda p: ordered[min(len(ordered) - 1, int(p * len(ordered)))]   # noqa: E731
    buckets = {}
    for x in times:
        k = int((x / ordered[0] - 1) * 50)   # 2 % buckets above the fastest
        buckets[k] = buckets.get(k, 0) + 1
    print(f"B{b} H{h} N{n} d{d} c{causal} flush {int(flush_on)}: p0 {pct(0):.1f} p10 {pct(.1):.1f} "
          f"p50 {pct(.5):.1f} p90 {pct(.9):.1f} max {ordered[-1]:.1f} | 2%-buckets {sorted(buckets.items())} | "
          f"first 40 {[round(x) for x in times[:40]]}", flush=True)


if __name__ == "__main__":
    shapes = [tuple(int(x) for x in a.split(",")) for a in sys.argv[1:]] or SHAPES
    for shape in shapes:
        for flush_on in (True, False):
            run(*shape, flush_on=flush_on)
