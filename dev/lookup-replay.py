#!/usr/bin/env python3
"""Replays the runtime's nearest-winner lookup over timed workloads, for several distances.

For each workload a sweep timed many kernels at, it picks the shipped table's winner the lookup
would serve under each distance below (same op, dtype, head dims and mask; the least kind gap
first, then the distance), reads that kernel's median at the workload and divides it by the
fastest median there. A workload the table holds is left out of the table for its own replay
(leave-one-out). A served kernel the sweep did not time is counted apart. Prints, per distance,
the geometric mean of those ratios, the worst, and how many are beyond 2 % and 5 %; with --rows,
each workload's picks under --show's distances. What it does not model of db/db_query.c and
runtime/rt_lookup.c: a window's sides, TF32 and sinks in the kind gap, the device rows (every
table row is taken as this GPU's), and decode's own rule (its shapes are only kept apart here);
tests/test_lookup_replay.c replays the lookup itself.

Inputs: results databases (`sweep-results.db` from dev/gpu/sweep.sh, kernels matched by source
hash, so the table's hashes must be of the same code) or tune logs (`flashtune tune`'s progress
lines, each kernel's first full timing, matched by the tunables a line prints: a value cut at the
line's width matches as a prefix; tunables a line omits are not compared).

The distances (a, b: the problem and a table workload; ln(x, y) = |ln(x / y)|):
  old         ln(Nq) + ln(Nk) + 0.5 ln(batch x heads)        (db_query.c's distance before 2026-12-01)
  fill C W    ln(Nq) + ln(Nk) + W ln(fill)                    fill = min(tiles / SMs, C) in waves, the
                                                              fraction kept; tiles of 128 rows: query
                                                              tiles a head (forward), key tiles a K/V
                                                              head (backward); the lookup's since
                                                              2026-12-01 is "fill 4 w4"
--csv FILE writes every kernel timed at each workload of the logs given (its first full timing) in
the ground truth's columns: the data tests/test_lookup_replay.c replays through the runtime's own
lookup.

Usage: dev/lookup-replay.py --table db/tuned/h200-sm90.txt INPUT... [--sms 132] [--rows] [--show NAME,...]
       dev/lookup-replay.py --csv OUT.csv LOG...
(notes/tuning.md, section 14: the figures it gave and the choice made from them)
"""
import argparse
import math
import re
import shlex
import sqlite3

WORKLOAD_KEYS = ("op", "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads", "seqlen_q", "seqlen_k",
                 "heads_k", "softcap", "window", "bottom_right", "varlen")


def workload_of(f):
    w = {k: int(f.get(k, 0)) for k in WORKLOAD_KEYS[2:]}
    w.update(op=f["op"], dtype=f["dtype"])
    if not w["head_dim_v"]:
        w["head_dim_v"] = w["head_dim"]
    return w


def parse_table(path):
    rows = []
    for line in open(path):
        if line.startswith("device="):
            f = dict(kv.split("=", 1) for kv in shlex.split(line))
            rows.append((workload_of(f), f))
    return rows


class DbResults:
    """A results database: each workload's medians by kernel source hash."""

    def __init__(self, path):
        self.con = sqlite3.connect(path)
        self.name = path

    def workloads(self):
        cols = [c[1] for c in self.con.execute("PRAGMA table_info(workloads)")]
        for row in self.con.execute("SELECT * FROM workloads").fetchall():
            times = dict(self.con.execute(
                "SELECT k.source_hash, r.median_ms FROM results r JOIN kernels k ON k.id = r.kernel_id"
                " WHERE r.workload_id = ? AND r.status = 'ok'", (row[0],)))
            if times:
                yield (workload_of({k: v for k, v in zip(cols, row)}), lambda f, t=times: t.get(f["source_hash"]),
                       min(times.values()))


# tune_workload_str's workload: "bf16 d=192 dv=128 causal br b=8 h=32 hk=8 s=16/4096 ..."
LINE = re.compile(r"^\[\d+/\d+[^\]]*\] (fwd|bwd) (\w+) d=(\d+)(?: dv=(\d+))? (causal|noncausal)(.*?) \| (\w+) (.*?): "
                  r"ok ([0-9.]+) ms")


class LogResults:
    """A tune log: each workload's medians (each kernel's first full timing) by the tunables its
    progress lines print."""

    def __init__(self, path):
        self.name = path
        self.by_workload = {}
        for line in open(path):
            m = LINE.match(line)
            if not m:
                continue
            op, dtype, d, dv, mask, rest, family, params, ms = m.groups()
            f = dict(op=op, dtype=dtype, head_dim=d, head_dim_v=dv or d, causal=int(mask == "causal"))
            for kv in rest.split():
                if kv == "br":   # the causal diagonal bottom-right
                    f["bottom_right"] = 1
                    continue
                k, v = kv.split("=", 1) if "=" in kv else (kv, "")
                key = {"b": "batch", "h": "heads", "hk": "heads_k"}.get(k)
                if key:
                    f[key] = v
                elif k == "s":   # "N", or "Nq/Nk"
                    f["seqlen_q"], f["seqlen_k"] = (v.split("/", 1) if "/" in v else (v, v))
                elif k == "sq":
                    f["seqlen_q"] = v
                elif k == "sk":
                    f["seqlen_k"] = v
                else:
                    raise SystemExit(f"{path}: a workload field this replay does not know: {kv}")
            w = workload_of(f)
            tunables = dict(kv.split("=", 1) for kv in params.split() if "=" in kv)
            timed = self.by_workload.setdefault(tuple(w[k] for k in WORKLOAD_KEYS), (w, []))[1]
            # each kernel's first full timing only: the confirm step's re-timings of the finalists
            # would lower the fastest's figure and not the served kernel's
            if not any(t[0] == family and t[1] == tunables for t in timed):
                timed.append((family, tunables, float(ms)))

    def workloads(self):
        for w, timed in self.by_workload.values():
            def median(f, timed=timed):
                for family, tunables, ms in timed:
                    if family == f["family"] and all(f.get(k, "0").startswith(v) for k, v in tunables.items()):
                        return ms
                return None
            yield w, median, min(ms for _, _, ms in timed)

def write_csv(path, logs):
    """One row a (workload, kernel) of the logs, its first full timing, in the ground truth's
    columns (tuner/tune_replay.h's tune_truth_load reads them): the workload (seqlen is the query
    length; seqlen_k, heads_k and bottom_right where a log has decode shapes or grouped heads), the
    family, a column a tunable, the median."""
    rows, names = [], []
    for log in logs:
        for w, timed in LogResults(log).by_workload.values():
            if w["head_dim_v"] != w["head_dim"] or w["softcap"] or w["window"] or w["varlen"]:
                raise SystemExit(f"{log}: {w}: the truth's columns hold one head dim, no softcap, window "
                                 "or packed batch")
            seen = set()
            for family, tunables, ms in timed:
                text = " ".join(f"{k}={v}" for k, v in tunables.items())
                if (family, text) in seen:
                    continue
                seen.add((family, text))
                names += [k for k in tunables if k not in names]
                rows.append((w, family, tunables, ms))
    # the decode columns only where a workload needs them: a file of square dense problems keeps
    # the columns it had
    extra = ["seqlen_k", "heads_k", "bottom_right"]
    if all(w["seqlen_q"] == w["seqlen_k"] and not w["heads_k"] and not w["bottom_right"] for w, _, _, _ in rows):
        extra = []
    with open(path, "w") as out:
        out.write(",".join(["op", "dtype", "head_dim", "causal", "batch", "heads", "seqlen"] + extra + ["family"] +
                           names + ["status", "median_ms"]) + "\n")
        for w, family, tunables, ms in rows:
            out.write(",".join([w["op"], w["dtype"], str(w["head_dim"]), str(w["causal"]), str(w["batch"]),
                                str(w["heads"]), str(w["seqlen_q"])] + [str(w[k]) for k in extra] + [family] +
                               [tunables.get(k, "") for k in names] + ["ok", str(ms)]) + "\n")


def ln(x, y):
    return abs(math.log(x / y))


def fill(w, sms, cap):
    backward = w["op"] == "bwd"
    rows = w["seqlen_k"] if backward else w["seqlen_q"]
    heads = w["heads_k"] if backward and w["heads_k"] else w["heads"]
    return min(w["batch"] * heads * math.ceil(rows / 128) / sms, cap)


def kind_gap(a, b):
    ratio = lambda w: w["heads"] / w["heads_k"] if w["heads_k"] else 1.0
    return (ln(ratio(a), ratio(b)) + (a["softcap"] != b["softcap"]) + (a["causal"] != b["causal"]) +
            (a["window"] != b["window"]) + (a["bottom_right"] != b["bottom_right"]) +
            (1 if (not a["varlen"]) != (not b["varlen"]) else abs(a["varlen"] - b["varlen"]) / 8))


def make_distances(sms):
    def old(a, b):
        return ln(a["seqlen_q"], b["seqlen_q"]) + ln(a["seqlen_k"], b["seqlen_k"]) + \
            0.5 * ln(a["batch"] * a["heads"], b["batch"] * b["heads"])
    out = {"old": old}
    for cap in (1, 2, 4, 8):
        for wt in (0.5, 1, 2, 4, 8):
            out[f"fill {cap} w{wt}"] = (lambda c, wt: lambda a, b: ln(a["seqlen_q"], b["seqlen_q"]) +
                                        ln(a["seqlen_k"], b["seqlen_k"]) +
                                        wt * ln(fill(a, sms, c), fill(b, sms, c)))(cap, wt)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table")
    ap.add_argument("--csv", help="write the logs' timings to this file and stop")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--rows", action="store_true")
    ap.add_argument("--show", default="old,fill 4 w4")
    args = ap.parse_args()
    if args.csv:
        write_csv(args.csv, args.inputs)
        return
    if not args.table:
        ap.error("--table is needed to replay")
    table = parse_table(args.table)
    distances = make_distances(args.sms)
    shown = args.show.split(",")
    ratios = {name: [] for name in distances}
    untimed = {name: 0 for name in distances}
    for path in args.inputs:
        results = DbResults(path) if path.endswith(".db") else LogResults(path)
        for w, median, best in results.workloads():
            same = [(t, f) for t, f in table
                    if all(t[k] == w[k] for k in ("op", "dtype", "head_dim", "head_dim_v"))
                    and (t["causal"] or t["window"]) == (w["causal"] or w["window"])
                    and (t["seqlen_q"] <= 16) == (w["seqlen_q"] <= 16) and t != w]
            if not same:
                continue
            least = min(kind_gap(w, t) for t, _ in same)
            near = [(t, f) for t, f in same if kind_gap(w, t) == least]
            picks = []
            for name, dist in distances.items():
                t, f = min(near, key=lambda tf: dist(w, tf[0]))   # ties: the table's order
                ms = median(f)
                if ms is None:
                    untimed[name] += 1
                    picks.append((name, t, None))
                    continue
                picks.append((name, t, ms))
            for name, t, ms in picks:
                if ms:
                    ratios[name].append(ms / best)
            if args.rows:
                desc = " ".join(f"{name}: B{t['batch']} N{t['seqlen_q']} " + (f"{ms / best:.3f}" if ms else "untimed")
                                for name, t, ms in picks if name in shown)
                print(f"{w['op']} {w['dtype']} d{w['head_dim']} c{w['causal']} B{w['batch']} H{w['heads']}"
                      f"{'/' + str(w['heads_k']) if w['heads_k'] else ''} N{w['seqlen_q']}: {desc}")
    print(f"{'distance':20} {'n':>4} {'geomean':>8} {'worst':>7} {'>2%':>4} {'>5%':>4} {'untimed':>7}")
    for name, r in ratios.items():
        if r:
            gm = math.exp(sum(map(math.log, r)) / len(r))
            print(f"{name:20} {len(r):4d} {gm:8.3f} {max(r):7.3f} {sum(x > 1.02 for x in r):4d} "
                  f"{sum(x > 1.05 for x in r):4d} {untimed[name]:7d}")


if __name__ == "__main__":
    main()
