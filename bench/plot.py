"""Plots of bench/compare.py's results, from its CSV and the run's facts beside it (compare.json).

One figure per dtype (compare_<dtype>.png): for each head dim and causal mode, forward and
backward TFLOP/s of every backend against the sequence length, and flashtune's speed as a ratio of
each peer's. One summary figure (summary_<dtype>.png, bf16 by default): the geometric mean of
flashtune / peer over the grid, with the worst and best point, forward and backward. Every
backend keeps one colour and marker in every figure; every y axis starts at 0; the legend sits
outside the panels; the run's device, date, commit, versions and shapes are printed on each
figure.

compare.py calls plot_all() after a run. To redraw from a saved CSV (matplotlib needed, torch not):
    python3 bench/plot.py bench/results/compare.csv [--facts compare.json] [--out DIR]"""
import argparse
import csv
import json
import math
import os
import sys

# The backends in drawing order, each with its one label, colour and marker.
BACKENDS = {
    "flashtune": ("flashtune", "#d62728", "o"),
    "flash": ("FlashAttention-2 (SDPA flash)", "#1f77b4", "s"),
    "cudnn": ("cuDNN (SDPA cudnn)", "#2ca02c", "^"),
    "flex": ("FlexAttention (torch.compile)", "#9467bd", "P"),
    "fa4": ("FlashAttention-4 (Hopper, CuTe DSL)", "#8c564b", "X"),
    "efficient": ("SDPA efficient", "#ff7f0e", "D"),
    "math": ("SDPA math (unfused)", "#7f7f7f", "v"),
}
PEERS = [b for b in BACKENDS if b != "flashtune"]
# The unfused math backend is 4-60x slower: its ratios would flatten the others', so the ratio
# panels print its range instead of drawing it.
RATIO_DRAWN = [p for p in PEERS if p != "math"]
PASSES = (("fwd", "forward"), ("bwd", "backward"))


def load_rows(path):
    """The CSV's rows with numbers as numbers (NaN where a backend did not run)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("head_dim", "causal", "seqlen", "batch", "heads"):
            r[k] = int(r[k])
        for k in ("ms", "tflops"):
            r[k] = float(r[k]) if r[k] not in ("", "nan") else float("nan")
    return rows


def load_facts(path):
    """The run's facts (device, date, commit, versions, shapes), or {} when there is no file."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def tflops_table(rows):
    """{(dtype, head_dim, causal, pass, seqlen): {backend: TFLOP/s}}"""
    table = {}
    for r in rows:
        table.setdefault((r["dtype"], r["head_dim"], r["causal"], r["pass_"], r["seqlen"]), {})[r["impl"]] = r["tflops"]
    return table


def finite(x):
    return x is not None and isinstance(x, float) and math.isfinite(x) and x > 0


def ratio(cell, peer):
    """flashtune / peer at one point, NaN where either did not run."""
    ft, other = cell.get("flashtune"), cell.get(peer)
    return ft / other if finite(ft) and finite(other) else float("nan")


def geomean(xs):
    xs = [x for x in xs if finite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def facts_text(facts, rows, dtype):
    """The foot of a figure: what ran where and when, the command, the shapes and the timing."""
    seqlens = sorted({r["seqlen"] for r in rows})
    dims = sorted({r["head_dim"] for r in rows})
    get = lambda k: facts.get(k) or "not recorded"   # noqa: E731
    lines = [f"{get('device')}, driver {get('driver')} · PyTorch {get('torch')}, CUDA {get('cuda')}"
             f" · flashtune {get('flashtune')} at commit {get('commit')} · {get('date')}",
             f"{get('command')}",
             f"{dtype}; {get('shapes')}; N = {', '.join(map(str, seqlens))}; D = {', '.join(map(str, dims))}",
             get("timing")]
    return "\n".join(lines)


def draw_backend(ax, name, xs, ys, **kw):
    label, colour, marker = BACKENDS[name]
    ax.plot(xs, ys, color=colour, marker=marker, markersize=4,
            linewidth=2.4 if name == "flashtune" else 1.2, label=label, **kw)


def plot_dtype(rows, facts, dtype, path, plt):
    """compare_<dtype>.png: TFLOP/s per pass and flashtune's ratios, one row per (D, causal)."""
    table = tflops_table(rows)
    seqlens = sorted({r["seqlen"] for r in rows if r["dtype"] == dtype})
    configs = sorted({(r["head_dim"], r["causal"]) for r in rows if r["dtype"] == dtype})
    present = [b for b in BACKENDS if any(r["impl"] == b and r["dtype"] == dtype and finite(r["tflops"]) for r in rows)]
    fig, axes = plt.subplots(len(configs), 3, figsize=(15, 3.2 * len(configs) + 2.2), squeeze=False,
                             layout="constrained")
    math_ratios = []
    for i, (d, causal) in enumerate(configs):
        where = f"D = {d}, {'causal' if causal else 'non-causal'}"
        for j, (p, pname) in enumerate(PASSES):
            ax = axes[i][j]
            for name in present:
                ys = [table.get((dtype, d, causal, p, n), {}).get(name, float("nan")) for n in seqlens]
                draw_backend(ax, name, seqlens, ys)
            ax.set_title(f"{pname}, {where}", fontsize=10)
            ax.set_ylabel("TFLOP/s")
        ax = axes[i][2]
        ax.axhline(1.0, color="black", linewidth=0.8)
        for peer in [q for q in RATIO_DRAWN if q in present]:
            for p, style in (("fwd", "-"), ("bwd", "--")):
                ax.plot(seqlens, [ratio(table.get((dtype, d, causal, p, n), {}), peer) for n in seqlens],
                        color=BACKENDS[peer][1], marker=BACKENDS[peer][2], markersize=4, linestyle=style,
                        linewidth=1.2)
        math_ratios += [ratio(table.get((dtype, d, causal, p, n), {}), "math") for p, _ in PASSES for n in seqlens]
        ax.set_title(f"flashtune / peer, {where}", fontsize=10)
        ax.set_ylabel("ratio (above 1: flashtune faster)")
        ax.set_ylim(top=max(1.15, ax.get_ylim()[1]))   # the line at 1 inside the panel
    for ax in axes.flat:
        ax.set_xscale("log", base=2)
        ax.set_xticks(seqlens, [str(n) for n in seqlens])
        ax.set_xlabel("sequence length N")
        ax.set_ylim(bottom=0, top=ax.get_ylim()[1] * 1.05)
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    m = [x for x in math_ratios if finite(x)]
    if m:
        handles.append(plt.Line2D([], [], linestyle="none"))
        labels.append(f"ratio to SDPA math not drawn: {min(m):.2f}–{max(m):.1f}×")
    handles += [plt.Line2D([], [], color="black", linestyle=ls) for ls in ("-", "--")]
    labels += ["ratio, forward", "ratio, backward"]
    # The title is the legend's: a suptitle and an outside legend overlap under constrained layout.
    fig.legend(handles, labels, loc="outside upper center", ncol=4, fontsize=9, frameon=False,
               title=f"flashtune against PyTorch's attention backends, {dtype}", title_fontsize=13)
    fig.supxlabel(facts_text(facts, [r for r in rows if r["dtype"] == dtype], dtype), fontsize=8.5)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def summary(rows, dtype):
    """{(pass, peer): (geometric mean, worst, best)} of flashtune / peer over the dtype's grid."""
    table = tflops_table(rows)
    out = {}
    for p, _ in PASSES:
        for peer in PEERS:
            rs = [ratio(cell, peer) for k, cell in table.items() if k[0] == dtype and k[3] == p]
            rs = [r for r in rs if finite(r)]
            if rs:
                out[(p, peer)] = (geomean(rs), min(rs), max(rs))
    return out


def has_summary(rows, dtype):
    """Whether dtype's rows have a drawn peer to divide flashtune by (a run with the peers
    skipped, `compare.py --skip ...`, has none, and no summary figure)."""
    return any(peer in RATIO_DRAWN for _, peer in summary(rows, dtype))


def plot_summary(rows, facts, dtype, path, plt):
    """summary_<dtype>.png: the geometric mean of flashtune / peer per pass, worst to best point."""
    s = summary(rows, dtype)
    peers = [q for q in RATIO_DRAWN if any((p, q) in s for p, _ in PASSES)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), layout="constrained")
    points = len({(r["head_dim"], r["causal"], r["seqlen"]) for r in rows if r["dtype"] == dtype})
    for ax, (p, pname) in zip(axes, PASSES):
        xs = range(len(peers))
        g = [s.get((p, q), (float("nan"),) * 3) for q in peers]
        ax.bar(xs, [v[0] for v in g], color=[BACKENDS[q][1] for q in peers], width=0.6,
               yerr=[[v[0] - v[1] for v in g], [v[2] - v[0] for v in g]], capsize=6, ecolor="black")
        for x, v in zip(xs, g):
            ax.text(x, v[0] / 2, f"{v[0]:.2f}×", ha="center", va="center", fontsize=11, color="white",
                    fontweight="bold")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(xs), [BACKENDS[q][0].replace(" (", "\n(") for q in peers], fontsize=9)
        ax.set_ylim(0, max(v[2] for v in g) * 1.12)
        ax.set_title(f"{pname}: flashtune / peer", fontsize=11)
        ax.set_ylabel("ratio (above 1: flashtune faster)")
        ax.grid(axis="y", alpha=0.3)
        if (p, "math") in s:
            ax.text(0.99, 0.99, f"SDPA math (unfused): {s[(p, 'math')][0]:.1f}×", transform=ax.transAxes,
                    ha="right", va="top", fontsize=9, color=BACKENDS["math"][1])
    fig.suptitle(f"Where flashtune stands, {dtype}: geometric mean over {points} points, "
                 "bars from the worst to the best point", fontsize=12)
    fig.supxlabel(facts_text(facts, [r for r in rows if r["dtype"] == dtype], dtype), fontsize=8)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def out_folder(csv_path, out_dir=None):
    """The folder the figures go to (--out, else the CSV's), made when missing."""
    out_dir = out_dir or os.path.dirname(os.path.abspath(csv_path))
    os.makedirs(out_dir, exist_ok=True)
    return out_dir


def plot_all(csv_path, out_dir=None, facts_path=None, summary_dtype="bf16"):
    """Draws every figure from the CSV; returns the files written."""
    out_dir = out_folder(csv_path, out_dir)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    facts = load_facts(facts_path or os.path.join(os.path.dirname(os.path.abspath(csv_path)), "compare.json"))
    rows = load_rows(csv_path)
    written = []
    for dtype in sorted({r["dtype"] for r in rows}):
        written.append(os.path.join(out_dir, f"compare_{dtype}.png"))
        plot_dtype(rows, facts, dtype, written[-1], plt)
    if has_summary(rows, summary_dtype):
        written.append(os.path.join(out_dir, f"summary_{summary_dtype}.png"))
        plot_summary(rows, facts, summary_dtype, written[-1], plt)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="compare.csv written by bench/compare.py")
    ap.add_argument("--facts", help="the run's facts (default: compare.json beside the CSV)")
    ap.add_argument("--out", help="folder for the PNG files (default: the CSV's)")
    args = ap.parse_args()
    try:
        for f in plot_all(args.csv, args.out, args.facts):
            print(f)
    except ImportError:
        sys.exit("plot.py: matplotlib is not installed (pip install matplotlib)")
    except OSError as e:   # a folder that cannot be made, a file that cannot be read or written
        sys.exit(f"plot.py: {e.filename}: {e.strerror}")


if __name__ == "__main__":
    main()
