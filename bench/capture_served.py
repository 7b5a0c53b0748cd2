#!/usr/bin/env python3
"""Times each dense problem of a capture file (FLASHTUNE_CAPTURE's format) as libflashtune serves it
in this process, so that two runs, one with FLASHTUNE_DB naming a database tuned for those problems
and one without, say what tuning them bought against the shipped tables' choice. A problem is
timed in its own direction only (a captured backward: the backward call; a forward: the forward),
with compare.py's timer (triton.testing.do_bench where installed). Packed batches, windows,
bottom-right masks, softcap and sinks are left out (counted).

Usage: bench/capture_served.py CAPTURE [--out served.json]
       bench/capture_served.py --join SHIPPED.json TUNED.json   (a markdown table of the two runs)
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LEFT_OUT = ("varlen", "window", "bottom_right", "softcap", "sinks")
NEEDED = ("op", "dtype", "head_dim", "head_dim_v", "batch", "heads", "seqlen_q", "seqlen_k")
# The fields a capture line may hold (db/db_workload_fields.h's, then the capture's own).
KNOWN = NEEDED + ("causal", "heads_k", "softcap", "window", "window_left", "window_right", "bottom_right",
                  "varlen", "sinks", "tf32", "deterministic", "calls", "served")


def problems(path):
    """The capture file's lines as dicts of their fields (ints where they are numbers); a line
    that is not NAME=VALUE fields of a capture, or lacks a field a problem needs, stops it with
    file:line."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("flashtune capture format"):
                continue
            bad = [field for field in line.split() if "=" not in field]
            if bad:
                sys.exit(f"{path}:{n}: '{bad[0]}' is not NAME=VALUE")
            p = dict(field.split("=", 1) for field in line.split())
            unknown = [k for k in p if k not in KNOWN]
            if unknown:
                sys.exit(f"{path}:{n}: '{unknown[0]}' is not a field of a capture line")
            missing = [k for k in NEEDED if k not in p]
            if missing:
                sys.exit(f"{path}:{n}: no {missing[0]}= field")
            out.append({k: int(v) if v.lstrip("-").isdigit() else v for k, v in p.items()})
    return out


def key(p):
    """A problem's name in the tables: what the capture line says, less its calls and the choice."""
    return " ".join(f"{k}={p[k]}" for k in p if k not in ("calls", "served"))


def measure(p):
    import torch
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import flashtune
    from compare import time_ms
    dtype = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[p["dtype"]]
    b, h, hk = p["batch"], p["heads"], p.get("heads_k", p["heads"])
    g = torch.Generator(device="cuda").manual_seed(p["seqlen_q"] * 31 + p["head_dim"])
    q = torch.randn(b, h, p["seqlen_q"], p["head_dim"], generator=g, device="cuda", dtype=dtype)
    k = torch.randn(b, hk, p["seqlen_k"], p["head_dim"], generator=g, device="cuda", dtype=dtype)
    v = torch.randn(b, hk, p["seqlen_k"], p["head_dim_v"], generator=g, device="cuda", dtype=dtype)
    causal, gqa, tf32 = bool(p.get("causal", 0)), hk != h, bool(p.get("tf32", 0))
    backward = p["op"] == "bwd"
    if backward:   # a forward is timed without autograd's bookkeeping, as an inference call runs
        for t in (q, k, v):
            t.requires_grad_(True)

    def forward():
        return flashtune.attention(q, k, v, is_causal=causal, enable_gqa=gqa, allow_tf32=tf32,
                                   deterministic=bool(p.get("deterministic", 0)) or None)
    choice = flashtune.describe_choice(q, k, v, is_causal=causal, backward=backward, enable_gqa=gqa,
                                       allow_tf32=tf32, deterministic=bool(p.get("deterministic", 0)))
    if backward:
        o = forward()
        do = torch.randn_like(o)
        ms, least = time_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
    else:
        ms, least = time_ms(forward)
    return {"ms": ms, "min_ms": least, "choice": choice}


def run(args):
    rows, skipped = {}, 0
    for p in problems(args.capture):
        if any(p.get(k, 0) not in (0, "0") for k in LEFT_OUT):
            skipped += 1
            continue
        rows[key(p)] = measure(p)
        print(f"{key(p)}: {rows[key(p)]['ms']:.4f} ms ({rows[key(p)]['choice']})", flush=True)
    print(f"capture_served: {len(rows)} problems timed, {skipped} left out (packed, windowed, softcap, sinks)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"db": os.environ.get("FLASHTUNE_DB", ""), "rows": rows}, f, indent=1)


def join(shipped_path, tuned_path):
    """The tuned run's time against the shipped run's, for the problems the tuned database served
    with a winner tuned for them (`database exact`); the others (a budget that did not reach them,
    served a neighbour's winner) are counted, not compared."""
    shipped, tuned = (json.load(open(p))["rows"] for p in (shipped_path, tuned_path))
    print("| problem | shipped choice ms | tuned ms | tuned speed / shipped |\n| --- | ---: | ---: | ---: |")
    ratios, not_tuned = [], []
    for k in shipped:
        if k not in tuned:
            continue
        if "database exact" not in tuned[k].get("choice", ""):
            not_tuned.append(k)
            continue
        r = shipped[k]["ms"] / tuned[k]["ms"]
        ratios.append(r)
        print(f"| {k} | {shipped[k]['ms']:.4f} | {tuned[k]['ms']:.4f} | {r:.3f} |")
    print("\nThe choices where they differ (shipped, then tuned):")
    for k in shipped:
        if k in tuned and shipped[k].get("choice") != tuned[k].get("choice"):
            print(f"- {k}\n  - {shipped[k].get('choice')}\n  - {tuned[k].get('choice')}")
    if not_tuned:
        print(f"\nNot served by a winner tuned for them, so not compared: {len(not_tuned)}")
        for k in not_tuned:
            print(f"- {k}")
    if ratios:
        geo = statistics.geometric_mean(ratios)
        print(f"\n{len(ratios)} problems: tuned against the shipped choice {geo:.3f} geometric mean, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f}; behind beyond 2 %: {sum(r < 0.98 for r in ratios)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--join", nargs=2, metavar=("SHIPPED", "TUNED"))
    args = ap.parse_args()
    if args.join:
        return join(*args.join)
    if not args.capture:
        ap.error("CAPTURE or --join SHIPPED TUNED")
    run(args)


if __name__ == "__main__":
    main()
