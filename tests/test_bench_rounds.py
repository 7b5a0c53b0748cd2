"""bench/rounds.py: every implementation timed once a round in a rotated order, and its rounds
combined by the median (no GPU, no torch).
Usage: python3 tests/test_bench_rounds.py SOURCE_DIR"""
import os
import sys
import unittest

SRC = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SRC, "bench"))
import rounds  # noqa: E402


class Rounds(unittest.TestCase):
    def test_each_takes_each_place(self):
        order = []
        got = rounds.interleaved(["a", "b", "c"], 3, lambda name: order.append(name) or name.upper())
        self.assertEqual(order, ["a", "b", "c", "b", "c", "a", "c", "a", "b"])
        self.assertEqual(got, {"a": ["A"] * 3, "b": ["B"] * 3, "c": ["C"] * 3})
        for place in range(3):   # every name once at every place
            self.assertEqual(sorted(order[place::3]), ["a", "b", "c"])

    def test_one_round_is_the_plain_order(self):
        order = []
        rounds.interleaved(["x", "y"], 1, order.append)
        self.assertEqual(order, ["x", "y"])
        order.clear()
        rounds.interleaved(["x", "y"], 0, order.append)   # at least once
        self.assertEqual(order, ["x", "y"])
        self.assertEqual(rounds.interleaved([], 3, order.append), {})

    def test_median_of_rounds(self):
        # compare.py's results: ((median, least) forward, (median, least) backward)
        res = [(((1.0, 0.9), (3.0, 2.8)), ""), (((1.2, 1.1), (2.0, 1.9)), ""), (((0.8, 0.7), (2.5, 2.4)), "")]
        self.assertEqual(rounds.median_of_rounds(res), (((1.0, 0.7), (2.5, 1.9)), ""))
        # features.py's: (forward ms, backward ms)
        self.assertEqual(rounds.median_of_rounds([((1.0, 4.0), ""), ((3.0, 2.0), "")]), ((2.0, 3.0), ""))
        self.assertEqual(rounds.median_of_rounds([((1.0, 4.0), "")]), ((1.0, 4.0), ""))
        # the median, not the mean: one slow round (a clock step) does not move it
        self.assertEqual(rounds.median_of_rounds([((1.0,), ""), ((1.1,), ""), ((5.0,), "")]), ((1.1,), ""))

    def test_a_failed_round_fails_the_implementation(self):
        res = [((1.0, 2.0), ""), (None, "CUDA out of memory"), ((1.0, 2.0), "")]
        self.assertEqual(rounds.median_of_rounds(res), (None, "CUDA out of memory"))
        self.assertEqual(rounds.median_of_rounds([]), (None, "not timed"))


if __name__ == "__main__":
    unittest.main()
