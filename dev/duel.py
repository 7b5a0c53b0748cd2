#!/usr/bin/env python3
"""Winners tables measured against each other on one GPU, in one sweep, in rotation.

  dev/duel.py space [--flashtune PATH] NAME=FILE [NAME=FILE ...] > duel.lua
      A search space with, for each workload of the first file (the base), exactly the kernels
      the files name for it (one space a workload and family), each workload's kernels timed
      and then re-timed four times in rotation (the confirm step), so that the clocks of one
      moment do not favour one table. A workload a file lacks is timed without that file's
      kernel. `flashtune tune duel.lua` (or dev/gpu/sweep.sh duel.lua) sweeps it.
  dev/duel.py report [--flashtune PATH] DB NAME=FILE [NAME=FILE ...]
      After the sweep: per workload each file's kernel's median (by its family and tunables) and its
      speed against the base's ("same" where it is the base's kernel); then per file and direction,
      over the workloads where its kernel differs, the geometric mean of the speed ratios with
      their spread (10th to 90th percentile), and how many it leads or trails by more than 2 %
      (the timing noise between two sweeps, notes/tuning.md).

The family's tunables come from `flashtune emit --help` (its table of parameters and roles), so
this script knows no family of its own. Uses for it: a fresh sweep's winners against the shipped
table's, an H200's own table against the H100's on the H200.
"""
import math
import re
import shlex
import sqlite3
import subprocess
import sys

# The fields of a winners line that say which problem it is (db/db_import.c), in the order
# they key a workload; the rest say where it ran and which kernel won.
WORKLOAD_FIELDS = ("op", "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads", "seqlen_q", "seqlen_k",
                   "heads_k", "softcap", "window", "window_left", "window_right", "bottom_right", "varlen", "tf32",
                   "sinks")
NOISE = 0.02


def read_table(path):
    """[(workload key, {field: value})] of a winners file, in its order."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#") or line.startswith("flashtune winners"):
                continue
            fields = dict(tok.split("=", 1) for tok in shlex.split(line))
            if "op" not in fields or "family" not in fields:
                sys.exit(f"{path}:{n}: not a winners line (no op= or family=)")
            rows.append((workload_key(fields), fields))
    return rows


def workload_key(fields):
    defaults = {"heads_k": "0", "softcap": "0", "window": "0", "window_left": "0", "window_right": "0",
                "bottom_right": "0", "varlen": "0", "tf32": "0", "sinks": "0", "head_dim_v": fields.get("head_dim")}
    return tuple(fields.get(k, defaults.get(k)) for k in WORKLOAD_FIELDS)


def tunables(flashtune):
    """({family: [tunable parameter names it takes]}, {parameter: {value name: number}}), read from
    `flashtune emit --help` (its table of families' parameters, then each parameter's role and
    meaning, whose named values end it as "(0 atomic, 1 separate, 2 ordered)")."""
    text = subprocess.run([flashtune, "emit", "--help"], capture_output=True, text=True).stdout
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.strip().startswith("fwd_mma") and "bwd_wgmma" in l)
    families = lines[head].split()
    takes = {f: set() for f in families}
    for l in lines[head + 1:]:
        cols = l.split()
        if len(cols) != len(families) + 1:
            break
        for f, v in zip(families, cols[1:]):
            if v != "-":
                takes[f].add(cols[0])
    roles, names = {}, {}
    for l in lines:
        cols = l.split()
        if len(cols) >= 3 and cols[1] in ("tunable", "problem") and cols[0].isupper():
            roles[cols[0]] = cols[1]
            named = re.search(r"\((\d+ \w+(?:, \d+ \w+)+)\)$", l.strip())
            if named:
                names[cols[0]] = {n: int(v) for v, n in (pair.split() for pair in named.group(1).split(", "))}
    return {f: sorted(p for p in ps if roles.get(p) == "tunable") for f, ps in takes.items()}, names


def config_of(fields, takes, names):
    """A winners line's kernel as (family, ((tunable, number), ...)): what the space names and
    what the database's kernel_params hold."""
    config = []
    for p in takes[fields["family"]]:
        if p not in fields:
            continue
        v = fields[p]
        number = int(v) if v.lstrip("-").isdigit() else names.get(p, {}).get(v)
        if number is None:
            sys.exit(f"{p}={v} has no number in `flashtune emit --help`")
        config.append((p, number))
    return fields["family"], tuple(config)


def lua_workload(fields):
    w = {k: fields[k] for k in ("dtype", "head_dim", "head_dim_v", "causal", "batch", "heads", "seqlen_q",
                                "seqlen_k")}
    parts = [f"{k} = {v}" if v.isdigit() else f'{k} = "{v}"' for k, v in w.items()]
    if int(fields.get("heads_k", 0)):
        parts.append(f"heads_k = {fields['heads_k']}")
    for flag in ("softcap", "sinks", "tf32", "bottom_right"):
        if int(fields.get(flag, 0)):
            parts.append(f"{flag} = true")
    if int(fields.get("window", 0)):
        parts += [f"window_left = {fields['window_left']}", f"window_right = {fields['window_right']}"]
    if int(fields.get("varlen", 0)):
        parts.append(f"varlen = {int(fields['varlen']) / 8}")
    return "{ " + ", ".join(parts) + " }"


def named_files(args):
    named = []
    for a in args:
        if "=" not in a:
            sys.exit(f"expected NAME=FILE, got '{a}'")
        name, path = a.split("=", 1)
        named.append((name, path, read_table(path)))
    if not named:
        sys.exit(__doc__)
    return named


def space(args):
    flashtune = "build/tuner/flashtune"
    if args[:1] == ["--flashtune"]:
        flashtune, args = args[1], args[2:]
    named = named_files(args)
    takes, names = tunables(flashtune)
    by_file = [dict(rows) for _, _, rows in named]
    out = ["-- Written by dev/duel.py: " + " ".join(f"{n}={p}" for n, p, _ in named),
           "local bench = { warmup_ms = 10, rep_ms = 50, timeout_s = 10 }",
           "local spaces = {}"]
    for key, base in named[0][2]:
        families = {}   # family: its configurations, each ((parameter, number), ...), in the files' order
        for table in by_file:
            if key in table:
                family, config = config_of(table[key], takes, names)
                configs = families.setdefault(family, [])
                if config not in configs:
                    configs.append(config)
        for family, configs in families.items():
            lists = ", ".join(f"{p} = {{{', '.join(str(v) for v in sorted({dict(c)[p] for c in configs}))}}}"
                              for p, _ in configs[0])
            accept = " or ".join("(" + " and ".join(f"p.{p} == {v}" for p, v in c) + ")" for c in configs)
            # One kernel alone is timed once; two or more in rotation (the confirm step takes two).
            confirm = f",\n  confirm = {{ top = {len(configs)}, within = 1.0, rounds = 4 }}" if len(configs) > 1 else ""
            out.append(f'table.insert(spaces, space{{ template = "{family}", params = {{ {lists} }},\n'
                       f'  where = function(p) if {accept} then return true end return false, "no table\'s" end,\n'
                       f"  workloads = {{ {lua_workload(base)} }}, bench = bench{confirm} }})")
    out.append("return spaces")
    print("\n".join(out))


def report(args):
    flashtune = "build/tuner/flashtune"
    if args[:1] == ["--flashtune"]:
        flashtune, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    con = sqlite3.connect(f"file:{args[0]}?mode=ro", uri=True)
    named = named_files(args[1:])
    takes, names = tunables(flashtune)
    params = {}
    for k, name, value in con.execute("SELECT kernel_id, name, value FROM kernel_params"):
        params.setdefault(k, {})[name] = value
    # The sweep's own medians (not an import's) by workload and kernel: the latest result of each
    # (the confirm step's, over its rounds).
    medians = {}
    columns = [k for k in WORKLOAD_FIELDS if k not in ("tf32", "sinks")]   # those two are in `extra`
    cols = ", ".join(f"l.{k}" for k in columns)
    for row in con.execute(f"SELECT {cols}, l.extra, k.family, k.id, r.median_ms FROM results r JOIN workloads l ON "
                           "l.id = r.workload_id JOIN kernels k ON k.id = r.kernel_id JOIN sweeps s ON "
                           "s.id = r.sweep_id WHERE r.status = 'ok' AND r.median_ms > 0 AND s.space_file NOT "
                           "LIKE 'import:%' ORDER BY r.id"):
        *w, extra, family, kid, ms = row
        fields = dict(zip(columns, (str(x) for x in w)), **dict(t.split("=", 1) for t in extra.split()))
        config = tuple((p, params[kid][p]) for p in takes[family] if p in params[kid])
        medians[(workload_key(fields), family, config)] = ms
    base_name = named[0][0]
    tables = [(n, dict(rows)) for n, _, rows in named]
    print("| workload | " + " | ".join(f"{n} ms" for n, _ in tables) + " | " +
          " | ".join(f"{n} / {base_name}" for n, _ in tables[1:]) + " |")
    print("|" + " --- |" * (2 * len(tables)))
    ratios = {n: {} for n, _ in tables[1:]}
    same = {n: {} for n, _ in tables[1:]}   # workloads where a file names the base's kernel: one timing, no ratio
    for key, base in named[0][2]:
        ms = [medians.get((key,) + config_of(t[key], takes, names)) if key in t else None for _, t in tables]
        label = f"{key[0]} {key[1]} d{key[2]}{'' if key[3] == key[2] else '/' + key[3]} " \
                f"{'causal ' if key[4] == '1' else ''}b{key[5]} h{key[6]} {key[7]}x{key[8]}"
        speed = []
        for (n, t), m in zip(tables[1:], ms[1:]):
            if m and ms[0] and config_of(t[key], takes, names) == config_of(base, takes, names):
                same[n][key[0]] = same[n].get(key[0], 0) + 1
                speed.append("same")
                continue
            if m and ms[0]:
                ratios[n].setdefault(key[0], []).append(ms[0] / m)
            speed.append(f"{ms[0] / m:.3f}" if m and ms[0] else "-")
        print(f"| {label} | " + " | ".join(f"{m:.4f}" if m else "-" for m in ms) + " | " + " | ".join(speed) + " |")
    print()
    for n, by_op in ratios.items():
        for op, rs in sorted(by_op.items()):
            rs.sort()
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            p10, p90 = rs[int(0.1 * (len(rs) - 1))], rs[int(0.9 * (len(rs) - 1))]
            ahead, behind = sum(r > 1 + NOISE for r in rs), sum(r < 1 - NOISE for r in rs)
            print(f"{n} against {base_name}, {op}: {len(rs)} workloads with another kernel ({same[n].get(op, 0)} "
                  f"the same), speed {gm:.4f} (geometric mean; p10 {p10:.3f}, p90 {p90:.3f}, min {rs[0]:.3f}, max "
                  f"{rs[-1]:.3f}); ahead beyond {NOISE:.0%} at {ahead}, behind beyond it at {behind}")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("space", "report"):
        sys.exit(__doc__)
    (space if sys.argv[1] == "space" else report)(sys.argv[2:])


if __name__ == "__main__":
    main()
