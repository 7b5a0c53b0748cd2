"""A training step of the MHA example (python/examples/mha.py's layer: projections, attention,
output projection), forward, backward and an AdamW step, with flashtune.attention against SDPA's
default backend as the attention, in one process on the GPU: time per step (CUDA events, median of
the timed steps after a warm-up). bf16, causal, hidden 2048 = 16 heads of 128, N 4096, batch 2 by
default.

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/train_step.py [--seqlen N] [--batch B]"""
import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "examples"))
import flashtune  # noqa: E402
from mha import MultiHeadAttention  # noqa: E402


def step_ms(layer, x, opt, steps=30, warmup=5):
    times = []
    for i in range(warmup + steps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        y = layer(x, is_causal=True)
        y.float().square().mean().backward()
        opt.step()
        stop.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seqlen", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--profile", action="store_true",
                    help="also print each attention's step split by kernel (torch.profiler, CUDA time)")
    args = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.batch, args.seqlen, args.hidden, device="cuda", dtype=torch.bfloat16)
    rows = {}
    for impl in ("pytorch", "flashtune") * 4:   # four times each, interleaved
        layer = MultiHeadAttention(args.hidden, args.heads, impl).to(device="cuda", dtype=torch.bfloat16)
        opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
        rows.setdefault(impl, []).append(step_ms(layer, x, opt))
    print(f"training step, {torch.cuda.get_device_name()}, torch {torch.__version__}: B {args.batch} N {args.seqlen} "
          f"hidden {args.hidden} heads {args.heads} bf16 causal")
    print("| attention | step ms (four runs) |\n|---|---:|")
    for impl, ms in rows.items():
        print(f"| {'SDPA default' if impl == 'pytorch' else impl} | {' / '.join(f'{m:.3f}' for m in ms)} |")
    best = {impl: min(ms) for impl, ms in rows.items()}
    mid = {impl: statistics.median(ms) for impl, ms in rows.items()}
    print(f"flashtune / SDPA per step: {best['pytorch'] / best['flashtune']:.3f}x (best of each), "
          f"{mid['pytorch'] / mid['flashtune']:.3f}x (median of each)")
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        for impl in ("pytorch", "flashtune"):
            layer = MultiHeadAttention(args.hidden, args.heads, impl).to(device="cuda", dtype=torch.bfloat16)
            opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
            step_ms(layer, x, opt, steps=3, warmup=3)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step_ms(layer, x, opt, steps=5, warmup=0)
            print(f"== {impl}: CUDA time of 5 steps by kernel")
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=60))


if __name__ == "__main__":
    main()
