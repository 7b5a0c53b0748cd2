"""bench/capture_served.py without a GPU: it reads a capture file's problems as the tuner does
(dev/gpu/underfilled.capture, which `flashtune tune --from-capture` also loads in the CPU tests'
compile-only run), names them by their fields alone, and its join states the tuned winners'
speed against the shipped choice's from two runs' timings.

Usage: python3 tests/test_capture_served.py SOURCE_DIR"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv.pop(1))
sys.path.insert(0, os.path.join(SRC, "bench"))
import capture_served  # noqa: E402

CAPTURE = os.path.join(SRC, "dev", "gpu", "underfilled.capture")


class CaptureServed(unittest.TestCase):
    def test_problems_read_with_their_kinds(self):
        ps = capture_served.problems(CAPTURE)
        self.assertEqual(len(ps), 18)
        self.assertEqual(ps[0]["op"], "fwd")
        self.assertEqual(ps[0]["seqlen_q"], 1024)
        self.assertEqual(ps[-1]["heads_k"], 8)
        self.assertEqual(sum("heads_k" in p for p in ps), 2)
        # The name leaves out the counts and the choice, so two runs' captures join.
        self.assertNotIn("calls", capture_served.key(ps[0]))
        self.assertNotIn("served", capture_served.key(ps[0]))
        self.assertIn("heads_k=8", capture_served.key(ps[-1]))

    def test_malformed_lines_are_refused_with_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            for text, says in (("op=fwd dtype=bf16 head_dim 64\n", ":2: 'head_dim' is not NAME=VALUE"),
                               ("op=fwd dtype=bf16 head_dim=64 head_dim_v=64 casual=1 batch=1 heads=2 seqlen_q=9 "
                                "seqlen_k=9\n", ":2: 'casual' is not a field of a capture line"),
                               ("  op=fwd dtype=bf16 head_dim=64 head_dim_v=64 causl=1\n",
                                ":2: 'causl' is not a field of a capture line"),
                               ("op=fwd dtype=bf16 head_dim=64 head_dim_v=64 batch=1 heads=2 seqlen_q=9\n",
                                ":2: no seqlen_k= field")):
                path = os.path.join(d, "bad.capture")
                with open(path, "w") as f:
                    f.write("flashtune capture format 1\n" + text)
                with self.assertRaises(SystemExit) as e:
                    capture_served.problems(path)
                self.assertIn(path + says, str(e.exception))

    def test_join_states_the_speed_against_the_shipped_choice(self):
        with tempfile.TemporaryDirectory() as d:
            shipped, tuned = os.path.join(d, "s.json"), os.path.join(d, "t.json")
            exact = "fwd_wgmma ...; rule: database exact (tuned on this GPU model)"
            rows = lambda ms, choice: {"a": {"ms": ms[0], "choice": choice}, "b": {"ms": ms[1], "choice": choice},
                                       "only-here": {"ms": 1.0, "choice": choice},
                                       "neighbour": {"ms": ms[1], "choice": choice}}
            json.dump({"rows": rows((2.0, 1.0), "shipped tuned table exact")}, open(shipped, "w"))
            got = {k: v for k, v in rows((1.0, 1.25), exact).items() if k != "only-here"}
            got["neighbour"]["choice"] = "fwd_wgmma ...; rule: database nearest (tuned at batch=2 ...)"
            json.dump({"rows": got}, open(tuned, "w"))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                capture_served.join(shipped, tuned)
        text = out.getvalue()
        self.assertIn("| a | 2.0000 | 1.0000 | 2.000 |", text)
        self.assertIn("| b | 1.0000 | 1.2500 | 0.800 |", text)
        self.assertNotIn("only-here", text)
        self.assertIn("2 problems: tuned against the shipped choice 1.265 geometric mean", text)
        self.assertIn("behind beyond 2 %: 1", text)
        # served a neighbour's winner: counted, not compared
        self.assertNotIn("| neighbour |", text)
        self.assertIn("Not served by a winner tuned for them, so not compared: 1\n- neighbour", text)


if __name__ == "__main__":
    unittest.main()
