"""Where a backward call's time goes, through the Python package on a GPU: for a few shapes, the
median of CUDA-event times around torch.autograd.grad (synchronized each call, so a host slower
than the GPU shows), the host's own time a call (a loop, not synchronized), and each kernel's
median device time from torch.profiler (the launcher's memset included, which Nsight Compute's
kernel list leaves out).

Run after `source dev/gpu/build-lib.sh` (FLASHTUNE_LIBRARY set); FLASHTUNE_HOTPATH=0 for the
Python path. Usage: python3 dev/gpu/backward-probe.py [B,H,N,D,causal[,DTYPE] ...], DTYPE bf16 (the
default), f16, f32 or tf32 (float32 with allow_tf32=True)."""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import flashtune  # noqa: E402

SHAPES = [(1, 16, 512, 128, 0), (1, 16, 512, 128, 1), (32, 32, 512, 64, 1)]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "tf32": torch.float32}


def probe(b, h, n, d, causal, dtype="bf16", reps=200):
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=DTYPES[dtype], requires_grad=True) for _ in range(3))
    o = flashtune.attention(q, k, v, is_causal=bool(causal), allow_tf32=dtype == "tf32")
    do = torch.randn_like(o)

    def grad():
        torch.autograd.grad(o, (q, k, v), do, retain_graph=True)

    for _ in range(20):
        grad()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        grad()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    t0 = time.perf_counter()
    for _ in range(reps):
        grad()
    host_us = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            grad()
        torch.cuda.synchronize()
    kernels = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels.setdefault(ev.name[:40], []).append(getattr(ev, "device_time", None) or ev.cuda_time)
    listed = "; ".join(f"{name} {statistics.median(t):.1f}" for name, t in kernels.items())
    print(f"hot path {os.environ.get('FLASHTUNE_HOTPATH', '1')} {dtype} B{b} H{h} N{n} d{d} causal {causal}: "
          f"event median {statistics.median(times):.1f} us, host {host_us:.1f} us a call | {listed}")


if __name__ == "__main__":
    shapes = [tuple(int(x) if x.isdigit() else x for x in a.split(",")) for a in sys.argv[1:]] or SHAPES
    for shape in shapes:
        probe(*shape)
