"""Where a forward call's time goes, through the Python package on a GPU, timed as bench/compare.py
times it: for a few shapes, triton.testing.do_bench's median (L2 flushed before each call, calls
queued back to back) beside each kernel's median device time from torch.profiler over calls run
the same way (the flush's own kernel listed apart). A kernel whose device time matches do_bench's
median accounts for the call; a gap is other work in the call or the GPU idle between kernels.

Also the host's side: the wall time of a call among 200 queued back to back without a flush; where it
exceeds the kernels' device time, the GPU waits for the host (the call is launch-bound). Those calls
find K and V in the L2, the profiled ones after a flush, so the comparison errs towards the GPU.

Run after `source dev/gpu/build-lib.sh` (FLASHTUNE_LIBRARY set). Usage:
python3 dev/gpu/forward-probe.py [B,H,N,D,causal[,DTYPE[,HK,NQ[,GRAD]]] ...], DTYPE bf16 (the default)
or f16; HK: K/V heads (grouped queries), NQ: query rows (then the causal diagonal bottom-right, as in
speculative decoding: bench/features.py's spec-decode row is 8,32,4096,128,1,bf16,8,16,1); GRAD 1: the
inputs require gradients (the forward runs under autograd, as features.py's does); inputs laid out
[B, N, H, D] as compare.py's."""
import os
import statistics
import sys
import time

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import flashtune  # noqa: E402

SHAPES = [(4, 16, 4096, 96, 0), (4, 16, 4096, 96, 1), (4, 16, 4096, 128, 1), (4, 16, 4096, 128, 0)]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def probe(b, h, n, d, causal, dtype="bf16", hk=0, nq=0, grad=0):
    hk, nq = hk or h, nq or n
    q = torch.randn(b, nq, h, d, device="cuda", dtype=DTYPES[dtype], requires_grad=bool(grad)).transpose(1, 2)
    k, v = (torch.randn(b, n, hk, d, device="cuda", dtype=DTYPES[dtype], requires_grad=bool(grad)).transpose(1, 2)
            for _ in range(2))
    align = "bottom_right" if causal and nq != n else "top_left"

    def call():
        flashtune.attention(q, k, v, is_causal=bool(causal), enable_gqa=hk != h, causal_align=align)

    times = do_bench(call, warmup=25, rep=100, return_mode="all")
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(50):
            flush.zero_()
            call()
        torch.cuda.synchronize()
    kernels = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels.setdefault(ev.name[:40], []).append(getattr(ev, "device_time", None) or ev.cuda_time)
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(200):
        call()
    torch.cuda.synchronize()
    wall_us = (time.perf_counter() - start) / 200 * 1e6
    listed = "; ".join(f"{name} {statistics.median(t):.1f} us x{len(t)}" for name, t in kernels.items())
    shape = f"{dtype} B{b} H{h}/{hk} N{nq}/{n} d{d} causal {causal}{' requires_grad' if grad else ''}"
    print(f"{shape}: do_bench median {statistics.median(times) * 1e3:.1f} us, back to back {wall_us:.1f} us a call "
          f"| {listed}", flush=True)


if __name__ == "__main__":
    shapes = [tuple(int(x) if x.isdigit() else x for x in a.split(",")) for a in sys.argv[1:]] or SHAPES
    for shape in shapes:
        probe(*shape)
