"""CPU tests of the Python package (no GPU, no PyTorch needed): it imports, every argument check
raises the documented error naming the argument, and the library is found or the error says
where it looked. Run: python3 -m unittest discover -s python/tests -p 'test_cpu.py'."""
import ctypes
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import flashtune  # noqa: E402  (the import itself is a test: it must not need torch)
from flashtune import _checks, _library  # noqa: E402


class Dev:
    def __init__(self, kind="cuda", index=0):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __repr__(self):
        return f"{self.type}:{self.index}"


class Fake:
    """What the checks read of a torch.Tensor."""

    def __init__(self, shape, dtype="torch.bfloat16", strides=None, device=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        if strides is None:
            strides, acc = [], 1
            for n in reversed(self.shape):
                strides.insert(0, acc)
                acc *= n
        self._strides = tuple(strides)
        self.device = device or Dev()

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._strides

    def data_ptr(self):
        return 0


def qkv(b=2, h=4, nq=100, nk=77, d=64, dv=64, **kw):
    return Fake((b, h, nq, d), **kw), Fake((b, h, nk, d), **kw), Fake((b, h, nk, dv), **kw)


class Checks(unittest.TestCase):
    def expect(self, exc, fragment, q, k, v):
        with self.assertRaises(exc) as cm:
            _checks.check_tensors(q, k, v)
        self.assertIn(fragment, str(cm.exception))

    def test_good_problems_pass(self):
        for dtype, code in _checks.DTYPES.items():
            self.assertEqual(_checks.check_tensors(*qkv(dtype=dtype)), code)
        q, k, v = qkv(d=128, dv=256)
        self.assertEqual(_checks.check_tensors(q, k, v), 2)
        # a [B, N, H, D] tensor seen as [B, H, N, D]: strides (N*H*D, D, H*D, 1)
        b, n, h, d = 2, 50, 4, 64
        t = Fake((b, h, n, d), strides=(n * h * d, d, h * d, 1))
        self.assertEqual(_checks.check_tensors(t, t, t), 2)

    def test_types(self):
        q, k, v = qkv()
        self.expect(TypeError, "key: expected a torch.Tensor, got list", q, [1, 2], v)
        self.expect(TypeError, "value: dtype torch.int8 is not supported", q, k, Fake(v.shape, dtype="torch.int8"))
        self.expect(TypeError, "share one dtype", q, Fake(k.shape, dtype="torch.float16"), v)

    def test_shapes(self):
        q, k, v = qkv()
        self.expect(ValueError, "query: expected 4 dimensions", Fake((4, 100, 64)), k, v)
        self.expect(ValueError, "batch: query has 2, key 3", q, Fake((3, 4, 77, 64)), v)
        self.expect(ValueError, "heads: query has 4, key 4, value 2", q, k, Fake((2, 2, 77, 64)))
        self.expect(ValueError, "value: seqlen 76 differs from key's 77", q, k, Fake((2, 4, 76, 64)))
        self.expect(ValueError, "key: head_dim 128 differs from query's 64", q, Fake((2, 4, 77, 128)), v)
        self.expect(ValueError, "query: head_dim=40 is not supported (32, 64, 96, 128, 256)",
                    *qkv(d=40))
        self.expect(ValueError, "value: head_dim=48 is not supported", *qkv(dv=48))
        self.expect(ValueError, "query: empty tensor", Fake((2, 4, 0, 64)), k, v)

    def test_layout_and_device(self):
        q, k, v = qkv()
        self.expect(ValueError, "key: the last dimension must be contiguous",
                    q, Fake(k.shape, strides=(1, 2, 3, 2)), v)
        self.expect(ValueError, "value: on device cpu:0", q, k, Fake(v.shape, device=Dev("cpu")))
        self.expect(ValueError, "different devices", q, k, Fake(v.shape, device=Dev("cuda", 1)))

    def test_options(self):
        self.assertEqual(_checks.check_options(None, 0.0, False, None, None, False), (False, None))
        self.assertEqual(_checks.check_options(None, 0.0, True, None, 0.5, False), (True, 0.5))
        self.assertEqual(_checks.check_options(None, 0.0, False, True, None, False), (True, None))
        cases = [
            ((object(), 0.0, False, None, None, False), ValueError, "attn_mask"),
            ((None, 0.1, False, None, None, False), ValueError, "dropout_p=0.1"),
            ((None, 0.0, False, None, None, True), ValueError, "enable_gqa=True"),
            ((None, 0.0, True, False, None, False), ValueError, "disagree"),
            ((None, 0.0, False, None, "2", False), TypeError, "scale: expected a float"),
            ((None, 0.0, False, None, float("nan"), False), ValueError, "scale=nan"),
            ((None, 0.0, False, None, -1.0, False), ValueError, "scale=-1.0"),
        ]
        for args, exc, fragment in cases:
            with self.assertRaises(exc) as cm:
                _checks.check_options(*args)
            self.assertIn(fragment, str(cm.exception))

    def test_attention_checks_before_the_gpu(self):
        # The checks run before torch or the library is touched: errors come without either.
        with mock.patch.object(_library, "library", side_effect=AssertionError("library touched")):
            with self.assertRaises(ValueError):
                flashtune.attention(*qkv(d=40))
            with self.assertRaises(ValueError):
                flashtune.attention(*qkv(), dropout_p=0.5)


class Library(unittest.TestCase):
    def setUp(self):
        _library._lib = None

    def tearDown(self):
        _library._lib = None

    def test_not_found_says_where_it_looked(self):
        with mock.patch.dict(os.environ, {"FLASHTUNE_LIBRARY": "/nonexistent/libflashtune.so"}), \
                mock.patch.object(_library, "candidate_paths", return_value=["/nonexistent/libflashtune.so",
                                                                             "/also/missing/libflashtune.so"]):
            with self.assertRaises(flashtune.LibraryNotFound) as cm:
                _library.library()
        text = str(cm.exception)
        self.assertIn("/nonexistent/libflashtune.so (no such file)", text)
        self.assertIn("/also/missing/libflashtune.so", text)
        self.assertIn("FLASHTUNE_LIBRARY", text)

    def test_environment_variable_comes_first(self):
        with mock.patch.dict(os.environ, {"FLASHTUNE_LIBRARY": "/x/libflashtune.so"}):
            self.assertEqual(_library.candidate_paths()[0], "/x/libflashtune.so")

    def test_desc_matches_the_c_layout(self):
        # int x 8, float, then int64 arrays aligned to 8: 40 + 4 * 24 bytes
        self.assertEqual(ctypes.sizeof(_library.AttentionDesc), 136)
        self.assertEqual(_library.AttentionDesc.q_stride.offset, 40)

    @unittest.skipUnless(os.environ.get("FLASHTUNE_LIBRARY"), "FLASHTUNE_LIBRARY not set (ctest sets it)")
    def test_built_library_opens_without_a_gpu(self):
        lib = _library.library()
        self.assertRegex(lib.ft_version().decode(), r"^\d+\.\d+\.\d+$")
        handle = ctypes.c_void_p()
        self.assertEqual(lib.ft_open(None, ctypes.byref(handle)), 0)
        lib.ft_close(handle)
        status = lib.ft_open(b"/nonexistent/flashtune.db", ctypes.byref(handle))
        self.assertEqual(_library.STATUS_NAMES[status], "FT_ERR_DB")
        self.assertIn("/nonexistent/flashtune.db", lib.ft_last_error(None).decode())


if __name__ == "__main__":
    unittest.main()
