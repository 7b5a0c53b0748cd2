#!/usr/bin/env python3
"""The shipped winners' registers and spills, without a GPU: every distinct kernel of the tuned
tables (db/tuned/*.txt) compiled by `flashtune compile` (NVRTC here; the CUBIN cache makes a
second run quick). Prints one line a kernel that spills, then the count, so a template change can
be judged by what ships ("spills 25 -> 24 kernels") before any device time.

Usage: dev/spill-census.py [--flashtune build/tuner/flashtune] [--family bwd_wgmma]
                           [--set PARAM=VALUE ...] [TUNED.txt...]
--set compiles each kernel with those parameters changed, as the runtime changes a winner for a
problem it was not tuned on (VARLEN=1 EVEN_M=0 EVEN_N=0: the kernels a packed batch runs).
"""
import argparse
import glob
import re
import subprocess
import sys

# Fields of a winners line that describe the measurement, not the kernel.
NOT_PARAMS = ("median_ms", "tflops")


def kernels(paths, family, overrides):
    """Distinct (family, params) of the winners lines, with the workloads each serves."""
    seen = {}
    changed = dict(o.split("=", 1) for o in overrides)
    for path in paths:
        for line in open(path):
            m = re.search(r" family=(\S+) source_hash=\S+ (.*)$", line)
            if not m or (family and m.group(1) != family):
                continue
            fields = dict(f.split("=", 1) for f in m.group(2).split() if f.split("=")[0] not in NOT_PARAMS)
            fields.update(changed)
            params = tuple(f"{k}={v}" for k, v in fields.items())
            seen.setdefault((m.group(1), params), []).append(path)
    return seen


def spills(flashtune, fam, params):
    """{entry: (regs, spill store bytes)} from the compile report, or the error text."""
    run = subprocess.run([flashtune, "compile", "--template", fam, *params], capture_output=True, text=True)
    if run.returncode != 0:
        return (run.stderr or run.stdout).strip().splitlines()[-1:]
    table = {}
    for line in run.stdout.splitlines():
        f = line.split()
        if len(f) == 7 and f[0].startswith("ft_") and f[1].isdigit():
            table[f[0]] = (int(f[1]), int(f[2]))
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashtune", default="build/tuner/flashtune")
    ap.add_argument("--family", help="only this family's kernels")
    ap.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                    help="compile every kernel with this parameter changed (repeatable)")
    ap.add_argument("tuned", nargs="*", help="winners files (default: db/tuned/*.txt)")
    args = ap.parse_args()
    bad = [o for o in args.set if "=" not in o]
    if bad:
        ap.error(f"--set {bad[0]}: expected PARAM=VALUE")
    todo = kernels(args.tuned or sorted(glob.glob("db/tuned/*.txt")), args.family, args.set)
    spilling, failed = 0, 0
    for (fam, params), _ in sorted(todo.items()):
        table = spills(args.flashtune, fam, params)
        if isinstance(table, list):
            failed += 1
            print(f"FAILED {fam} {' '.join(params)}: {' '.join(table)}")
            continue
        worst = {e: v for e, v in table.items() if v[1] > 0}
        if worst:
            spilling += 1
            shown = ", ".join(f"{e} {r} regs {s} B" for e, (r, s) in sorted(worst.items()))
            print(f"{fam} {' '.join(p for p in params if not p.endswith('=0'))}: {shown}")
    print(f"spill-census: {spilling} of {len(todo)} kernels spill, {failed} failed to compile")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
