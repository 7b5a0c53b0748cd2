"""Host time per attention call on a tiny problem (the kernels take a few microseconds, so a loop of
calls is bound by the host): flashtune.attention (with its C hot path, and without it: the Python
path, which costs the row's extra try/finally too) beside SDPA's FlashAttention-2 and cuDNN backends,
forward alone and forward + backward, in one process on the GPU. Each figure is the median over
several rounds of (a round's wall time over its calls), the calls queued back to back and the
stream synchronized once at the end of a round.

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

CALLS, ROUNDS = 2000, 7


def per_call_us(fn):
    for _ in range(200):   # warm: kernels loaded, caches filled
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - t0) / CALLS * 1e6)
    return statistics.median(rounds)


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
    rows = {}
    for name, (fn, backend) in impls.items():
        try:
            with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
                with torch.no_grad():
                    fwd = per_call_us(fn)
                both = per_call_us(lambda: torch.autograd.grad(fn(), (q, k, v), do))
            rows[name] = {"forward_us": fwd, "forward_backward_us": both}
        except Exception as e:   # a backend this machine's torch does not have
            rows[name] = {"error": str(e).splitlines()[0]}
    device = torch.cuda.get_device_name()
    print(f"host time per call, {device}, torch {torch.__version__}, shape {shape} bf16 causal")
    print(f"| implementation | forward µs | forward + backward µs |\n|---|---:|---:|")
    for name, r in rows.items():
        if "error" in r:
            print(f"| {name} | {r['error']} | |")
        else:
            print(f"| {name} | {r['forward_us']:.1f} | {r['forward_backward_us']:.1f} |")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "host_time.json"), "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "shape": shape, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
