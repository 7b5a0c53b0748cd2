"""Short bursts against sustained load: does a kernel's speed in a long benchmark (compare.py, a
sweep) fall below bench_kernels' because the GPU slows its clock under sustained load, and does
it slow it as much for a peer? For each implementation and problem: a burst (20 timed calls after
2 s idle, as bench_kernels times) and a sustained run (calls back to back for SUSTAIN_S seconds,
the last half timed), with nvidia-smi sampling the SM clock, the power drawn and the active clock
event reasons (throttle reasons) every 50 ms. One row each: both speeds in TFLOP/s (the
FlashAttention FLOP convention), the sustained clock and power, and the sustained work a clock
(TFLOP/s per GHz): with --dtypes bf16,f16 it says whether f16 runs slower at the same clock or at a
lower one under the same power cap.

Run after `source dev/gpu/build-lib.sh` (FLASHTUNE_LIBRARY set; FA4 where staged there).
Usage: python3 dev/gpu/clock-probe.py [--impls flashtune,fa4,cudnn] [--dtypes bf16] [--sustain 6] [--out DIR]"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from one_pass import backend  # noqa: E402

# (name, B, H, N, D, causal, backward)
PROBLEMS = [
    ("fwd d128 N4096", 4, 16, 4096, 128, False, False),
    ("fwd d128 N16384", 1, 16, 16384, 128, False, False),
    ("bwd d128 N16384", 1, 16, 16384, 128, False, True),
    ("bwd d128 causal N4096", 4, 16, 4096, 128, True, True),
]


def flops(b, h, n, d, causal, bwd):
    f = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return f * (2.5 if bwd else 1.0)


DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def call_of(impl, dtype, b, h, n, d, causal, bwd):
    run, bnhd = backend(impl, None)
    q, k, v = (torch.randn((b, n, h, d), device="cuda", dtype=DTYPES[dtype]).requires_grad_(bwd) for _ in range(3))
    inputs = (q, k, v) if bnhd else (q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    if not bwd:
        return lambda: run(*inputs, causal)
    o = run(*inputs, causal)
    do = torch.randn_like(o)
    return lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)


def timed(call, reps):
    """Median ms of reps calls, each between two CUDA events."""
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times)


def samples_between(path, t0, t1):
    """(MHz, W, reasons) samples of nvidia-smi's log taken between wall times t0 and t1."""
    out = []
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        try:
            t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((t, float(parts[1]), float(parts[2]), parts[3]))
        except ValueError:
            continue
    return [(mhz, w, r) for t, mhz, w, r in out if t0 <= t <= t1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impls", default="flashtune,fa4,cudnn")
    ap.add_argument("--dtypes", default="bf16", help="comma-separated, of " + ",".join(DTYPES))
    ap.add_argument("--sustain", type=float, default=6.0, help="seconds of back-to-back calls")
    ap.add_argument("--out", default=tempfile.gettempdir())
    args = ap.parse_args()
    dtypes = args.dtypes.split(",")
    for dt in dtypes:
        if dt not in DTYPES:
            ap.error(f"--dtypes: {dt!r} is not one of {', '.join(DTYPES)}")
    log = os.path.join(args.out, "clock-probe-smi.csv")
    # The reasons' field was renamed (clocks_throttle_reasons before the 535 drivers).
    reasons = "clocks_event_reasons.active"
    if subprocess.run(["nvidia-smi", f"--query-gpu={reasons}", "--format=csv"], capture_output=True).returncode:
        reasons = "clocks_throttle_reasons.active"
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu=timestamp,clocks.sm,power.draw,{reasons}",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=open(log, "w"),
                           stderr=subprocess.DEVNULL)
    rows = []
    try:
        for name, b, h, n, d, causal, bwd in PROBLEMS:
            for impl, dtype in ((i, t) for i in args.impls.split(",") for t in dtypes):
                try:
                    call = call_of(impl, dtype, b, h, n, d, causal, bwd)
                    for _ in range(5):
                        call()
                    torch.cuda.synchronize()
                except (SystemExit, Exception) as e:   # a backend that cannot run the problem: the next
                    print(f"{impl} {dtype}: {name}: {e}", file=sys.stderr)
                    torch.cuda.synchronize()
                    continue
                time.sleep(2.0)
                for _ in range(3):
                    call()
                burst = timed(call, 20)
                start = time.time()
                while time.time() - start < args.sustain / 2:
                    timed(call, 10)
                t0 = time.time()
                sustained = timed(call, max(10, int(args.sustain / 2 * 1e3 / max(burst, 0.01))))
                t1 = time.time()
                time.sleep(0.2)   # the log's last samples
                s = samples_between(log, t0, t1)
                mhz = statistics.median(x[0] for x in s) if s else 0.0
                watts = statistics.median(x[1] for x in s) if s else 0.0
                reasons = sorted({x[2] for x in s})
                f = flops(b, h, n, d, causal, bwd)
                per_ghz = f / sustained / 1e9 / (mhz / 1e3) if mhz else 0.0
                rows.append((name, impl, dtype, f / burst / 1e9, f / sustained / 1e9, mhz, per_ghz, watts,
                             " ".join(reasons)))
                print("%-22s %-10s %-4s burst %6.1f  sustained %6.1f TFLOP/s  %5.0f MHz  %6.1f a GHz  %5.0f W  "
                      "reasons %s" % rows[-1], flush=True)
    finally:   # the rows measured so far, whatever stopped the loop
        smi.terminate()
        with open(os.path.join(args.out, "clock-probe.md"), "w") as f:
            f.write("| problem | impl | dtype | burst TFLOP/s | sustained TFLOP/s | sustained MHz | TFLOP/s a GHz | W "
                    "| event reasons |\n")
            f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
            for r in rows:
                f.write("| %s | %s | %s | %.1f | %.1f | %.0f | %.1f | %.0f | %s |\n" % r)


if __name__ == "__main__":
    main()
