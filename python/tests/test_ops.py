"""CPU tests of flashtune's PyTorch operators (needs PyTorch, no GPU; exits 77, ctest's skip code,
without it): both are registered with their schemas, and their fake implementations (what
torch.compile and torch.export trace with) give the real outputs' shapes, dtypes, devices and
layouts for CUDA fake tensors, and refuse bad problems with the eager path's messages.
Run: python3 python/tests/test_ops.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    HAVE_TORCH = hasattr(torch, "library") and hasattr(torch.library, "custom_op")
except ImportError:
    HAVE_TORCH = False

import flashtune  # noqa: E402
from flashtune import _ops  # noqa: E402

# attention_forward's arguments after q, k, v: causal, scale, causal_align, window, window_left,
# window_right, softcap, deterministic
PLAIN = (False, None, 0, 0, 0, 0, 0.0, None)


def fake(shape, dtype=None, strides=None):
    t = torch.empty(shape, dtype=dtype or torch.bfloat16, device="cuda")
    return t if strides is None else torch.empty_strided(shape, strides, dtype=t.dtype, device="cuda")


class Operators(unittest.TestCase):
    def setUp(self):
        import logging   # a refusal in a fake implementation is logged by the fake-tensor machinery too
        logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

    def test_registered_with_their_schemas(self):
        fwd = str(torch.ops.flashtune.attention_forward.default._schema)
        bwd = str(torch.ops.flashtune.attention_backward.default._schema)
        self.assertIn("attention_forward(Tensor q, Tensor k, Tensor v, bool causal, float? scale", fwd)
        self.assertIn("-> (Tensor, Tensor)", fwd)
        # the sinks' gradient beside dQ, dK, dV; float32's TF32 switch in both, False unless given
        self.assertIn("bool deterministic, Tensor? sinks=None, bool allow_tf32=False) -> (Tensor, Tensor, Tensor, "
                      "Tensor)", bwd)
        self.assertIn("Tensor? sinks=None, bool allow_tf32=False) -> (Tensor, Tensor)", fwd)
        for name in ("attention_varlen_forward", "attention_varlen_backward"):
            self.assertIn("bool allow_tf32=False", str(getattr(torch.ops.flashtune, name).default._schema))
        self.assertTrue(_ops._HAVE_OPS)
        self.assertFalse(_ops.compiling())   # eager here

    def test_fake_outputs_are_the_real_ones_shapes(self):
        with FakeTensorMode():
            for dtype, lse_dtype in ((torch.bfloat16, torch.float32), (torch.float64, torch.float64)):
                q, k, v = fake((2, 8, 100, 64), dtype), fake((2, 2, 77, 64), dtype), fake((2, 2, 77, 32), dtype)
                o, lse = torch.ops.flashtune.attention_forward(q, k, v, True, 0.5, 1, 1, 16, 0, 30.0, True)
                self.assertEqual((o.shape, o.dtype, o.device), ((2, 8, 100, 32), dtype, q.device))
                self.assertEqual((lse.shape, lse.dtype), ((2, 8, 100), lse_dtype))
                self.assertTrue(o.is_contiguous())
                grads = torch.ops.flashtune.attention_backward(torch.empty_like(o), q, k, v, o, lse, *PLAIN[:-1],
                                                               False)
                self.assertEqual(len(grads), 4)
                self.assertEqual(grads[3].shape, (0,))   # no sinks: an empty sinks' gradient
                for g, t in zip(grads, (q, k, v)):
                    self.assertEqual((g.shape, g.stride(), g.dtype), (t.shape, t.stride(), t.dtype))
            # float32 with TF32 allowed: the same outputs
            q32 = fake((2, 8, 100, 64), torch.float32)
            o, lse = torch.ops.flashtune.attention_forward(q32, q32, q32, *PLAIN, None, True)
            self.assertEqual((o.shape, o.dtype, lse.dtype), ((2, 8, 100, 64), torch.float32, torch.float32))
            grads = torch.ops.flashtune.attention_backward(torch.empty_like(o), q32, q32, q32, o, lse, *PLAIN[:-1],
                                                           False, None, True)
            self.assertEqual(grads[0].shape, q32.shape)
            # a [B, N, H, D] view: O is laid out [B, N, H, D] too, as SDPA's (new_output), and the
            # gradient keeps the query's layout (empty_like), as the real ones do
            q = fake((2, 100, 8, 64)).transpose(1, 2)
            o, _ = torch.ops.flashtune.attention_forward(q, q, q, *PLAIN)
            self.assertEqual((o.shape, o.stride()), ((2, 8, 100, 64), (100 * 8 * 64, 64, 8 * 64, 1)))
            self.assertTrue(o.transpose(1, 2).is_contiguous())
            dq, _, _, _ = torch.ops.flashtune.attention_backward(fake((2, 8, 100, 64)), q, q, q, fake((2, 8, 100, 64)),
                                                                 fake((2, 8, 100), torch.float32), *PLAIN[:-1], False)
            self.assertEqual(dq.stride(), q.stride())

    def test_variable_length_fakes(self):
        with FakeTensorMode():
            q, k, v = fake((300, 8, 64)), fake((500, 2, 64)), fake((500, 2, 32))
            cu = torch.empty((4,), dtype=torch.int32, device="cuda")
            o, lse = torch.ops.flashtune.attention_varlen_forward(q, k, v, cu, cu, 200, 300, True, None, 0, 0, 0, 0,
                                                                  0.0, None)
            self.assertEqual((o.shape, lse.shape, lse.dtype), ((300, 8, 32), (8, 300), torch.float32))
            grads = torch.ops.flashtune.attention_varlen_backward(torch.empty_like(o), q, k, v, o, lse, cu, cu, 200,
                                                                  300, True, None, 0, 0, 0, 0, 0.0, False)
            for g, t in zip(grads, (q, k, v)):
                self.assertEqual((g.shape, g.stride()), (t.shape, t.stride()))
            q32 = fake((300, 8, 64), torch.float32)
            o, _ = torch.ops.flashtune.attention_varlen_forward(q32, q32, q32, cu, cu, 200, 300, True, None, 0, 0, 0, 0,
                                                                0.0, None, None, True)
            self.assertEqual((o.shape, o.dtype), ((300, 8, 64), torch.float32))
            with self.assertRaisesRegex(ValueError, "multiple of the key/value heads"):
                torch.ops.flashtune.attention_varlen_forward(q, fake((500, 3, 64)), fake((500, 3, 64)), cu, cu, 200,
                                                             300, True, None, 0, 0, 0, 0, 0.0, None)

    def test_export_carries_allow_tf32(self):
        # torch.export traces attention() into the operator (with fake CUDA tensors: no GPU here),
        # allow_tf32 among its arguments as the call gave it
        class Attention(torch.nn.Module):
            def __init__(self, allow):
                super().__init__()
                self.allow = allow

            def forward(self, q, k, v):
                return flashtune.attention(q, k, v, is_causal=True, allow_tf32=self.allow)

        class Packed(torch.nn.Module):   # a variable-length batch, through its own operator
            def __init__(self, allow):
                super().__init__()
                self.allow = allow

            def forward(self, q, k, v, cu):
                return flashtune.attention_varlen(q, k, v, cu, cu, 200, 300, causal=True, allow_tf32=self.allow)

        for allow in (True, False):
            with FakeTensorMode():
                q, p = fake((2, 4, 100, 64), torch.float32), fake((300, 8, 64), torch.float32)
                cu = torch.empty((4,), dtype=torch.int32, device="cuda")
                traced = [("attention_forward", torch.export.export(Attention(allow), (q, q, q)).graph),
                          ("attention_varlen_forward", torch.export.export(Packed(allow), (p, p, p, cu)).graph)]
            for op, graph in traced:
                calls = [n for n in graph.nodes if n.op == "call_function" and f"flashtune.{op}." in str(n.target)]
                self.assertEqual(len(calls), 1, op)
                names = [a.name for a in calls[0].target._schema.arguments]
                given = dict(zip(names, calls[0].args), **calls[0].kwargs)
                self.assertEqual(given.get("allow_tf32", False), allow, op)

    def test_fake_refuses_what_the_kernels_refuse(self):
        with FakeTensorMode():
            q = fake((1, 4, 16, 64))
            cases = [((q, fake((1, 4, 16, 32)), q), ValueError, "key: head_dim 32 differs from query's 64"),
                     ((q, fake((1, 3, 16, 64)), fake((1, 3, 16, 64))), ValueError, "multiple of the key/value heads"),
                     ((q, q.float(), q), TypeError, "must share one dtype"),
                     ((q, q, fake((1, 4, 16, 300))), ValueError, "value: head_dim=300 is not supported")]
            for args, exc, fragment in cases:
                with self.assertRaises(exc) as cm:
                    torch.ops.flashtune.attention_forward(*args, *PLAIN)
                self.assertIn(fragment, str(cm.exception))


if __name__ == "__main__":
    if not HAVE_TORCH:
        print("no PyTorch with torch.library.custom_op: test_ops.py skipped")
        sys.exit(77)
    unittest.main()
