"""dev/duel.py without a GPU: the space it writes holds, for each workload of the base table,
exactly the kernels the tables name (the tuner loads and enumerates it), and its report reads
each kernel's median back by family and tunables and states the speed ratios.

Usage: python3 tests/test_duel.py SOURCE_DIR FLASHTUNE"""
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import unittest

FLASHTUNE = os.path.abspath(sys.argv.pop(2))
SRC = os.path.abspath(sys.argv.pop(1))
DUEL = os.path.join(SRC, "dev", "duel.py")
H200 = os.path.join(SRC, "db", "tuned", "h200-sm90.txt")
H100 = os.path.join(SRC, "db", "tuned", "h100-sm90.txt")


def lines(path, pick):
    """The winners lines of a table that pick(fields) takes, with its format line."""
    out = ["flashtune winners format 1"]
    for line in open(path):
        if line.startswith("device="):
            fields = dict(t.split("=", 1) for t in shlex.split(line))
            if pick(fields):
                out.append(line.rstrip("\n"))
    return out


def grid_point(fields):
    """Three dense bf16 workloads both tables hold: d128 backward at N 1024, 4096, 16384 (16384 tokens)."""
    return (fields["op"] == "bwd" and fields["dtype"] == "bf16" and fields["head_dim"] == "128" and
            fields.get("head_dim_v") == "128" and fields["causal"] == "0" and "heads_k" not in fields and
            "window" not in fields and "varlen" not in fields and fields["seqlen_q"] in ("1024", "4096", "16384") and
            int(fields["batch"]) * int(fields["seqlen_q"]) == 16384)


def duel(*args):
    return subprocess.run([sys.executable, DUEL, *args], capture_output=True, text=True, check=True).stdout


class Duel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.a = os.path.join(self.dir.name, "a.txt")
        self.b = os.path.join(self.dir.name, "b.txt")
        open(self.a, "w").write("\n".join(lines(H200, grid_point)) + "\n")
        open(self.b, "w").write("\n".join(lines(H100, grid_point)) + "\n")
        self.rows_a = lines(H200, grid_point)[1:]
        self.assertEqual(len(self.rows_a), 3)

    def tearDown(self):
        self.dir.cleanup()

    def kernels(self, path):
        """{workload seqlen: (BLOCK_M, BLOCK_N, NUM_WARPS, ...)} of a table's lines."""
        out = {}
        for line in lines(path, grid_point)[1:]:
            f = dict(t.split("=", 1) for t in shlex.split(line))
            out[f["seqlen_q"]] = tuple(f[p] for p in ("BLOCK_M", "BLOCK_N", "NUM_WARPS", "NUM_STAGES", "DQ_FIRST",
                                                     "DV_EARLY", "PERSISTENT", "DQ_INIT"))
        return out

    def test_space_holds_each_tables_kernel(self):
        space = os.path.join(self.dir.name, "duel.lua")
        open(space, "w").write(duel("space", "--flashtune", FLASHTUNE, f"a={self.a}", f"b={self.b}"))
        a, b = self.kernels(self.a), self.kernels(self.b)
        want = sum(1 if a[n] == b[n] else 2 for n in a)
        run = subprocess.run([FLASHTUNE, "tune", "--threads", "1", "--budget", "1", space], capture_output=True,
                             text=True, env=dict(os.environ, FLASHTUNE_CACHE_DIR=""))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn(f"3 spaces, 3 workloads, {want} candidates", run.stdout)
        # Two kernels at a workload are confirmed in rotation; one alone is timed once.
        text = open(space).read()
        self.assertEqual(text.count("confirm = { top = 2"), want - 3)

    def test_report_reads_the_medians_back(self):
        db = os.path.join(self.dir.name, "x.db")
        for table in (self.a, self.b):
            subprocess.run([FLASHTUNE, "db", "import", "--db", db, table], check=True, capture_output=True)
        con = sqlite3.connect(db)
        con.execute("UPDATE sweeps SET space_file = 'duel.lua'")   # as a sweep's own timings
        con.commit()
        con.close()
        out = duel("report", "--flashtune", FLASHTUNE, db, f"a={self.a}", f"b={self.b}")
        medians = {}
        for path in (self.a, self.b):
            for line in lines(path, grid_point)[1:]:
                f = dict(t.split("=", 1) for t in shlex.split(line))
                medians.setdefault(f["seqlen_q"], []).append(float(f["median_ms"]))
        for n, (ma, mb) in medians.items():
            row = next(l for l in out.splitlines() if f" {n}x{n} |" in l)
            cells = [c.strip() for c in row.strip("|").split("|")]
            if cells[3] == "same":   # one kernel, stored twice: the later import's median
                self.assertAlmostEqual(float(cells[1]), mb, places=3)
                continue
            self.assertAlmostEqual(float(cells[1]), ma, places=3)
            self.assertAlmostEqual(float(cells[2]), mb, places=3)
            self.assertAlmostEqual(float(cells[3]), ma / mb, places=3)
        summary = re.search(r"b against a, bwd: (\d+) workloads with another kernel \((\d+) the same\), speed ([0-9.]+)",
                            out)
        self.assertIsNotNone(summary, out)
        self.assertEqual(int(summary.group(1)) + int(summary.group(2)), 3)


if __name__ == "__main__":
    unittest.main()
