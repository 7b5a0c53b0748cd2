"""The problems real models run, beyond compare.py's grid: flashtune against FlashAttention-4 and
cuDNN in one process and one run on the GPU.

Each point is one problem with the feature that makes it (bf16, forward and backward, median of
compare.py's timer):
- grouped-query attention, Llama 3 8B's 32 query heads over 8 K/V heads, and Llama 3 70B's 64
  over 8 (groups of eight);
- the deterministic backward (flashtune's `deterministic=True`, FlashAttention-4's
  `deterministic=True`);
- a local window of 1024 keys left of the diagonal;
- a softcap of 50 (Gemma 2);
- head dims 192 over 128 (DeepSeek's MLA) and 96;
- speculative decoding: 16 query rows over 4096 cached keys, the diagonal bottom-right, 32 query
  heads over 8.
Each backend runs a point only where it takes the feature: cuDNN (SDPA's CUDNN_ATTENTION) has no
window, softcap, deterministic switch or bottom-right diagonal, so it runs the grouped-query and
head-dim points only; FlashAttention-4 runs where `flash_attn.cute` imports (bench/compare.py's
load_fa4). Inputs are [B, N, H, D], the SDPA-style backends getting the [B, H, N, D] view.
FLOPs: 4 D-ish per (query, key) pair that the mask lets through, counted exactly: forward
2·B·H·pairs·(D + Dv), backward 2.5x that (for a full causal square this is the FlashAttention
convention's halving).
Writes features.csv, features.json (the run's facts) and features.md into --out.

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/features.py --out bench/out"""
import argparse
import csv
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import flashtune  # noqa: E402
from compare import command_output, fa4_version, first_line, load_fa4_module, time_ms  # noqa: E402
from rounds import interleaved, median_of_rounds  # noqa: E402

# name, B, H, Hk, Nq, Nk, D, Dv, causal, options (window: keys left of the diagonal; softcap;
# det: a deterministic backward; br: the diagonal bottom-right)
POINTS = [
    ("llama3-8B GQA 32/8", 2, 32, 8, 8192, 8192, 128, 128, True, {}),
    ("llama3-70B GQA 64/8", 1, 64, 8, 8192, 8192, 128, 128, True, {}),
    ("deterministic", 2, 16, 16, 8192, 8192, 128, 128, True, {"det": True}),
    ("window 1024", 2, 16, 16, 8192, 8192, 128, 128, True, {"window": 1024}),
    ("softcap 50", 2, 16, 16, 8192, 8192, 128, 128, True, {"softcap": 50.0}),
    ("MLA 192/128", 4, 16, 16, 4096, 4096, 192, 128, True, {}),
    ("d96", 4, 16, 16, 4096, 4096, 96, 96, True, {}),
    ("spec-decode Nq16 GQA 32/8", 8, 32, 8, 16, 4096, 128, 128, True, {"br": True}),
]


def pairs(nq, nk, causal, window, br):
    """(query, key) pairs the mask lets through: the diagonal at key i (+ nk - nq bottom-right),
    `window` keys left of it (None: all), none right of it when causal."""
    shift = nk - nq if br else 0
    total = 0
    for i in range(nq):
        hi = min(nk - 1, i + shift) if causal else nk - 1
        lo = max(0, i + shift - window) if window is not None else 0
        total += max(0, hi - lo + 1)
    return total


def flashtune_run(opts):
    def run(q, k, v, causal):
        return flashtune.attention(q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1],
                                   causal_align="bottom_right" if opts.get("br") else "top_left",
                                   window_size=(opts["window"], 0) if "window" in opts else None,
                                   softcap=opts.get("softcap", 0.0), deterministic=bool(opts.get("det")))
    return run


def cudnn_run(opts):
    """SDPA's cuDNN backend, or None where it has no such feature."""
    if opts:
        return None

    def run(q, k, v, causal):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1])
    return run


def fa4_run(module, opts):
    """FlashAttention-4 over [B, N, H, D] (its causal diagonal is bottom-right: the same as
    top-left where Nq = Nk)."""
    if module is None:
        return None

    def run(q, k, v, causal):
        out = module.flash_attn_func(q, k, v, causal=causal,
                                     window_size=(opts["window"], 0) if "window" in opts else (None, None),
                                     softcap=opts.get("softcap", 0.0), deterministic=bool(opts.get("det")))
        return out[0] if isinstance(out, tuple) else out
    return run


def measure(fn, bnhd, point):
    """(forward ms, backward ms) of fn on fresh inputs, or None and why."""
    _, b, h, hk, nq, nk, d, dv, causal, _ = point
    g = torch.Generator(device="cuda").manual_seed(nq + nk + d)
    shapes = ((b, nq, h, d), (b, nk, hk, d), (b, nk, hk, dv))
    q, k, v = (torch.randn(s, generator=g, device="cuda", dtype=torch.bfloat16).requires_grad_(True) for s in shapes)
    args = (q, k, v) if bnhd else (q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    try:
        o = fn(*args, causal)
        do = torch.randn_like(o)
        fwd = time_ms(lambda: fn(*args, causal))[0]
        bwd = time_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))[0]
        return (fwd, bwd), ""
    except Exception as e:   # a backend that does not take the problem
        torch.cuda.synchronize()
        return None, first_line(e)
    finally:
        del q, k, v, args
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/out")
    ap.add_argument("--rounds", type=int, default=1,
                    help="times each point's implementations in that many interleaved rounds, the order rotated "
                         "each round, and reports each one's median (bench/rounds.py)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds={args.rounds}: must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    module, fa4_why = load_fa4_module()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, flashtune {flashtune.version()}, {started}" +
          (f"; fa4: n/a, {fa4_why}" if fa4_why else ""))
    rows = []
    for point in POINTS:
        name, b, h, hk, nq, nk, d, dv, causal, opts = point
        n_pairs = pairs(nq, nk, causal, opts.get("window"), opts.get("br"))
        fwd_flops = 2.0 * b * h * n_pairs * (d + dv)
        impls = {"flashtune": (flashtune_run(opts), False), "cudnn": (cudnn_run(opts), False),
                 "fa4": (fa4_run(module, opts), True)}   # name: (fn, whether it takes [B, N, H, D])
        untimed = {"cudnn": "does not take the feature", "fa4": fa4_why}
        timed = interleaved([i for i in impls if impls[i][0]], args.rounds, lambda i: measure(*impls[i], point))
        for impl in impls:
            res, why = median_of_rounds(timed[impl]) if impl in timed else (None, untimed.get(impl))
            for p, backward in (("fwd", False), ("bwd", True)):
                ms = res[backward] if res else float("nan")
                tf = (2.5 if backward else 1.0) * fwd_flops / (ms * 1e-3) / 1e12 if res else float("nan")
                rows.append(dict(point=name, batch=b, heads=h, heads_k=hk, seqlen_q=nq, seqlen_k=nk, head_dim=d,
                                 head_dim_v=dv, causal=int(causal), pass_=p, impl=impl, ms=ms, tflops=tf, note=why))
            print(f"{name:>26} {impl:>9}: " + (f"fwd {rows[-2]['tflops']:6.1f} bwd {rows[-1]['tflops']:6.1f} TFLOP/s"
                                               if res else why), flush=True)
    with open(os.path.join(args.out, "features.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    commit = os.environ.get("FLASHTUNE_COMMIT") or command_output("git", "rev-parse", "--short", "HEAD")
    facts = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "flashtune": flashtune.version(),
             "commit": commit, "fa4": fa4_why or f"flash-attn-4 {fa4_version()}",
             "date": f"{started} to {time.strftime('%H:%M UTC', time.gmtime())}",
             "command": "python3 bench/features.py " + " ".join(sys.argv[1:]),
             "flops": "2·B·H·(pairs the mask lets through)·(D + Dv) forward, backward 2.5x"}
    if args.rounds > 1:   # as compare.json says it: only when there were rounds
        facts["rounds"] = f"{args.rounds} interleaved, the order rotated each round, the median of the rounds"
    with open(os.path.join(args.out, "features.json"), "w") as f:
        json.dump(facts, f, indent=2, ensure_ascii=False)
        f.write("\n")
    fmt = lambda x: "–" if not (x and math.isfinite(x)) else f"{x:.0f}"   # noqa: E731
    md = [f"Device: {facts['device']}; bf16; TFLOP/s (median); ratio = flashtune / peer.", "",
          "| point | pass | flashtune | FA4 | cuDNN | ÷FA4 | ÷cuDNN |", "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    table = {}
    for r in rows:
        table.setdefault((r["point"], r["pass_"]), {})[r["impl"]] = r["tflops"]
    for (name, p), t in table.items():
        ft = t.get("flashtune")
        ratio = lambda peer: (f"{ft / t[peer]:.2f}" if ft and t.get(peer) and math.isfinite(ft) and   # noqa: E731
                              math.isfinite(t[peer]) else "–")
        md.append(f"| {name} | {p} | {fmt(ft)} | {fmt(t.get('fa4'))} | {fmt(t.get('cudnn'))} | {ratio('fa4')} | "
                  f"{ratio('cudnn')} |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, "features.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
