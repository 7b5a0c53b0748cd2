"""bench/plot.py and the README's speed table, on the committed results (no GPU, no matplotlib).

The figures' facts come from compare.json beside the CSV and name device, date, commit, versions
and shapes; every backend has one colour of its own; the README's bf16 table holds exactly the
geometric means and worst points that the CSV gives; the figures the README and docs show exist.
FlexAttention ("flex", added after the committed run) has its own label and colour, enters the
geometric means and the ratio panels, and is drawn from a CSV that holds it (with matplotlib).
Usage: python3 tests/test_bench_plot.py SOURCE_DIR"""
import csv
import importlib.util
import os
import re
import sys
import tempfile
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
        for i, what in enumerate(("label", "colour", "marker")):
            values = [v[i] for v in plot.BACKENDS.values()]
            self.assertEqual(len(values), len(set(values)), what)
        self.assertLessEqual({r["impl"] for r in self.rows}, set(plot.BACKENDS))
        self.assertEqual(plot.BACKENDS["flex"][:2], ("FlexAttention (torch.compile)", "#9467bd"))
        self.assertIn("flex", plot.PEERS)
        self.assertIn("flex", plot.RATIO_DRAWN)

    def test_readme_table_is_the_csv(self):
        s = plot.summary(self.rows, "bf16")
        with open(os.path.join(SRC, "README.md")) as f:
            readme = f.read()
        for p, name in plot.PASSES:
            line = re.search(rf"^\| {name} \|(.*)\|$", readme, re.M)
            self.assertIsNotNone(line, f"README has no '| {name} |' row")
            cells = [c.strip().replace("*", "") for c in line.group(1).split("|")]
            peers = [q for q in plot.PEERS if (p, q) in s]   # the committed run predates flex
            self.assertEqual(len(cells), len(peers))
            for cell, peer in zip(cells, peers):
                mean, worst, _ = s[(p, peer)]
                digits = 1 if mean >= 10 else 2
                self.assertEqual(cell, f"{mean:.{digits}f} ({worst:.{digits}f})", f"{name} {peer}")

    def test_figures_exist(self):
        for dtype in sorted({r["dtype"] for r in self.rows}):
            self.assertTrue(os.path.exists(os.path.join(RESULTS, f"compare_{dtype}.png")), dtype)
        self.assertTrue(os.path.exists(os.path.join(RESULTS, "summary_bf16.png")))


def with_flex(rows, speedup=1.25):
    """The rows plus a flex backend at `speedup` times the flash backend's TFLOP/s at every point."""
    flex = [dict(r, impl="flex", tflops=r["tflops"] * speedup) for r in rows if r["impl"] == "flash"]
    return rows + flex


class PlotFlex(unittest.TestCase):
    def setUp(self):
        self.rows = with_flex(plot.load_rows(os.path.join(RESULTS, "compare.csv")))

    def test_flex_in_the_geometric_means(self):
        s = plot.summary(self.rows, "bf16")
        for p, _ in plot.PASSES:
            self.assertAlmostEqual(s[(p, "flex")][0], s[(p, "flash")][0] / 1.25, places=9)
            self.assertAlmostEqual(s[(p, "flex")][1], s[(p, "flash")][1] / 1.25, places=9)

    def test_no_summary_without_a_peer(self):
        # compare.py with every peer skipped: flashtune's rows alone, no summary to draw (plot_all
        # raised on an empty max()); math alone is not drawn either.
        alone = [r for r in self.rows if r["impl"] == "flashtune"]
        self.assertTrue(plot.has_summary(self.rows, "bf16"))
        self.assertFalse(plot.has_summary(alone, "bf16"))
        self.assertFalse(plot.has_summary(alone + [r for r in self.rows if r["impl"] == "math"], "bf16"))

    def test_out_folder_is_made(self):
        # --out into a folder that does not exist yet: made (it raised a traceback from savefig).
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "figures", "h100")
            self.assertEqual(plot.out_folder(os.path.join(tmp, "compare.csv"), out), out)
            self.assertTrue(os.path.isdir(out))
            self.assertEqual(plot.out_folder(os.path.join(tmp, "compare.csv")), tmp)

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
    def test_figures_without_a_peer(self):
        # plot_all on flashtune's rows alone: its figure, and no summary (it raised before).
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "compare.csv")
            alone = [r for r in self.rows if r["dtype"] == "bf16" and r["impl"] == "flashtune"]
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(alone[0].keys()))
                w.writeheader()
                w.writerows(alone)
            written = plot.plot_all(path, out, os.path.join(RESULTS, "compare.json"))
            self.assertEqual([os.path.basename(x) for x in written], ["compare_bf16.png"])

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
    def test_figures_with_flex(self):
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "compare.csv")
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(self.rows[0].keys()))
                w.writeheader()
                w.writerows(r for r in self.rows if r["dtype"] == "bf16")
            written = plot.plot_all(path, out, os.path.join(RESULTS, "compare.json"))
            self.assertEqual([os.path.basename(x) for x in written], ["compare_bf16.png", "summary_bf16.png"])
            for x in written:
                self.assertGreater(os.path.getsize(x), 10000, x)


if __name__ == "__main__":
    unittest.main(verbosity=1)
