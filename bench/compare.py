"""flashtune against PyTorch's own attention and FlashAttention-4, in one process and one run on the GPU.

Times flashtune.attention, scaled_dot_product_attention's FLASH_ATTENTION (FlashAttention-2),
CUDNN_ATTENTION, EFFICIENT_ATTENTION and MATH backends, FlexAttention (flex_attention under
torch.compile; causal through a block mask) and, where the `flash_attn.cute` package imports,
FlashAttention-4 (its Hopper path on an H100; never a dependency of flashtune) on the
FlashAttention papers' grid (hidden 2048, 16384 tokens, N = 512 ... 16384, D = 64 and 128, causal
and not, forward and backward) in bf16, plus f16 and f32 rows; median of CUDA-event timings after
warm-up. The inputs are laid out [B, N, H, D] (a projection's output, FlashAttention-4's layout);
the SDPA-style backends get their [B, H, N, D] view (--layout bhnd: the other way round). FLOPs:
forward 4·B·H·N²·D (halved when causal), backward 2.5× that. Also peak memory of forward +
backward against the materializing reference. Writes into --out: compare.csv (every point),
compare.json (the run's facts: device, driver, date, commit, versions, layout, shapes, command),
compare.md (the tables), and the figures of bench/plot.py (when matplotlib is installed).

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/compare.py --out bench/out"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import flashtune  # noqa: E402
from plot import PEERS, geomean, plot_all  # noqa: E402   (bench/plot.py; matplotlib only when drawing)
from rounds import interleaved, median_of_rounds  # noqa: E402

SDPA = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TF32_IMPL = "flashtune-tf32"   # flashtune with TF32 allowed: measured on the float32 rows, tabled apart
MATH_LIMIT_BYTES = 24 << 30   # MATH materializes B·H·N² scores (and their gradient): skip beyond this


def sdpa(backend):
    def run(q, k, v, is_causal):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    return run


def first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:120]


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def load_flex():
    """(make, why): make() gives a fresh FlexAttention run; None and the reason where this torch has none."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError as e:
        return None, f"no FlexAttention in torch {torch.__version__} ({e})"

    def make():
        # One point's graphs at a time: no recompile limit reached (past it dynamo would silently run
        # flex_attention eagerly), and one guard set to check per call. dynamic=False: static shapes.
        torch._dynamo.reset()
        compiled = torch.compile(flex_attention, dynamic=False)
        masks = {}

        def run(q, k, v, is_causal):
            if not is_causal:
                return compiled(q, k, v)
            lens = (q.shape[-2], k.shape[-2])
            if lens not in masks:   # built on the first, untimed call of a point
                masks[lens] = create_block_mask(causal_mask, None, None, *lens, device=q.device)
            return compiled(q, k, v, block_mask=masks[lens])
        return run

    try:
        check_flex(make())
    except Exception as e:   # compile failures come as many types (dynamo, inductor, Triton)
        return None, f"FlexAttention does not run here: {first_line(e)}"
    return make, ""


def load_fa4_module():
    """(flash_attn.cute, why): FlashAttention-4's package, checked on a small causal problem
    against SDPA's math backend, or None and the reason where it does not import or does not run
    here. Its calls take [B, N, H, D] tensors and return (out, lse) in the versions measured."""
    try:
        import flash_attn.cute as module
    except Exception as e:   # not installed, or its CuTe DSL does not load
        return None, f"flash_attn.cute does not import ({first_line(e)})"
    try:
        q, k, v = (torch.randn((1, 256, 2, 64), device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = module.flash_attn_func(q, k, v, causal=True)
        o = o[0] if isinstance(o, tuple) else o
        with sdpa_kernel(SDPBackend.MATH):
            ref = F.scaled_dot_product_attention(*(t.transpose(1, 2).float() for t in (q, k, v)), is_causal=True)
        err = (o.float() - ref.transpose(1, 2)).abs().max().item()
        if not err < 0.05:
            raise ValueError(f"causal output differs from SDPA math by {err:.3g}")
    except Exception as e:
        return None, f"FlashAttention-4 does not run here: {first_line(e)}"
    return module, ""


def load_fa4():
    """(run, why): FlashAttention-4's flash_attn_func over [B, N, H, D] tensors, or None and why."""
    module, why = load_fa4_module()
    if module is None:
        return None, why

    def run(q, k, v, is_causal):
        out = module.flash_attn_func(q, k, v, causal=is_causal)
        return out[0] if isinstance(out, tuple) else out
    return run, ""


def fa4_version():
    try:
        from importlib.metadata import version
        return version("flash-attn-4")
    except Exception:
        return None


# The backends that take [B, N, H, D] tensors; the others take [B, H, N, D] (SDPA's).
BNHD_NATIVE = {"fa4"}


def check_flex(run):
    """A small causal problem forward and backward, the output against SDPA's math backend in f32;
    raises where it fails."""
    q, k, v = (torch.randn((1, 2, 256, 64), device="cuda", dtype=torch.bfloat16).requires_grad_(True)
               for _ in range(3))
    o = run(q, k, v, True)
    torch.autograd.grad(o.sum(), (q, k, v))
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        err = (o.float() - ref).abs().max().item()
    if not err < 0.05:   # bf16 output: about 0.01 at most
        raise ValueError(f"causal output differs from SDPA math by {err:.3g}")


def impls(flex_make=None, fa4=None, skip=(), dtype=None):
    """The backends by name for rows of dtype (a DTYPES name); "flex" and "fa4" map to None where
    they cannot run; those in skip are left out. The float32 rows add flashtune with TF32 allowed."""
    out = {"flashtune": lambda q, k, v, is_causal: flashtune.attention(q, k, v, is_causal=is_causal)}
    if dtype == "f32":   # one TF32 product a product (allow_tf32), as PyTorch's TF32 matmuls
        out[TF32_IMPL] = lambda q, k, v, is_causal: flashtune.attention(q, k, v, is_causal=is_causal, allow_tf32=True)
    out.update({name: sdpa(b) for name, b in SDPA.items()})
    out["flex"] = flex_make() if flex_make else None
    out["fa4"] = fa4
    return {name: fn for name, fn in out.items() if name not in skip}


def flops(b, h, n, d, causal, backward):
    f = 4.0 * b * h * n * n * d / (2 if causal else 1)
    return 2.5 * f if backward else f


def triton_timer():
    """triton.testing.do_bench, or None where Triton is not installed."""
    try:
        from triton.testing import do_bench
        return do_bench
    except ImportError:
        return None


def time_ms(fn, min_reps=5, max_reps=50, budget_s=0.25, warmup=3):
    """Median (and min) of per-call CUDA-event times after warm-up: triton.testing.do_bench where
    Triton is installed (the peers' published method: calls queued back to back, L2 flushed
    before each, so the host's time per call shows only where it exceeds the GPU's), else one
    synchronized call at a time (which adds each call's host time before its launch)."""
    do_bench = triton_timer()
    if do_bench is not None:
        times = do_bench(fn, warmup=25, rep=100, return_mode="all")
        return statistics.median(times), min(times)
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times, start = [], time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget_s):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times)


def measure(name, fn, dtype, b, h, n, d, causal, dv=None, layout="bnhd"):
    """(forward ms, backward ms) of one implementation, or None where it cannot run. The inputs are
    allocated in `layout`; a backend that takes the other one gets the transposed view."""
    if fn is None:
        return None, "n/a"
    if name == "math" and b * h * n * n * 4 * 3 > MATH_LIMIT_BYTES:
        return None, "skipped: scores do not fit"
    g = torch.Generator(device="cuda").manual_seed(n + d)
    q, k, v = (torch.randn((b, n, h, e) if layout == "bnhd" else (b, h, n, e), generator=g, device="cuda",
                           dtype=dtype).requires_grad_(True) for e in (d, d, dv or d))
    args = (q, k, v) if (layout == "bnhd") == (name in BNHD_NATIVE) else (q.transpose(1, 2), k.transpose(1, 2),
                                                                          v.transpose(1, 2))
    try:
        o = fn(*args, causal)
        do = torch.randn_like(o)
        fwd = time_ms(lambda: fn(*args, causal))
        bwd = time_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
        return (fwd, bwd), ""
    # A backend that does not take this problem; FlexAttention's compile errors come in many types.
    except (Exception if name == "flex" else (RuntimeError, ValueError)) as e:
        torch.cuda.synchronize()
        return None, first_line(e)
    finally:
        del q, k, v, args
        torch.cuda.empty_cache()


def peak_memory(fn, dtype, n, d=128, causal=False, hidden=2048, tokens=16384):
    b, h = max(1, tokens // n), hidden // d
    torch.cuda.empty_cache()
    q, k, v = (torch.randn((b, h, n, d), device="cuda", dtype=dtype).requires_grad_(True) for _ in range(3))
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    try:
        o = fn(q, k, v, causal)
        torch.autograd.grad(o, (q, k, v), torch.ones_like(o))
        torch.cuda.synchronize()
        return (torch.cuda.max_memory_allocated() - base) / 2**20
    except torch.cuda.OutOfMemoryError:
        return float("nan")
    finally:
        del q, k, v
        torch.cuda.empty_cache()


def materialize(q, k, v, is_causal):
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if is_causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril(), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def command_output(*cmd):
    """A command's first line of output, or None where it cannot run."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=HERE)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def run_facts(args, started, flex_why, fa4_why):
    """What the figures need to say where and how they were measured."""
    # A copy of the tree without its own history (a GPU machine's) names its commit in
    # FLASHTUNE_COMMIT; git's answer there would be the copy's, not the code's.
    commit = os.environ.get("FLASHTUNE_COMMIT")
    if not commit:
        commit = command_output("git", "rev-parse", "--short", "HEAD")
        if commit and command_output("git", "status", "--porcelain", "--untracked-files=no"):
            commit += " (with uncommitted changes)"
    return {
        "device": torch.cuda.get_device_name(),
        "driver": command_output("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "flashtune": flashtune.version(),
        "commit": commit,
        "date": f"{started} to {time.strftime('%H:%M UTC', time.gmtime())}",
        "command": "python3 bench/compare.py " + " ".join(sys.argv[1:]),
        "shapes": "hidden 2048 (heads = 2048 / D), 16384 tokens (batch = 16384 / N)",
        "timing": ("triton.testing.do_bench (warm-up 25 ms, 100 ms of calls, L2 flushed before each), median"
                   if triton_timer() else "median of synchronized CUDA-event timings after 3 warm-up calls") +
                  (f"; each point's implementations in {args.rounds} interleaved rounds, the order rotated "
                   "each round, the median of the rounds" if args.rounds > 1 else "") +
                  "; TFLOP/s: forward 4·B·H·N²·D (halved when causal), backward 2.5× forward",
        "dtypes": args.dtypes, "seqlens": args.seqlens, "head_dims": args.head_dims,
        "flex": flex_why or "torch.compile(flex_attention, dynamic=False), compiled and its causal block "
                            "mask built in untimed calls; non-causal without a block mask",
        "fa4": fa4_why or f"flash-attn-4 {fa4_version()}, flash_attn.cute.flash_attn_func, compiled in untimed calls",
        "layout": args.layout + (" (SDPA-style backends get the [B, H, N, D] view)" if args.layout == "bnhd" else
                                 " (FlashAttention-4 gets the [B, N, H, D] view)"),
        "skipped": ",".join(args.skip) or "none",
    }


def parse_points(spec):
    """--extra's value as (B, H, N, D[, DV]) tuples; refused at once, before anything is timed."""
    points = []
    for p in (p.strip() for p in spec.split(",")):
        fields = p.split(":") if p else []
        if p and (len(fields) not in (4, 5) or not all(f.isdigit() and int(f) > 0 for f in fields)):
            raise argparse.ArgumentTypeError(f"point '{p}' is not B:H:N:D or B:H:N:D:DV (positive integers)")
        if p:
            points.append(tuple(int(f) for f in fields))
    return points


def extra_points(points, backends, layout, out, rounds=1):   # backends(dtype): a fresh impls() a point
    """The points beyond the grid (--extra), bf16, causal and not, in `rounds` interleaved rounds:
    their rows into compare-extra.csv, their table (TFLOP/s, flashtune over each peer and over the
    best peer) as markdown lines. FLOPs: forward 2·B·H·N²·(D + Dv), halved when causal; backward
    2.5× that."""
    if not points:
        return []
    rows = []
    for pt in points:
        b, h, n, d = pt[:4]
        dv = pt[4] if len(pt) > 4 else d
        for causal in (False, True):
            # efficient and math: far behind on the grid; left out to save time
            fns = {name: fn for name, fn in backends("bf16").items() if name not in ("efficient", "math")}
            timed = interleaved(fns, rounds, lambda name: measure(name, fns[name], torch.bfloat16, b, h, n, d, causal,
                                                                  dv, layout))
            for name in fns:
                res, why = median_of_rounds(timed[name])
                for p, backward in (("fwd", False), ("bwd", True)):
                    f = 2.0 * b * h * n * n * (d + dv) / (2 if causal else 1) * (2.5 if backward else 1)
                    ms = res[backward][0] if res else float("nan")
                    rows.append(dict(batch=b, heads=h, seqlen=n, head_dim=d, head_dim_v=dv, causal=int(causal),
                                     pass_=p, impl=name, ms=ms, tflops=f / (ms * 1e-3) / 1e12 if res else float("nan"),
                                     note=why))
                print(f"extra B={b} H={h} N={n} D={d}/{dv} causal={int(causal)} {name:>9}: " +
                      (f"fwd {rows[-2]['tflops']:6.1f} bwd {rows[-1]['tflops']:6.1f} TFLOP/s" if res else why), flush=True)
    with open(os.path.join(out, "compare-extra.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    peers = list(PEERS)
    md = ["", "Beyond the grid, bf16 (TFLOP/s; ratio = flashtune / peer; best = the fastest peer that ran):", "",
          "| B | H | N | D/Dv | causal | pass | flashtune | " + " | ".join(peers) + " | " +
          " | ".join(f"÷{p}" for p in peers) + " | ÷best |",
          "| ---: | ---: | ---: | --- | :---: | --- | ---: | " + " | ".join(["---:"] * (2 * len(peers) + 1)) + " |"]
    table = {}
    for r in rows:
        table.setdefault((r["batch"], r["heads"], r["seqlen"], r["head_dim"], r["head_dim_v"], r["causal"],
                          r["pass_"]), {})[r["impl"]] = r["tflops"]
    fmt = lambda x: "–" if not (x and math.isfinite(x)) else f"{x:.1f}"   # noqa: E731
    ratio = lambda a, b: f"{a / b:.2f}" if a and b and math.isfinite(a) and math.isfinite(b) else "–"   # noqa: E731
    for k, t in table.items():
        ft = t.get("flashtune", float("nan"))
        ran = [t[p] for p in peers if t.get(p) and math.isfinite(t[p])]
        md.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]}/{k[4]} | {'yes' if k[5] else 'no'} | {k[6]} | {fmt(ft)} | " +
                  " | ".join(fmt(t.get(p)) for p in peers) + " | " + " | ".join(ratio(ft, t.get(p)) for p in peers) +
                  f" | {ratio(ft, max(ran)) if ran else '–'} |")
    return md


def tf32_table(table):
    """Markdown lines: float32 with TF32 allowed (flashtune's allow_tf32, one TF32 product a
    product) against SDPA's memory-efficient kernel (which takes no such option), each point and
    the geometric mean a pass; none where the float32 rows were not run."""
    keys = [k for k in sorted(table) if k[0] == "f32" and table[k].get(TF32_IMPL)]
    if not keys:
        return []
    md = ["", "Float32 with TF32 allowed (flashtune allow_tf32=True: one TF32 product a product, about 3e-4 "
          "relative error) against SDPA efficient (TFLOP/s):", "",
          "| D | causal | pass | N | flashtune TF32 | efficient | ÷efficient |", "| ---: | :---: | --- | ---: | ---: | ---: | ---: |"]
    ratios = {}
    for k in keys:
        ft, eff = table[k][TF32_IMPL], table[k].get("efficient", float("nan"))
        r = ft / eff if eff and math.isfinite(eff) and math.isfinite(ft) else float("nan")
        if math.isfinite(r):
            ratios.setdefault(k[3], []).append(r)
        md.append(f"| {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {k[4]} | {ft:.1f} | {eff:.1f} | {r:.2f} |")
    md += [""] + [f"Geometric mean, {p}: {geomean(v):.2f} (worst {min(v):.2f})" for p, v in sorted(ratios.items())]
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/out")
    ap.add_argument("--dtypes", default="bf16,f16,f32")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--layout", choices=("bnhd", "bhnd"), default="bnhd",
                    help="how the inputs are allocated; backends taking the other layout get the transposed view")
    ap.add_argument("--skip", type=lambda x: [s for s in x.split(",") if s], default=[],
                    help="backends to leave out, e.g. efficient,math (comma-separated)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="times each point's implementations in that many interleaved rounds, the order rotated "
                         "each round, and reports each one's median (bench/rounds.py): ratios that hold under "
                         "the clocks' steps, at that many times the cost (with --skip, the peers that matter)")
    ap.add_argument("--extra", type=parse_points, default="1:16:512:128,4:16:4096:96,4:16:4096:192:128,4:16:4096:256",
                    help="points beyond the grid, causal and not, bf16: B:H:N:D[:DV] separated by commas "
                         "('' for none); reported apart, outside the geometric means")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds={args.rounds}: must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    seqlens = [int(x) for x in args.seqlens.split(",")]
    head_dims = [int(x) for x in args.head_dims.split(",")]
    dev = torch.cuda.get_device_name()
    started = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    print(f"# {dev}, torch {torch.__version__}, flashtune {flashtune.version()}, {started}")
    flex_make, flex_why = load_flex() if "flex" not in args.skip else (None, "skipped")
    if flex_why:
        print(f"# flex: n/a, {flex_why}")
    fa4, fa4_why = load_fa4() if "fa4" not in args.skip else (None, "skipped")
    if fa4_why:
        print(f"# fa4: n/a, {fa4_why}")
    # A fresh set for each point: flex_make() resets dynamo and compiles anew, so that no point
    # runs past the recompile limit (dynamo then runs flex_attention eagerly: seen as 4-25 TFLOP/s
    # when one compiled function served the whole grid).
    backends = lambda dtype: impls(flex_make, fa4, args.skip, dtype)   # noqa: E731

    # One untimed pass over the first shape with every implementation: the first measurement of a
    # process otherwise runs on a GPU not yet at its clocks (seen: flashtune's first backward at
    # 0.65x of its rerun), and flashtune compiles or loads its kernels on first use.
    d0, n0 = head_dims[0], seqlens[0]
    for name, fn in backends(args.dtypes.split(",")[0]).items():
        measure(name, fn, DTYPES[args.dtypes.split(",")[0]], max(1, 16384 // n0), 2048 // d0, n0, d0, False,
                layout=args.layout)

    rows = []
    for dname in args.dtypes.split(","):
        dtype = DTYPES[dname]
        for d in head_dims:
            for causal in (False, True):
                for n in seqlens:
                    b, h = max(1, 16384 // n), 2048 // d
                    fns = backends(dname)
                    timed = interleaved(fns, args.rounds, lambda name: measure(name, fns[name], dtype, b, h, n, d,
                                                                               causal, layout=args.layout))
                    for name in fns:
                        res, why = median_of_rounds(timed[name])
                        for p, backward in (("fwd", False), ("bwd", True)):
                            ms = res[backward][0] if res else float("nan")
                            tf = flops(b, h, n, d, causal, backward) / (ms * 1e-3) / 1e12 if res else float("nan")
                            rows.append(dict(dtype=dname, head_dim=d, causal=int(causal), pass_=p, seqlen=n, batch=b,
                                             heads=h, impl=name, ms=ms, tflops=tf, note=why))
                        if res:
                            print(f"{dname} d={d} causal={int(causal)} n={n:5d} {name:>9}: fwd {rows[-2]['tflops']:6.1f} "
                                  f"bwd {rows[-1]['tflops']:6.1f} TFLOP/s", flush=True)
                        else:
                            print(f"{dname} d={d} causal={int(causal)} n={n:5d} {name:>9}: {why}", flush=True)

    with open(os.path.join(args.out, "compare.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump(run_facts(args, started, flex_why, fa4_why), f, indent=2, ensure_ascii=False)
        f.write("\n")

    key = lambda r: (r["dtype"], r["head_dim"], r["causal"], r["pass_"], r["seqlen"])   # noqa: E731
    table = {}
    for r in rows:
        table.setdefault(key(r), {})[r["impl"]] = r["tflops"]
    peers = list(PEERS)   # plot.py's order, flex among them
    md = [f"Device: {dev}; torch {torch.__version__}; inputs {args.layout}; TFLOP/s (median), ratio = flashtune / "
          "peer." + (f" flex: n/a, {flex_why}." if flex_why else "") + (f" fa4: n/a, {fa4_why}." if fa4_why else ""),
          "",
          "| dtype | D | causal | pass | N | flashtune | " + " | ".join(peers) + " | " +
          " | ".join(f"÷{p}" for p in peers) + " |",
          "| --- | ---: | :---: | --- | ---: | ---: | " + " | ".join(["---:"] * (2 * len(peers))) + " |"]
    ratios = {}
    for k in sorted(table):
        t = table[k]
        ft = t.get("flashtune", float("nan"))
        rs = []
        for p in peers:
            r = ft / t[p] if t.get(p) and t[p] > 0 and ft > 0 else float("nan")
            rs.append(r)
            ratios.setdefault((k[0], k[3], p), []).append((r, k))
        fmt = lambda x: "–" if not (x and math.isfinite(x)) else f"{x:.1f}"   # noqa: E731
        md.append(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {k[4]} | {fmt(ft)} | " +
                  " | ".join(fmt(t.get(p)) for p in peers) + " | " +
                  " | ".join("–" if not math.isfinite(r) else f"{r:.2f}" for r in rs) + " |")
    md += ["", "Geometric mean of flashtune / peer (worst point in brackets):", "",
           "| dtype | pass | " + " | ".join(peers) + " |", "| --- | --- | " + " | ".join("---" for _ in peers) + " |"]
    for dname in args.dtypes.split(","):
        for p in ("fwd", "bwd"):
            cells = []
            for peer in peers:
                vals = [(r, k) for r, k in ratios.get((dname, p, peer), []) if math.isfinite(r)]
                if not vals:
                    cells.append("–")
                    continue
                worst = min(vals)
                cells.append(f"{geomean([r for r, _ in vals]):.2f} ({worst[0]:.2f} at D={worst[1][1]} "
                             f"{'causal' if worst[1][2] else 'non-causal'} N={worst[1][4]})")
            md.append(f"| {dname} | {p} | " + " | ".join(cells) + " |")

    md += tf32_table(table)
    md += extra_points(args.extra, backends, args.layout, args.out, args.rounds)
    md += ["", "Peak memory of forward + backward, bf16, D = 128, non-causal, 16384 tokens (MiB above the inputs):",
           "", "| N | flashtune | materialize |", "| ---: | ---: | ---: |"]
    for n in (4096, 8192, 16384):
        ft = peak_memory(impls()["flashtune"], torch.bfloat16, n)
        mat = peak_memory(materialize, torch.bfloat16, n)
        md.append(f"| {n} | {ft:.0f} | {mat:.0f} |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, "compare.md"), "w") as f:
        f.write(text)
    print(text)

    try:
        for path in plot_all(os.path.join(args.out, "compare.csv"), args.out):
            print("wrote", path)
    except ImportError:
        print("matplotlib is not installed: no plots (bench/plot.py draws them later from compare.csv)")


if __name__ == "__main__":
    main()
