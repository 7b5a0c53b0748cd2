#!/usr/bin/env python3
"""How a sweep into a database holding a winners table (dev/gpu/sweep.sh GUARD=...) treated that
table: per workload the sweep measured, the stored winner, the fastest of this sweep and the
declared one (db_declare_winners). Says how many stored winners the least median alone would
have replaced and by how much they trailed, against how many the declaration replaced; and for
those kept within the interval, whether the kernel that beat them ran at a higher SM clock (the
least clock sampled while each was timed): whether the clocks explain the small leads.

Usage: dev/declare-churn.py BEFORE.db AFTER.db
  BEFORE.db: the database after the import, before the sweep (the stored winners, declared
  'imported'); AFTER.db: the same database after the sweep.
"""
import sqlite3
import statistics
import sys


def declared(path):
    """{(device name, workload id): (kernel id, reason, behind)}"""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT d.name, c.workload_id, c.kernel_id, c.reason, c.behind FROM declared c "
                       "JOIN devices d ON d.id = c.device_id").fetchall()
    con.close()
    return {(name, w): (k, reason, behind) for name, w, k, reason, behind in rows}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = declared(sys.argv[1]), declared(sys.argv[2])
    con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
    # The sweep's own timings: results of sweeps that are not imports.
    timed, clock = {}, {}
    for name, w, k, ms, mhz in con.execute(
            "SELECT d.name, r.workload_id, r.kernel_id, r.median_ms, r.sm_clock_mhz FROM results r "
            "JOIN sweeps s ON s.id = r.sweep_id JOIN devices d ON d.id = r.device_id WHERE r.status = 'ok' "
            "AND r.median_ms > 0 AND s.space_file NOT LIKE 'import:%'"):
        timed.setdefault((name, w), {})[k] = ms
        clock[(name, w, k)] = mhz
    label = {w: f"{op} {dt} d{hd} {'causal ' if c else ''}b{b} h{h} {sq}x{sk}{(' ' + x) if x else ''}"
             for w, op, dt, hd, c, b, h, sq, sk, x in con.execute(
                 "SELECT id, op, dtype, head_dim, causal, batch, heads, seqlen_q, seqlen_k, extra FROM workloads")}
    con.close()

    measured = kept_same = old_replaces = new_replaces = untimed = 0
    kept_gaps, replaced_gaps, lines, clock_pairs, replaced_why = [], [], [], [], {}
    for key, (dk, reason, behind) in sorted(after.items(), key=lambda kv: label.get(kv[0][1], "")):
        if reason == "imported" or key not in timed:
            continue
        measured += 1
        times = timed[key]
        fastest = min(times, key=lambda k: (times[k], k))
        shipped = before.get(key, (None,))[0]
        if shipped is None:
            continue
        if shipped not in times:
            untimed += 1
        gap = times[shipped] / times[fastest] - 1 if shipped in times else float("nan")
        if fastest == shipped:
            kept_same += 1
            continue
        old_replaces += 1
        mhz_f, mhz_s = clock.get(key + (fastest,)), clock.get(key + (shipped,))
        if dk == shipped:
            kept_gaps.append(gap)
            if mhz_f and mhz_s:
                clock_pairs.append((mhz_f, mhz_s))
        else:
            new_replaces += 1
            replaced_gaps.append(gap)
            replaced_why[reason] = replaced_why.get(reason, 0) + 1
        lines.append(f"  {label.get(key[1], key[1]):<44} stored winner {100 * gap:5.1f} % behind the fastest: "
                     f"{'kept' if dk == shipped else 'replaced'} (declared: {reason}, "
                     f"{100 * (behind or 0):.1f} % behind); least SM clock fastest {mhz_f or 0:.0f}, "
                     f"stored {mhz_s or 0:.0f} MHz")
    print("\n".join(lines))
    print(f"workloads this sweep declared: {measured}")
    print(f"stored winner still the fastest: {kept_same}")
    print(f"the least median would replace: {old_replaces} (stored winner not re-timed: {untimed})")
    print(f"the declaration replaced: {new_replaces}")
    if kept_gaps:
        print(f"kept within the interval: {len(kept_gaps)}, behind by median {100 * statistics.median(kept_gaps):.2f} %,"
              f" at most {100 * max(kept_gaps):.2f} %")
    if clock_pairs:
        higher = sum(f > s for f, s in clock_pairs)
        lower = sum(f < s for f, s in clock_pairs)
        print(f"of those, the fastest's least SM clock higher than the stored winner's: {higher}, lower: {lower}, "
              f"equal: {len(clock_pairs) - higher - lower}; mean difference "
              f"{statistics.mean(f - s for f, s in clock_pairs):+.0f} MHz")
    finite = [g for g in replaced_gaps if g == g]
    if finite:
        why = ", ".join(f"{n} {r}" for r, n in sorted(replaced_why.items()))
        print(f"replaced: {len(replaced_gaps)} ({why}; 'fastest': beyond the interval, 'spill_free': the stored "
              f"winner spills and a tied kernel does not, 'holds': the stored winner no longer ties), the stored "
              f"winner behind by median {100 * statistics.median(finite):.2f} %, at least {100 * min(finite):.2f} %")


if __name__ == "__main__":
    main()
