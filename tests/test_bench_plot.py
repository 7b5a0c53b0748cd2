"""bench/plot.py and the README's speed table, on the committed results (no GPU, no matplotlib).

The figures' facts come from compare.json beside the CSV and name device, date, commit, versions
and shapes; every backend has one colour of its own; the README's bf16 table holds exactly the
geometric means and worst points that the CSV gives; the figures the README and docs show exist.
Usage: python3 tests/test_bench_plot.py SOURCE_DIR"""
import os
import re
import sys
import unittest

SRC = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SRC, "bench"))
import plot  # noqa: E402

RESULTS = os.path.join(SRC, "bench", "results")


class PlotFacts(unittest.TestCase):
    def setUp(self):
        self.rows = plot.load_rows(os.path.join(RESULTS, "compare.csv"))
        self.facts = plot.load_facts(os.path.join(RESULTS, "compare.json"))

    def test_facts_on_the_figure(self):
        for key in ("device", "driver", "date", "commit", "torch", "cuda", "shapes", "command", "timing"):
            self.assertTrue(self.facts.get(key), f"compare.json lacks {key}")
        text = plot.facts_text(self.facts, self.rows, "bf16")
        for key in ("device", "date", "commit", "torch", "cuda", "shapes"):
            self.assertIn(str(self.facts[key]), text, key)
        self.assertIn("N = 512, 1024, 2048, 4096, 8192, 16384", text)

    def test_one_colour_per_backend(self):
        colours = [c for _, c, _ in plot.BACKENDS.values()]
        self.assertEqual(len(colours), len(set(colours)))
        self.assertEqual(set(plot.BACKENDS), {r["impl"] for r in self.rows})

    def test_readme_table_is_the_csv(self):
        s = plot.summary(self.rows, "bf16")
        with open(os.path.join(SRC, "README.md")) as f:
            readme = f.read()
        for p, name in plot.PASSES:
            line = re.search(rf"^\| {name} \|(.*)\|$", readme, re.M)
            self.assertIsNotNone(line, f"README has no '| {name} |' row")
            cells = [c.strip().replace("*", "") for c in line.group(1).split("|")]
            self.assertEqual(len(cells), len(plot.PEERS))
            for cell, peer in zip(cells, plot.PEERS):
                mean, worst, _ = s[(p, peer)]
                digits = 1 if mean >= 10 else 2
                self.assertEqual(cell, f"{mean:.{digits}f} ({worst:.{digits}f})", f"{name} {peer}")

    def test_figures_exist(self):
        for dtype in sorted({r["dtype"] for r in self.rows}):
            self.assertTrue(os.path.exists(os.path.join(RESULTS, f"compare_{dtype}.png")), dtype)
        self.assertTrue(os.path.exists(os.path.join(RESULTS, "summary_bf16.png")))


if __name__ == "__main__":
    unittest.main(verbosity=1)
