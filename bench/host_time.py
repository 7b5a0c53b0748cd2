"""Host time per attention call on a tiny problem (the kernels take a few microseconds, so a loop of
calls is bound by the host): flashtune.attention (with its C hot path, and without it: the Python
path, which costs the row's extra try/finally too) beside SDPA's FlashAttention-2 and cuDNN backends,
forward alone and forward + backward, in one process on the GPU. Each figure is the median over
rounds of (a round's wall time over its calls), the calls queued back to back and the stream
synchronized once at the end of a round; each round times every implementation in turn
(interleaved), and the forward's ratio to SDPA's FlashAttention-2 backend is the median of the
rounds' ratios.

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/host_time.py [--out DIR]"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import flashtune  # noqa: E402

CALLS, ROUNDS = 1000, 21


def timed_round(fn, backend, grad):
    """Microseconds a call over CALLS calls of fn, pinned to an SDPA backend (outside the timing),
    under no_grad for the forward alone (grad False)."""
    with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
        with torch.no_grad() if not grad else contextlib.nullcontext():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(CALLS):
                fn()
            torch.cuda.synchronize()
            return (time.perf_counter() - t0) / CALLS * 1e6


def interleaved(impls, grad):
    """{name: [µs a call, one a round]}: every round times each implementation in turn, so a drift
    of the machine's speed (seen up to 45% between runs) falls on all of them alike."""
    times = {name: [] for name in impls}
    for name, (fn, backend) in impls.items():   # warm: kernels loaded, caches filled
        for _ in range(3):
            timed_round(fn, backend, grad)
    for _ in range(ROUNDS):
        for name, (fn, backend) in impls.items():
            times[name].append(timed_round(fn, backend, grad))
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="also write host_time.json there")
    args = ap.parse_args()
    torch.manual_seed(0)
    shape = (1, 2, 128, 64)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    # (the call, the SDPA backend it is pinned to for the whole measurement: outside the timed calls)
    impls = {"flashtune": (lambda: flashtune.attention(q, k, v, is_causal=True), None)}
    from flashtune import _attention
    flashtune.attention(q, k, v, is_causal=True)   # binds the C hot path, when it was built

    def python_path():   # the same call with the C hot path unbound
        hot = _attention._hot_attention, _attention._hot_forward
        _attention._hot_attention = _attention._hot_forward = None
        try:
            return flashtune.attention(q, k, v, is_causal=True)
        finally:
            _attention._hot_attention, _attention._hot_forward = hot

    if _attention._hot_attention is not None:
        impls["flashtune, Python path"] = (python_path, None)
    sdpa = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    impls["SDPA flash"] = (sdpa, SDPBackend.FLASH_ATTENTION)
    impls["SDPA cudnn"] = (sdpa, SDPBackend.CUDNN_ATTENTION)
    for name, (fn, backend) in list(impls.items()):   # a backend this machine's torch does not have
        try:
            timed_round(fn, backend, False)
        except Exception as e:
            print(f"{name}: {str(e).splitlines()[0]}")
            del impls[name]
    backward = {name: (lambda fn=fn: torch.autograd.grad(fn(), (q, k, v), do), backend)
                for name, (fn, backend) in impls.items()}
    fwd, both = interleaved(impls, False), interleaved(backward, True)
    base = "SDPA flash"
    rows = {name: {"forward_us": statistics.median(fwd[name]), "forward_backward_us": statistics.median(both[name]),
                   # the median of the rounds' ratios to SDPA's FlashAttention-2 backend (same round)
                   "forward_ratio": statistics.median(a / b for a, b in zip(fwd[name], fwd[base])) if base in fwd
                   else None}
            for name in impls}
    device = torch.cuda.get_device_name()
    print(f"host time per call, {device}, torch {torch.__version__}, shape {shape} bf16 causal")
    print(f"{ROUNDS} interleaved rounds of {CALLS} calls; medians")
    print("| implementation | forward µs | forward / SDPA flash (median of rounds) | forward + backward µs |")
    print("|---|---:|---:|---:|")
    for name, r in rows.items():
        ratio = f"{r['forward_ratio']:.3f}" if r["forward_ratio"] is not None else "-"
        print(f"| {name} | {r['forward_us']:.1f} | {ratio} | {r['forward_backward_us']:.1f} |")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "host_time.json"), "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "shape": shape, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
