"""CPU tests of the Python package (no GPU, no PyTorch needed): it imports, every argument check
raises the documented error naming the argument, the library is found or the error says where it
looked, and, with the stand-in torch of fake_torch.py, attention's forward and backward pass the
C calls the desc, pointers, stream and device that the tensors say.
Run: python3 -m unittest discover -s python/tests -p 'test_cpu.py'."""
import ctypes
import ctypes.util
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import flashtune  # noqa: E402  (the import itself is a test: it must not need torch)
from flashtune import _attention, _checks, _fallback, _library, _workspace  # noqa: E402
import fake_torch  # noqa: E402


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


class IntLike:
    """An int that is not an int, as numpy's are: has __index__."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


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
        for d, dv in ((1, 1), (13, 40), (80, 24), (200, 256)):   # any head dims up to 256
            for dtype, code in _checks.DTYPES.items():
                self.assertEqual(_checks.check_tensors(*qkv(d=d, dv=dv, dtype=dtype)), code)
        # a [B, N, H, D] tensor seen as [B, H, N, D]: strides (N*H*D, D, H*D, 1)
        b, n, h, d = 2, 50, 4, 64
        t = Fake((b, h, n, d), strides=(n * h * d, d, h * d, 1))
        self.assertEqual(_checks.check_tensors(t, t, t), 2)

    def test_types(self):
        q, k, v = qkv()
        self.expect(TypeError, "key: expected a torch.Tensor, got list", q, [1, 2], v)
        self.expect(TypeError, "value: dtype torch.int8 is not supported", q, k, Fake(v.shape, dtype="torch.int8"))
        self.expect(TypeError, "share one dtype", q, Fake(k.shape, dtype="torch.float16"), v)

    def test_variable_length_arguments(self):
        q, k, v = Fake((300, 8, 64)), Fake((250, 2, 64)), Fake((250, 2, 32))
        cu = Fake((4,), dtype="torch.int32")
        self.assertEqual(_checks.check_varlen(q, k, v, cu, cu, 120, 100), 3)
        bad = [
            ((Fake((1, 300, 8, 64)), k, v, cu, cu, 1, 1), ValueError, "q: expected 3 dimensions [total, heads, head_dim]"),
            ((q, Fake((250, 3, 64)), Fake((250, 3, 32)), cu, cu, 1, 1), ValueError,
             "heads: q has 8, k and v 3; q's must be a multiple of k's"),
            ((q, k, Fake((251, 2, 32)), cu, cu, 1, 1), ValueError, "v: shape (251, 2, 32) must have k's rows and heads"),
            ((q, Fake((250, 2, 32)), v, cu, cu, 1, 1), ValueError, "k: head_dim 32 differs from q's 64"),
            ((q, k, v, Fake((4,), dtype="torch.int64"), cu, 1, 1), TypeError,
             "cu_seqlens_q: dtype torch.int64; expected torch.int32"),
            ((q, k, v, cu, [0, 5], 1, 1), TypeError, "cu_seqlens_k: expected a torch.Tensor of int32, got list"),
            ((q, k, v, cu, Fake((1,), dtype="torch.int32"), 1, 1), ValueError,
             "cu_seqlens_k: expected a vector of batch + 1 >= 2 prefix sums, got shape (1,)"),
            ((q, k, v, cu, Fake((5,), dtype="torch.int32"), 1, 1), ValueError,
             "cu_seqlens_q has 4 prefix sums, cu_seqlens_k 5"),
            ((q, k, v, Fake((4,), dtype="torch.int32", device=Dev("cpu")), cu, 1, 1), ValueError,
             "cu_seqlens_q: on device cpu:0, q on cuda:0"),
            ((q, k, v, cu, cu, 0, 1), ValueError, "max_seqlen_q=0: must be at least 1"),
            ((q, k, v, cu, cu, 5, 2.5), TypeError, "max_seqlen_k: expected an int >= 1, got float"),
            ((q, k, v, cu, cu, True, 5), TypeError, "max_seqlen_q: True is a bool"),
            ((q, k, v, cu, cu, 2 ** 30, 2 ** 30), ValueError, "must be below 2^31"),
        ]
        for args, exc, fragment in bad:
            with self.assertRaises(exc) as cm:
                _checks.check_varlen(*args)
            self.assertIn(fragment, str(cm.exception))

    def test_shapes(self):
        q, k, v = qkv()
        self.expect(ValueError, "query: expected 4 dimensions", Fake((4, 100, 64)), k, v)
        self.expect(ValueError, "batch: query has 2, key 3", q, Fake((3, 4, 77, 64)), v)
        self.expect(ValueError, "heads: key has 4, value 2; they must match", q, k, Fake((2, 2, 77, 64)))
        self.expect(ValueError, "heads: query has 4, key and value 2; they must match, or pass enable_gqa=True",
                    q, Fake((2, 2, 77, 64)), Fake((2, 2, 77, 64)))
        self.expect(ValueError, "value: seqlen 76 differs from key's 77", q, k, Fake((2, 4, 76, 64)))
        self.expect(ValueError, "key: head_dim 128 differs from query's 64", q, Fake((2, 4, 77, 128)), v)
        self.expect(ValueError, "query: head_dim=257 is not supported (1 to 256)", *qkv(d=257))
        self.expect(ValueError, "value: head_dim=300 is not supported (1 to 256)", *qkv(dv=300))
        self.expect(ValueError, "query: empty tensor", Fake((2, 4, 0, 64)), k, v)

    def test_grouped_heads(self):
        q, k, v = qkv(h=8)
        for hk in (8, 4, 2, 1):
            kv = Fake((2, hk, 77, 64)), Fake((2, hk, 77, 64))
            self.assertEqual(_checks.check_tensors(q, *kv, enable_gqa=True), 2)
        kv = Fake((2, 3, 77, 64)), Fake((2, 3, 77, 64))
        with self.assertRaisesRegex(ValueError, "heads: query has 8, key and value 3; with enable_gqa the query "
                                                "heads must be a multiple of the key/value heads"):
            _checks.check_tensors(q, *kv, enable_gqa=True)
        with self.assertRaisesRegex(ValueError, "heads: key has 2, value 4"):
            _checks.check_tensors(q, Fake((2, 2, 77, 64)), Fake((2, 4, 77, 64)), enable_gqa=True)

    def test_layout_and_device(self):
        q, k, v = qkv()
        self.expect(ValueError, "key: the last dimension must be contiguous",
                    q, Fake(k.shape, strides=(1, 2, 3, 2)), v)
        self.expect(ValueError, "value: on device cpu:0", q, k, Fake(v.shape, device=Dev("cpu")))
        self.expect(ValueError, "different devices", q, k, Fake(v.shape, device=Dev("cuda", 1)))

    def test_options(self):
        self.assertEqual(_checks.check_options(False, None, None), (False, None))
        self.assertEqual(_checks.check_options(True, None, 0.5), (True, 0.5))
        self.assertEqual(_checks.check_options(False, True, None), (True, None))
        cases = [
            ((True, False, None), ValueError, "disagree"),
            ((False, None, "2"), TypeError, "scale: expected a float"),
            ((False, None, float("nan")), ValueError, "scale=nan"),
            ((False, None, -1.0), ValueError, "scale=-1.0"),
            ((False, None, 1e-46), ValueError, "scale=1e-46: float32 cannot hold it"),
            ((False, None, 1e300), ValueError, "scale=1e+300: float32 cannot hold it"),
        ]
        for args, exc, fragment in cases:
            with self.assertRaises(exc) as cm:
                _checks.check_options(*args)
            self.assertIn(fragment, str(cm.exception))

    def test_mask_keywords(self):
        check = _checks.check_mask
        self.assertIs(check(False, "top_left", None), _checks.NO_MASK)
        good = [((True, "bottom_right", None), (1, 0, 0, 0)),
                ((False, "top_left", (128, 0)), (0, 1, 128, 0)),
                ((False, "bottom_right", (-1, 5)), (1, 1, -1, 5)),
                ((True, "top_left", (64, -1)), (0, 1, 64, -1)),
                ((True, "bottom_right", [0, 0]), (1, 1, 0, 0)),
                ((False, "top_left", (-1, -1)), (0, 1, -1, -1)),
                ((False, "top_left", (IntLike(3), 2)), (0, 1, 3, 2))]   # any int-like (numpy's too)
        for args, want in good:
            self.assertEqual(check(*args), want, args)
        bad = [((False, "bottom-right", None), ValueError, "causal_align='bottom-right': expected 'top_left' or"),
               ((False, 1, None), TypeError, "causal_align: expected 'top_left' or 'bottom_right', got int"),
               ((False, None, None), TypeError, "causal_align: expected"),
               ((False, "top_left", 128), TypeError, "window_size: expected a pair (left, right)"),
               ((False, "top_left", (1, 2, 3)), TypeError, "window_size: expected a pair"),
               ((False, "top_left", "ab"), TypeError, "window_size: expected a pair"),
               ((False, "top_left", (1.5, 0)), TypeError, "window_size: left side 1.5 is a float"),
               ((False, "top_left", (1, True)), TypeError, "window_size: right side True is a bool"),
               ((False, "top_left", (-2, 0)), ValueError, "window_size=(-2, 0): the left side must be >= 0, or -1"),
               ((False, "top_left", (0, 2 ** 31)), ValueError, "the right side must be >= 0"),
               ((True, "top_left", (16, 3)), ValueError, "window_size=(16, 3) with is_causal=True"),
               ((True, "bottom_right", (-1, 1)), ValueError, "right side must be 0 or -1")]
        for args, exc, fragment in bad:
            with self.assertRaises(exc, msg=args) as cm:
                check(*args)
            self.assertIn(fragment, str(cm.exception))

    def test_attention_checks_before_the_gpu(self):
        # The checks run before torch or the library is touched: errors come without either.
        with mock.patch.object(_library, "library", side_effect=AssertionError("library touched")):
            with self.assertRaises(ValueError):   # strict: an error, not SDPA
                flashtune.attention(*qkv(d=300), strict=True)
            with self.assertRaises(ValueError):
                flashtune.attention(*qkv(), dropout_p=0.5, strict=True)
            with self.assertRaisesRegex(ValueError, "causal_align"):
                flashtune.attention(*qkv(), causal_align="bottom")
            with self.assertRaisesRegex(ValueError, "window_size"):
                flashtune.attention(*qkv(), is_causal=True, window_size=(8, 8))
            with self.assertRaisesRegex(TypeError, "window_size"):
                flashtune.describe_choice(*qkv(), window_size=8)

    def test_quick_path_agrees(self):
        # check_tensors first tries _passes (tensor classes like torch.Tensor, every attribute read
        # once); it must accept exactly what _check_each accepts, and leave every error to it.
        T, cuda0 = fake_torch.Tensor, fake_torch.Device("cuda", 0)
        bf16 = fake_torch.Dtype("bfloat16", 2)

        def t(shape, dtype=bf16, strides=None, device=cuda0):
            return T(shape, dtype, device, strides)

        q, k, v = t((2, 4, 100, 64)), t((2, 4, 77, 64)), t((2, 4, 77, 64))
        good = [(q, k, v), (t((1, 1, 1, 128)), t((1, 1, 5, 128)), t((1, 1, 5, 256))),
                (t((2, 4, 50, 64), strides=(50 * 4 * 64, 64, 4 * 64, 1)),) * 3,
                (t((2, 4, 100, 40)), t((2, 4, 77, 40)), t((2, 4, 77, 13)))]
        for dtype in (fake_torch.Dtype("float32", 4), fake_torch.Dtype("float16", 2), fake_torch.Dtype("float64", 8)):
            good.append(tuple(t(x.shape, dtype) for x in (q, k, v)))   # one dtype object, as torch's are
        bad = [(q, [1], v), (q, k, t(v.shape, fake_torch.Dtype("int8", 1))),
               (q, t(k.shape, fake_torch.Dtype("float16", 2)), v),
               (t((4, 100, 64)), k, v), (q, t((3, 4, 77, 64)), v), (q, k, t((2, 2, 77, 64))),
               (q, k, t((2, 4, 76, 64))), (q, t((2, 4, 77, 128)), v), (t((2, 4, 100, 264)), t((2, 4, 77, 264)), v),
               (q, k, t((2, 4, 77, 257))), (t((2, 4, 0, 64)), k, v), (t((0, 4, 100, 64)), k, v),
               (q, t(k.shape, strides=(1, 2, 3, 2)), v), (t(q.shape, strides=(1, 2, 3, 2)), k, v),
               (q, k, t(v.shape, strides=(1, 2, 3, 2))), (q, k, t(v.shape, device=fake_torch.Device("cpu"))),
               (q, t(k.shape, device=fake_torch.Device("cpu")), v), (t(q.shape, device=fake_torch.Device("cpu")), k, v),
               (q, k, t(v.shape, device=fake_torch.Device("cuda", 1))), (q, k, Fake(v.shape))]
        grouped = (t((2, 8, 100, 64)), t((2, 2, 77, 64)), t((2, 2, 77, 64)))
        bad_gqa = [(t((2, 8, 100, 64)), t((2, 3, 77, 64)), t((2, 3, 77, 64))),
                   (t((2, 8, 100, 64)), t((2, 2, 77, 64)), t((2, 4, 77, 64)))]

        def outcome(fn, args):
            try:
                return fn(*args)
            except Exception as e:
                return type(e), str(e)

        # grouped heads pass with enable_gqa alone; heads that do not divide never
        for gqa, goods, bads in ((False, good, bad + [grouped]), (True, good + [grouped], bad + bad_gqa)):
            for args in goods:
                self.assertIsNotNone(_checks._passes(*args, gqa), [a.shape for a in args])
                self.assertEqual(_checks.check_tensors(*args, gqa), outcome(_checks._check_each, args + (gqa,)))
            for args in bads:
                self.assertIsNone(_checks._passes(*args, gqa))
                self.assertEqual(outcome(_checks.check_tensors, args + (gqa,)),
                                 outcome(_checks._check_each, args + (gqa,)))
                self.assertIsInstance(outcome(_checks.check_tensors, args + (gqa,)), tuple)

    def test_instance_attributes_take_the_full_check(self):
        # Fake's attributes live on the instance: _passes declines it, _check_each accepts it
        q, k, v = qkv()
        self.assertIsNone(_checks._passes(q, k, v, False))
        self.assertEqual(_checks.check_tensors(q, k, v), 2)


# A shared library that is not libflashtune, loadable everywhere.
LIBC = ctypes.util.find_library("c") or "libc.so.6"


class Library(unittest.TestCase):
    def setUp(self):
        _library._lib = None

    def tearDown(self):
        _library._lib = None

    def test_not_found_says_where_it_looked(self):
        with mock.patch.dict(os.environ), \
                mock.patch.object(_library, "candidate_paths", return_value=["/nonexistent/libflashtune.so",
                                                                             "/also/missing/libflashtune.so",
                                                                             LIBC]):
            os.environ.pop("FLASHTUNE_LIBRARY", None)
            with self.assertRaises(flashtune.LibraryNotFound) as cm:
                _library.library()
        text = str(cm.exception)
        self.assertIn("/nonexistent/libflashtune.so (no such file)", text)
        self.assertIn("/also/missing/libflashtune.so", text)
        self.assertIn(f"{LIBC} (is not libflashtune: ", text)   # another library is passed over, said why
        self.assertIn("FLASHTUNE_LIBRARY", text)

    def test_environment_variable_comes_first(self):
        with mock.patch.dict(os.environ, {"FLASHTUNE_LIBRARY": "/x/libflashtune.so"}):
            self.assertEqual(_library.candidate_paths()[0], "/x/libflashtune.so")

    def test_wrong_environment_variable_is_an_error(self):
        # Set, it is the only place: a missing file, a file that is no shared library and another
        # library each raise the package's error naming the variable and the file, even when a
        # good library sits in the usual places (the build tree beside this checkout).
        cases = [("/nonexistent/libflashtune.so", "no such file"),
                 (os.path.abspath(__file__), "cannot be loaded: "),
                 (LIBC, "is not libflashtune: "),
                 (LIBC, "undefined symbol: ft_open")]
        for path, why in cases:
            with self.subTest(path=path), mock.patch.dict(os.environ, {"FLASHTUNE_LIBRARY": path}):
                _library._lib = None
                with self.assertRaises(flashtune.LibraryNotFound) as cm:
                    _library.library()
                self.assertIsInstance(cm.exception, flashtune.FlashtuneError)
                self.assertIn(f"FLASHTUNE_LIBRARY={path}: ", str(cm.exception))
                self.assertIn(why, str(cm.exception))

    def test_desc_matches_the_c_layout(self):
        # size_t struct_size, int x 8, float, int64 arrays aligned to 8 (FT_ATTENTION_DESC_SIZE_V1 =
        # 144 ends o_stride), then int x 6, a float and an int, 2 pointers, 2 ints, 2 pointers;
        # test_runtime pins the C side to the same numbers
        D = _library.AttentionDesc
        self.assertEqual(ctypes.sizeof(D), 224)
        offsets = {"struct_size": 0, "batch": 8, "causal": 36, "softmax_scale": 40, "q_stride": 48,
                   "o_stride": 120, "causal_align": 144, "window": 148, "window_left": 152, "window_right": 156,
                   "deterministic": 160, "heads_k": 164, "softcap": 168, "reserved": 172, "cu_seqlens_q": 176,
                   "cu_seqlens_k": 184, "total_q": 192, "total_k": 196, "sinks": 200, "dsinks": 208,
                   "allow_tf32": 216, "prefix_sums_checked": 220}
        self.assertEqual({name: getattr(D, name).offset for name in offsets}, offsets)
        self.assertEqual([f[0] for f in D._fields_][-16:], ["causal_align", "window", "window_left", "window_right",
                                                            "deterministic", "heads_k", "softcap", "reserved",
                                                            "cu_seqlens_q", "cu_seqlens_k", "total_q", "total_k",
                                                            "sinks", "dsinks", "allow_tf32",
                                                            "prefix_sums_checked"])
        self.assertEqual(D().struct_size, 224)   # set on construction, as FT_ATTENTION_DESC_INIT does

    def test_packed_desc_is_the_struct(self):
        d = _library.AttentionDesc(200, 2, 3, 100, 77, 64, 128, 2, 1, 0.1)
        for field, base in (("q_stride", 10), ("k_stride", 20), ("v_stride", 30), ("o_stride", 1 << 40)):
            getattr(d, field)[:] = (base, base + 1, base + 2)
        d.causal_align, d.window, d.window_left, d.window_right, d.deterministic = 1, 1, 256, -1, 1
        d.heads_k, d.softcap = 3, 30.0
        d.cu_seqlens_q, d.cu_seqlens_k, d.total_q, d.total_k = 0x1000, 0x2000, 500, 600
        d.sinks, d.dsinks = 0x3000, 0x4000
        d.allow_tf32 = 1
        packed = _library.DESC.pack(200, 2, 3, 100, 77, 64, 128, 2, True, 0.1, 10, 11, 12, 20, 21, 22, 30, 31, 32,
                                    1 << 40, (1 << 40) + 1, (1 << 40) + 2, 1, 1, 256, -1, 1, 3, 30.0, 0, 0x1000,
                                    0x2000, 500, 600, 0x3000, 0x4000, 1, 0)
        self.assertEqual(packed, bytes(d))

    @unittest.skipUnless(os.environ.get("FLASHTUNE_LIBRARY"), "FLASHTUNE_LIBRARY not set (ctest sets it)")
    def test_a_missing_nvrtc_is_looked_for_and_named(self):
        from flashtune import _nvrtc
        self.assertEqual(_nvrtc.NAMES, ("libnvrtc.so.13", "libnvrtc.so.12"))
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "lib64"))
            with mock.patch.dict(os.environ, {"CUDA_HOME": d}):
                self.assertIn(os.path.join(d, "lib64"), _nvrtc.candidate_dirs())
                why = _nvrtc.preload("libnvrtc.so.99")
                self.assertIn("libnvrtc.so.99 (NVRTC, which libflashtune needs to compile kernels) was not found", why)
                self.assertIn(os.path.join(d, "lib64"), why)
                self.assertIn("libnvrtc.so.98", _nvrtc.ensure_loaded(("libnvrtc.so.98",)))
                with mock.patch.dict(os.environ, {"FLASHTUNE_NVRTC": "/elsewhere/libnvrtc.so"}):
                    self.assertIsNone(_nvrtc.ensure_loaded(("libnvrtc.so.98",)))   # the library's choice
                # a loadable file of that name there: loaded (a copy of the C math library stands in)
                libm = next(p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                        "/lib64/libm.so.6") if os.path.exists(p))
                shutil.copyfile(libm, os.path.join(d, "lib64", "libnvrtc.so.99"))
                self.assertIsNone(_nvrtc.preload("libnvrtc.so.99"))
                self.assertIsNone(_nvrtc.ensure_loaded(("libnvrtc.so.98", "libnvrtc.so.99")))

    def test_library_and_package_agree_on_the_desc(self):
        # the built library's own words for its struct, against the package's mirror
        lib = _library.library()
        self.assertEqual(lib.ft_attention_desc_layout().decode(), _library.desc_layout())
        self.assertIsNone(_library.layout_mismatch(_library.desc_layout()))
        # a library whose struct differs (a field moved, one more at the end) is refused, by field
        moved = _library.desc_layout().replace("softcap:168:4", "softcap:172:4")
        self.assertIn("field 20: the library has softcap:172:4, the package softcap:168:4",
                      _library.layout_mismatch(moved))
        longer = _library.desc_layout() + " paged:216:8"
        self.assertIn("the library has paged:216:8, the package (none)", _library.layout_mismatch(longer))
        # and the loader says so for that library instead of binding it
        with mock.patch.object(_library, "layout_mismatch", return_value="its ft_attention_desc differs (test)"):
            refused, why = _library._load(lib._name)
        self.assertIsNone(refused)
        self.assertEqual(why, "its ft_attention_desc differs (test)")

    def test_built_library_opens_without_a_gpu(self):
        lib = _library.library()
        self.assertEqual(lib.ft_version().decode(), flashtune.__version__)
        handle = ctypes.c_void_p()
        self.assertEqual(lib.ft_open(None, ctypes.byref(handle)), 0)
        lib.ft_close(handle)
        status = lib.ft_open(b"/nonexistent/flashtune.db", ctypes.byref(handle))
        self.assertEqual(_library.STATUS_NAMES[status], "FT_ERR_DB")
        self.assertIn("/nonexistent/flashtune.db", lib.ft_last_error(None).decode())

    def test_capture_flushes_at_exit(self):
        """The package never closes its contexts, so it merges each one's captured calls at exit:
        a context with a capture file flushes (nothing counted: no file yet), one without answers
        FT_ERR_INVALID_ARGUMENT; the exit hook says nothing for either."""
        lib = _library.library()
        handle = ctypes.c_void_p()
        self.assertEqual(lib.ft_open(None, ctypes.byref(handle)), 0)
        try:
            self.assertEqual(_library.STATUS_NAMES[lib.ft_capture_flush(handle)], "FT_ERR_INVALID_ARGUMENT")
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "capture.txt")
                self.assertEqual(lib.ft_capture_to(handle, path.encode()), 0)
                self.assertEqual(lib.ft_capture_flush(handle), 0)
                self.assertFalse(os.path.exists(path))   # no call was counted: nothing to merge
                with mock.patch.dict(_library._contexts, {"capture test": handle}, clear=True), \
                        mock.patch.object(sys, "stderr", io.StringIO()) as err:
                    _library._flush_captures()
                    self.assertEqual(err.getvalue(), "")
        finally:
            lib.ft_close(handle)
        self.assertEqual(_library.STATUS_NAMES[lib.ft_capture_flush(None)], "FT_ERR_INVALID_ARGUMENT")


class Recorder:
    """Stands for ft_attention_forward/backward: a C function (CFUNCTYPE, so the arguments are
    converted as for the real one) that keeps what it got, the desc read back as bytes."""

    def __init__(self, nargs, status=0):
        self.calls, self.status = [], status
        proto = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * nargs)
        self.fn = proto(self.record)

    def record(self, handle, desc, *pointers):
        self.calls.append((handle, ctypes.string_at(desc, ctypes.sizeof(_library.AttentionDesc)), pointers))
        return self.status


class SizeRecorder:
    """Stands for ft_attention_*_workspace_size: answers `bytes`, keeping each desc asked about."""

    def __init__(self, nbytes=0):
        self.calls, self.bytes = [], nbytes
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t))
        self.fn = proto(self.record)

    def record(self, handle, desc, out):
        self.calls.append(ctypes.string_at(desc, ctypes.sizeof(_library.AttentionDesc)))
        out[0] = self.bytes
        return 0


def without_hotpath(test):
    """The C hot path left unbound for the test: every call takes the Python path."""
    for name, value in (("_bind_hotpath", lambda torch: None), ("_hot_attention", None), ("_hot_forward", None)):
        patcher = mock.patch.object(_attention, name, value)
        patcher.start()
        test.addCleanup(patcher.stop)


def saved_tensors():
    """What the last forward saved for the backward."""
    return fake_torch.Function.last_ctx.saved_tensors


class CallPath(unittest.TestCase):
    """attention() and its backward with fake_torch's torch and recorded C calls."""
    HANDLE = 0x5eed0

    def setUp(self):
        self.use_torch(fake_torch.make_torch())
        self.fwd, self.bwd = Recorder(10), Recorder(14)
        self.fwd_size, self.bwd_size = SizeRecorder(), SizeRecorder()
        for name, value in (("handle", lambda: ctypes.c_void_p(self.HANDLE)), ("forward", self.fwd.fn),
                            ("backward", self.bwd.fn), ("forward_ws_size", self.fwd_size.fn),
                            ("backward_ws_size", self.bwd_size.fn)):
            patcher = mock.patch.object(_library, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        _workspace._sizes.clear()
        self.addCleanup(_workspace._sizes.clear)

    def use_torch(self, torch):
        self.torch = torch
        patcher = mock.patch.dict(sys.modules, {"torch": torch})
        patcher.start()
        self.addCleanup(patcher.stop)
        _attention._Attention.cls = _attention._apply = None   # rebuilt for this torch
        self.addCleanup(setattr, _attention._Attention, "cls", None)
        self.addCleanup(setattr, _attention, "_apply", None)
        without_hotpath(self)   # the Python path's calls, recorded (test_hotpath.py: the C path's)

    def tensors(self, shapes, dtype=None, device=None, strides=(None, None, None)):
        device = device or fake_torch.Device("cuda", 1)
        return [fake_torch.Tensor(s, dtype or self.torch.bfloat16, device, st) for s, st in zip(shapes, strides)]

    def test_forward_and_backward_pass_what_the_tensors_say(self):
        torch = self.torch
        q, k, v = self.tensors([(2, 3, 100, 64), (2, 3, 77, 64), (2, 3, 77, 128)])
        o = flashtune.attention(q, k, v, is_causal=True, scale=0.5)
        self.assertEqual((o.shape, o.dtype, o.device), ((2, 3, 100, 128), q.dtype, q.device))
        (handle, desc, pointers), = self.fwd.calls
        self.assertEqual(handle, self.HANDLE)
        self.assertEqual(desc, bytes(_attention._desc(q, k, v, o, 2, True, 0.5)))
        q_, k_, v_, o_, lse = saved_tensors()
        self.assertEqual((q_, k_, v_, o_), (q, k, v, o))
        self.assertEqual((lse.shape, lse.dtype), ((2, 3, 100), torch.float32))
        stream = torch._C._cuda_getCurrentRawStream(1)
        self.assertEqual(pointers, tuple(t.data_ptr() for t in (q, k, v, o, lse)) + (None, None, stream))
        # made cuda:1 current for the call, then put cuda:0 back
        self.assertEqual(torch.device_log, [("set", 1), ("set", 0)])

        do = fake_torch.Tensor(o.shape, o.dtype, o.device)
        dq, dk, dv, none = _attention._Attention.get().backward(fake_torch.Function.last_ctx, do)
        self.assertIsNone(none)
        (handle, bdesc, bpointers), = self.bwd.calls
        self.assertEqual((handle, bdesc), (self.HANDLE, desc))
        for grad, t in ((dq, q), (dk, k), (dv, v)):
            self.assertEqual((grad.shape, grad.stride(), grad.dtype, grad.device),
                             (t.shape, t.stride(), t.dtype, t.device))
        self.assertEqual(bpointers, tuple(t.data_ptr() for t in (q, k, v, o, lse, do, dq, dk, dv)) +
                         (None, None, stream))

        # a dO laid out unlike O is read from a contiguous copy
        odd = fake_torch.Tensor(o.shape, o.dtype, o.device, (100 * 3 * 128, 128, 3 * 128, 1))
        _attention._Attention.get().backward(fake_torch.Function.last_ctx, odd)
        self.assertNotEqual(self.bwd.calls[-1][2][5], odd.data_ptr())

    def test_output_follows_the_query_layout(self):
        # a projection's [B, N, H, D] seen as [B, H, N, D]: O is laid out the same way, as SDPA's,
        # so the layer's o.transpose(1, 2).reshape(...) is a view and its dO, in O's strides, is
        # read as it is (no copy); a query [B, H, N, D] keeps O [B, H, N, D]
        shape, nhd = (2, 100, 3, 64), (100 * 3 * 64, 64, 3 * 64, 1)
        q, k, v = (fake_torch.Tensor(shape, self.torch.bfloat16, fake_torch.Device("cuda", 1)).transpose(1, 2)
                   for _ in range(3))
        o = flashtune.attention(q, k, v)
        self.assertEqual((o.shape, o.stride()), ((2, 3, 100, 64), nhd))
        self.assertIs(o.transpose(1, 2).reshape((2, 100, 3 * 64))._ptr, o._ptr)
        do = fake_torch.Tensor(shape, o.dtype, o.device).transpose(1, 2)
        _attention._Attention.get().backward(fake_torch.Function.last_ctx, do)
        self.assertEqual(self.bwd.calls[-1][2][5], do.data_ptr())
        for heads_or_rows in ((2, 1, 100, 64), (2, 3, 1, 64)):   # a dimension of 1: either order is the same
            q = fake_torch.Tensor(heads_or_rows, self.torch.bfloat16, fake_torch.Device("cuda", 1))
            self.assertEqual(flashtune.attention(q, q, q).stride(), q.stride())

    def test_any_rank_goes_through_four_dimensional_views(self):
        # SDPA's [..., N, D]: rank 3 is one head each, rank 2 one batch of one head, rank 5 the
        # dimensions before the heads as the batch; views (the same pointers), O back in the shape
        for shapes, batch_heads in (([(2, 100, 64), (2, 77, 64), (2, 77, 128)], (2, 1)),
                                    ([(100, 64), (77, 64), (77, 64)], (1, 1)),
                                    ([(2, 3, 4, 100, 64), (2, 3, 4, 77, 64), (2, 3, 4, 77, 32)], (6, 4))):
            q, k, v = self.tensors(shapes)
            o = flashtune.attention(q, k, v, is_causal=True)
            self.assertEqual(o.shape, shapes[0][:-1] + (shapes[2][-1],))
            _, desc, pointers = self.fwd.calls[-1]
            fields = _library.DESC.unpack_from(desc)
            self.assertEqual(fields[1:7], batch_heads + (shapes[0][-2], shapes[1][-2], 64, shapes[2][-1]))
            self.assertEqual(pointers[:3], (q.data_ptr(), k.data_ptr(), v.data_ptr()))
        # a rank-5 tensor whose leading dimensions cannot merge goes through a copy
        q, k, v = self.tensors([(2, 3, 4, 100, 64)] * 3, strides=[(3 * 4 * 100 * 128, 4 * 100 * 128, 100 * 128, 128, 1)] * 3)
        o = flashtune.attention(q, k, v)
        self.assertEqual(o.shape, (2, 3, 4, 100, 64))
        self.assertNotEqual(self.fwd.calls[-1][2][0], q.data_ptr())

    def test_head_dims_the_kernels_do_not_compile(self):
        # any head dim reaches the library as it is (it pads to the compiled sizes), except in
        # float16 and bfloat16 off a multiple of 8: padded with zeros to one first, the scale
        # the head dim's own, O cut back to value's head dim (a view of the padded result)
        for dtype in (self.torch.float32, self.torch.bfloat16):
            q, k, v = self.tensors([(2, 3, 100, 40), (2, 3, 77, 40), (2, 3, 77, 24)], dtype=dtype)
            o = flashtune.attention(q, k, v)
            self.assertEqual(o.shape, (2, 3, 100, 24))
            d = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
            self.assertEqual((d.head_dim, d.head_dim_v, d.softmax_scale), (40, 24, 0.0))
            self.assertEqual(self.fwd.calls[-1][2][:3], (q.data_ptr(), k.data_ptr(), v.data_ptr()))
        for dtype, padded in ((self.torch.float64, False), (self.torch.float16, True)):
            q, k, v = self.tensors([(1, 2, 50, 13), (1, 2, 60, 13), (1, 2, 60, 3)], dtype=dtype)
            o = flashtune.attention(q, k, v, is_causal=True)
            self.assertEqual(o.shape, (1, 2, 50, 3))
            d = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
            self.assertEqual((d.head_dim, d.head_dim_v), (16, 8) if padded else (13, 3))
            self.assertAlmostEqual(d.softmax_scale, 13 ** -0.5 if padded else 0.0)
            self.assertEqual(self.fwd.calls[-1][2][0] != q.data_ptr(), padded)   # the padded copy
        q, k, v = self.tensors([(1, 2, 50, 13), (1, 2, 60, 13), (1, 2, 60, 3)], dtype=self.torch.float16)
        flashtune.attention(q, k, v, scale=0.25)
        self.assertEqual(_library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1]).softmax_scale, 0.25)

    def packed_batch(self):
        """q, k, v packed [total, H, D] (300 queries over 8 heads, 250 keys over 2) and two prefix
        sums of 3 sequences; attention_varlen's Function rebuilt for this torch."""
        from flashtune import _varlen
        self.addCleanup(setattr, _varlen, "_apply", None)
        self.addCleanup(setattr, _varlen, "_cls", None)
        _varlen._apply = _varlen._cls = None
        q, k, v = self.tensors([(300, 8, 64), (250, 2, 64), (250, 2, 32)])
        cu_q, cu_k = (fake_torch.Tensor((4,), self.torch.int32, q.device) for _ in range(2))
        return q, k, v, cu_q, cu_k

    def test_variable_length_batch_reaches_the_desc(self):
        # packed [total, H, D] tensors reach the library as [1, H, total, D] views with the
        # prefix sums' pointers, the longest lengths and the totals; O comes back [total, H, Dv]
        # (the same memory as the kernels' view), lse [H, total_q]; the backward gets the same desc,
        # the prefix sums vouched for there (the forward checked them)
        from flashtune import _varlen
        q, k, v, cu_q, cu_k = self.packed_batch()
        o = flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100, causal=True, softcap=5.0)
        self.assertEqual((o.shape, o.stride()), ((300, 8, 32), (8 * 32, 32, 1)))
        (_, desc, pointers), = self.fwd.calls
        f = _library.DESC.unpack(desc)
        self.assertEqual(f[0], _library.DESC_SIZE)
        self.assertEqual(f[1:9], (3, 8, 120, 100, 64, 32, 2, 1))   # batch, heads, longest lengths, dims, bf16, causal
        self.assertEqual(f[10:13], (300 * 8 * 64, 64, 8 * 64))   # q's strides: head and row
        self.assertEqual(f[27:30], (2, 5.0, 0))   # heads_k, softcap, reserved
        self.assertEqual(f[30:], (cu_q.data_ptr(), cu_k.data_ptr(), 300, 250, 0, 0, 0, 0))
        lse = fake_torch.Function.last_ctx.saved_tensors[4]
        self.assertEqual((lse.shape, pointers[:3]), ((8, 300), (q.data_ptr(), k.data_ptr(), v.data_ptr())))
        self.assertEqual(pointers[3], o.data_ptr())
        grads = _varlen._function().backward(fake_torch.Function.last_ctx,
                                                           fake_torch.Tensor((1, 8, 300, 32), o.dtype, o.device,
                                                                             (300 * 8 * 32, 32, 8 * 32, 1)))
        self.assertEqual(grads[3:], (None, None, None))
        self.assertEqual(self.bwd.calls[-1][1], _library.with_prefix_sums_checked(desc))
        for grad, t in zip(grads[:3], (q, k, v)):
            self.assertEqual(grad.shape, (1, t.shape[1], t.shape[0], t.shape[2]))

    def test_prefix_sums_are_checked_once(self):
        # the library checks a pair of cu_seqlens tensors at their first call (the flag 0) and is
        # told so at later calls with them (1); written in place since (their version counter),
        # at other sizes, another tensor, a first call while a CUDA graph is captured on q's
        # device (whichever is current), inference tensors (no counter) or
        # FLASHTUNE_PREFIX_SUMS=every: 0 again; another value of it refused by name
        q, k, v, cu_q, cu_k = self.packed_batch()

        def flag(cq=cu_q, ck=cu_k, max_q=120):
            flashtune.attention_varlen(q, k, v, cq, ck, max_q, 100)
            return _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1]).prefix_sums_checked

        self.assertEqual([flag(), flag(), flag()], [0, 1, 1])
        self.assertEqual([flag(max_q=130), flag(max_q=130), flag()], [0, 1, 0])
        cu_k._version += 1
        self.assertEqual([flag(), flag()], [0, 1])
        other = fake_torch.Tensor((4,), self.torch.int32, q.device)
        self.assertEqual([flag(ck=other), flag(ck=other), flag()], [0, 1, 0])
        with mock.patch.dict(os.environ, {"FLASHTUNE_PREFIX_SUMS": "every"}):
            self.assertEqual([flag(), flag()], [0, 0])
        with mock.patch.dict(os.environ, {"FLASHTUNE_PREFIX_SUMS": "sometimes"}):
            with self.assertRaisesRegex(ValueError, "FLASHTUNE_PREFIX_SUMS='sometimes': expected 'once'"):
                flag()

        class InferenceTensor(fake_torch.Tensor):   # torch's inference tensors keep no version counter
            __slots__ = ()
            _version = property(lambda self: self.no_counter(), lambda self, value: None)

            def no_counter(self):
                raise RuntimeError("Inference tensors do not track version counter.")

        frozen = InferenceTensor((4,), self.torch.int32, q.device)
        self.assertEqual([flag(cq=frozen), flag(cq=frozen)], [0, 0])
        fresh = fake_torch.Tensor((4,), self.torch.int32, q.device)
        self.torch.fake_state["capturing"] = q.device.index
        self.addCleanup(self.torch.fake_state.pop, "capturing", None)
        with self.torch.cuda.device(1 - q.device.index):   # another device current: q's is the one that counts
            self.assertEqual([flag(cq=fresh), flag(cq=fresh)], [0, 0])

    def test_softcap_reaches_the_desc(self):
        q, k, v = self.tensors([(1, 2, 50, 64)] * 3)
        o = flashtune.attention(q, k, v, softcap=30)
        d = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
        self.assertEqual((d.softcap, d.reserved), (30.0, 0))
        self.assertEqual(self.fwd.calls[-1][1], bytes(_attention._desc(q, k, v, o, 2, False, None, softcap=30.0)))
        _attention._Attention.get().backward(fake_torch.Function.last_ctx, fake_torch.Tensor(o.shape, o.dtype, o.device))
        self.assertEqual(self.bwd.calls[-1][1], self.fwd.calls[-1][1])
        flashtune.attention(q, k, v)
        self.assertEqual(_library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1]).softcap, 0.0)
        n = len(self.fwd.calls)
        for bad, exc, text in ((-1.0, ValueError, "softcap=-1.0: must be a finite number >= 0"),
                               (float("inf"), ValueError, "softcap=inf"), ("30", TypeError, "softcap: expected a float")):
            with self.assertRaisesRegex(exc, text):
                flashtune.attention(q, k, v, softcap=bad)
        self.assertEqual(len(self.fwd.calls), n)   # refused before the library is called

    def test_allow_tf32_reaches_the_desc(self):
        # float32 with allow_tf32: the desc's flag set (the forward's and so the backward's), by
        # the autograd path and without it; by default not, whatever torch's own flag; a
        # non-bool refused by name before the library is called
        torch = self.torch
        q, k, v = self.tensors([(1, 2, 50, 64)] * 3, dtype=torch.float32)
        o = flashtune.attention(q, k, v, allow_tf32=True)
        d = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
        self.assertEqual((d.allow_tf32, d.prefix_sums_checked, d.dtype), (1, 0, 0))
        self.assertEqual(self.fwd.calls[-1][1],
                         bytes(_attention._desc(q, k, v, o, 0, False, None, allow_tf32=True)))
        _attention._Attention.get().backward(fake_torch.Function.last_ctx, fake_torch.Tensor(o.shape, o.dtype, o.device))
        self.assertEqual(self.bwd.calls[-1][1], self.fwd.calls[-1][1])
        flashtune.attention(q, k, v)
        self.assertEqual(_library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1]).allow_tf32, 0)
        n = len(self.fwd.calls)
        for bad in (1, "yes", None):
            with self.assertRaisesRegex(TypeError, "allow_tf32: expected True or False"):
                flashtune.attention(q, k, v, allow_tf32=bad)
        self.assertEqual(len(self.fwd.calls), n)

    def test_sinks_reach_the_desc(self):
        # sinks: converted to float32 (a bfloat16 tensor copied), their address in the desc; the
        # backward's desc is the forward's with dsinks set, and the sinks get a gradient of their
        # type; bad sinks are refused by name before the library is called; SDPA has none
        torch = self.torch
        q, k, v = self.tensors([(2, 4, 50, 64), (2, 2, 50, 64), (2, 2, 50, 64)])
        sinks = fake_torch.Tensor((4,), torch.bfloat16, q.device)
        o = flashtune.attention(q, k, v, is_causal=True, enable_gqa=True, sinks=sinks)
        fwd = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
        self.assertNotIn(fwd.sinks, (None, 0, sinks.data_ptr()))   # the float32 copy's
        self.assertFalse(fwd.dsinks)
        ctx = fake_torch.Function.last_ctx
        ctx.needs_input_grad = (True, True, True, False, True)
        grads = _attention._Attention.get().backward(ctx, fake_torch.Tensor(o.shape, o.dtype, o.device))
        self.assertEqual((len(grads), grads[3]), (5, None))
        self.assertEqual((grads[4].shape, grads[4].dtype), ((4,), torch.float32))
        bwd = _library.AttentionDesc.from_buffer_copy(self.bwd.calls[-1][1])
        self.assertEqual((bwd.sinks, bwd.dsinks), (fwd.sinks, grads[4].data_ptr()))
        self.assertEqual(self.bwd.calls[-1][1][:_library.DSINKS_AT], self.fwd.calls[-1][1][:_library.DSINKS_AT])
        ctx.needs_input_grad = (True, True, True, False, False)   # sinks without a gradient: dsinks NULL
        grads = _attention._Attention.get().backward(ctx, fake_torch.Tensor(o.shape, o.dtype, o.device))
        self.assertEqual(grads[4], None)
        self.assertFalse(_library.AttentionDesc.from_buffer_copy(self.bwd.calls[-1][1]).dsinks)
        n = len(self.fwd.calls)
        for bad, exc, text in (([0.0] * 4, TypeError, "sinks: expected a torch.Tensor of 4 logits"),
                               (fake_torch.Tensor((4,), torch.int32, q.device), TypeError,
                                "sinks: dtype torch.int32 is not a floating type"),
                               (fake_torch.Tensor((2,), torch.float32, q.device), ValueError,
                                r"sinks: expected shape \(4,\) \(one logit a query head\), got \(2,\)"),
                               (fake_torch.Tensor((4,), torch.float32, fake_torch.Device("cuda", 7)), ValueError,
                                f"sinks: on cuda:7, query on {q.device}")):
            with self.assertRaisesRegex(exc, text):
                flashtune.attention(q, k, v, enable_gqa=True, sinks=bad)
        self.assertEqual(len(self.fwd.calls), n)
        with self.assertRaisesRegex(ValueError, "which has no sinks"):
            flashtune.attention(q, k, v, attn_mask=q, enable_gqa=True, sinks=sinks)
        # describe_choice takes them too: checked, then the library (no GPU here) says so
        with self.assertRaisesRegex(ValueError, r"sinks: expected shape \(4,\)"):
            flashtune.describe_choice(q, k, v, enable_gqa=True, sinks=fake_torch.Tensor((3,), torch.float32, q.device))

    def test_sinks_reach_a_packed_batch_desc(self):
        # attention_varlen(sinks=): the sinks' address after the prefix sums and totals, dsinks set
        # for the backward, the sinks' gradient returned last
        torch = self.torch
        from flashtune import _varlen
        q, k, v, cu_q, cu_k = self.packed_batch()
        sinks = fake_torch.Tensor((8,), torch.float32, q.device)
        o = flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100, causal=True, sinks=sinks)
        f = _library.DESC.unpack(self.fwd.calls[-1][1])
        self.assertEqual(f[30:], (cu_q.data_ptr(), cu_k.data_ptr(), 300, 250, sinks.data_ptr(), 0, 0, 0))
        ctx = fake_torch.Function.last_ctx
        grads = _varlen._function().backward(ctx, fake_torch.Tensor((1, 8, 300, 32), o.dtype, o.device,
                                                                    (300 * 8 * 32, 32, 8 * 32, 1)))
        self.assertEqual((len(grads), grads[3:6]), (7, (None, None, None)))
        self.assertEqual((grads[6].shape, grads[6].dtype), ((8,), torch.float32))
        b = _library.DESC.unpack(self.bwd.calls[-1][1])
        self.assertEqual(b[34:], (sinks.data_ptr(), grads[6].data_ptr(), 0, 1))   # (the sums checked)
        with self.assertRaisesRegex(ValueError, r"sinks: expected shape \(8,\)"):
            flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100, sinks=fake_torch.Tensor((2,), torch.float32,
                                                                                             q.device))

    def test_allow_tf32_reaches_a_packed_batch_desc(self):
        # attention_varlen(allow_tf32=True) on float32: the desc's flag after the sinks' pointers,
        # the backward's desc the same (but for the prefix sums, checked by then); by default 0; a
        # non-bool refused before the library is called
        torch = self.torch
        from flashtune import _varlen
        _, _, _, cu_q, cu_k = self.packed_batch()
        q, k, v = self.tensors([(300, 8, 64), (250, 2, 64), (250, 2, 32)], dtype=torch.float32)
        o = flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100, causal=True, allow_tf32=True)
        f = _library.DESC.unpack(self.fwd.calls[-1][1])
        self.assertEqual((f[7], f[30:]), (0, (cu_q.data_ptr(), cu_k.data_ptr(), 300, 250, 0, 0, 1, 0)))
        _varlen._function().backward(fake_torch.Function.last_ctx,
                                     fake_torch.Tensor((1, 8, 300, 32), o.dtype, o.device, (300 * 8 * 32, 32, 8 * 32, 1)))
        self.assertEqual(self.bwd.calls[-1][1], _library.with_prefix_sums_checked(self.fwd.calls[-1][1]))
        flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100)
        self.assertEqual(_library.DESC.unpack(self.fwd.calls[-1][1])[36], 0)
        n = len(self.fwd.calls)
        with self.assertRaisesRegex(TypeError, "allow_tf32: expected True or False"):
            flashtune.attention_varlen(q, k, v, cu_q, cu_k, 120, 100, allow_tf32=1)
        self.assertEqual(len(self.fwd.calls), n)

    def test_grouped_heads_reach_the_desc(self):
        # enable_gqa: key/value heads reach heads_k, without copies; their gradients take their
        # shape; rank 3 groups along dimension -3 (one batch); rank 5 keeps the dims before the heads
        for shapes, fields in (([(2, 8, 100, 64), (2, 2, 77, 64), (2, 2, 77, 128)], (2, 8, 2)),
                               ([(6, 100, 64), (3, 77, 64), (3, 77, 64)], (1, 6, 3)),
                               ([(2, 3, 4, 100, 64), (2, 3, 1, 77, 64), (2, 3, 1, 77, 64)], (6, 4, 1))):
            q, k, v = self.tensors(shapes)
            o = flashtune.attention(q, k, v, is_causal=True, enable_gqa=True)
            self.assertEqual(o.shape, shapes[0][:-1] + (shapes[2][-1],))
            _, desc, pointers = self.fwd.calls[-1]
            d = _library.AttentionDesc.from_buffer_copy(desc)
            self.assertEqual((d.batch, d.heads, d.heads_k), fields)
            self.assertEqual(pointers[:3], (q.data_ptr(), k.data_ptr(), v.data_ptr()))
        q, k, v = self.tensors([(2, 8, 100, 64), (2, 2, 77, 64), (2, 2, 77, 64)])
        o = flashtune.attention(q, k, v, enable_gqa=True)
        _, dk, dv, _ = _attention._Attention.get().backward(fake_torch.Function.last_ctx,
                                                            fake_torch.Tensor(o.shape, o.dtype, o.device))
        self.assertEqual((dk.shape, dv.shape), (k.shape, v.shape))
        with self.assertRaisesRegex(ValueError, "pass enable_gqa=True"):
            flashtune.attention(q, k, v)
        q, k, v = self.tensors([(2, 3, 4, 100, 64), (2, 2, 1, 77, 64), (2, 2, 1, 77, 64)])
        with self.assertRaisesRegex(ValueError, r"key: leading dimensions \(2, 2, 1\) differ from query's"):
            flashtune.attention(q, k, v, enable_gqa=True)

    def test_any_rank_errors_name_the_tensors(self):
        q, k, v = self.tensors([(2, 100, 64), (3, 77, 64), (3, 77, 64)])
        with self.assertRaisesRegex(ValueError, r"key: leading dimensions \(3,\) differ from query's \(2,\)"):
            flashtune.attention(q, k, v)
        q, k, v = self.tensors([(64,), (77, 64), (77, 64)])
        with self.assertRaisesRegex(ValueError, r"query: expected at least 2 dimensions \[..., seqlen, head_dim\], "
                                                r"got shape \(64,\)"):
            flashtune.attention(q, k, v)
        q, k, v = self.tensors([(2, 100, 64), (2, 77, 64), (2, 77, 64)])
        with self.assertRaisesRegex(TypeError, "value: expected a torch.Tensor, got list"):
            flashtune.attention(q, k, [1])
        self.assertEqual(self.fwd.calls, [])

    def test_mask_keywords_reach_the_desc(self):
        q, k, v = self.tensors([(1, 2, 300, 64), (1, 2, 77, 64), (1, 2, 77, 64)])
        cases = [({}, (0, 0, 0, 0, 0)),
                 ({"is_causal": True, "causal_align": "bottom_right"}, (1, 1, 0, 0, 0)),
                 ({"window_size": (16, 4)}, (0, 0, 1, 16, 4)),
                 ({"is_causal": True, "causal_align": "bottom_right", "window_size": (32, -1)}, (1, 1, 1, 32, -1))]
        for kw, (causal, align, window, left, right) in cases:
            o = flashtune.attention(q, k, v, **kw)
            desc = self.fwd.calls[-1][1]
            d = _library.AttentionDesc.from_buffer_copy(desc)
            self.assertEqual((d.struct_size, d.causal, d.causal_align, d.window, d.window_left, d.window_right),
                             (224, causal, align, window, left, right), kw)
            self.assertEqual(desc, bytes(_attention._desc(q, k, v, o, 2, causal, None, (align, window, left, right))))
            # the backward gets the same desc
            _attention._Attention.get().backward(fake_torch.Function.last_ctx, fake_torch.Tensor(o.shape, o.dtype,
                                                                                               o.device))
            self.assertEqual(self.bwd.calls[-1][1], desc)

    def test_deterministic_reaches_the_backward_desc(self):
        # the forward's desc never asks (the forward is deterministic); the backward's does when
        # deterministic=True, or with None when torch.use_deterministic_algorithms is on as it runs
        q, k, v = self.tensors([(1, 2, 50, 64)] * 3)
        for keyword, torch_flag, want in ((None, False, 0), (None, True, 1), (True, False, 1), (False, True, 0)):
            self.torch.deterministic = False
            o = flashtune.attention(q, k, v, deterministic=keyword)
            fwd = _library.AttentionDesc.from_buffer_copy(self.fwd.calls[-1][1])
            self.assertEqual((fwd.deterministic, fwd.heads_k), (0, 2))
            self.torch.deterministic = torch_flag
            _attention._Attention.get().backward(fake_torch.Function.last_ctx,
                                                 fake_torch.Tensor(o.shape, o.dtype, o.device))
            bwd = _library.AttentionDesc.from_buffer_copy(self.bwd.calls[-1][1])
            self.assertEqual((bwd.deterministic, bwd.heads_k), (want, 2), (keyword, torch_flag))
            # every other byte as the forward's
            fwd.deterministic = want
            self.assertEqual(bytes(fwd), self.bwd.calls[-1][1])
        with self.assertRaisesRegex(TypeError, "deterministic: expected True, False or None, got int"):
            flashtune.attention(q, k, v, deterministic=1)

    def test_half_kernels_get_aligned_operands(self):
        # f16/bf16 operands not 16-byte aligned, or whose strides along a dimension longer than 1
        # are not multiples of 8 elements, are copied contiguous; f32 ones are passed as they are
        bnhd = (3 * 10 * 64, 64, 3 * 64, 1)
        cases = [((2, 3, 10, 64), None, 0, False),
                 ((2, 3, 10, 64), bnhd, 0, False),
                 ((2, 3, 10, 64), bnhd, 2, True),                          # misaligned data
                 ((2, 3, 10, 64), (3 * 10 * 68, 10 * 68, 68, 1), 0, True),   # padded rows
                 ((2, 2, 10, 64), (1296, 644, 64, 1), 0, True),            # padded heads
                 ((2, 1, 10, 64), (1296, 644, 64, 1), 0, False),           # ... but only one head
                 ((2, 3, 10, 64), (1924, 640, 64, 1), 0, True),            # padded batches
                 ((1, 3, 10, 64), (1924, 640, 64, 1), 0, False)]           # ... but a batch of one
        for shape, strides, offset, copied in cases:
            for dtype in (self.torch.bfloat16, self.torch.float16, self.torch.float32):
                k, v = self.tensors([shape] * 2, dtype)
                q = fake_torch.Tensor(shape, dtype, k.device, strides, offset)
                o = flashtune.attention(q, k, v)
                q_ = saved_tensors()[0]
                self.assertEqual(q_ is not q, copied and dtype is not self.torch.float32, (shape, strides, dtype))
                self.assertEqual(self.fwd.calls[-1][1],
                                 bytes(_attention._desc(q_, k, v, o, _checks.DTYPES[str(dtype)], False, None)))
                self.assertEqual(self.fwd.calls[-1][2][0], q_.data_ptr())

    def test_values_beyond_the_c_fields_are_stored_as_ctypes_does(self):
        q, k, v = self.tensors([(1, 1, 4, 32)] * 3, self.torch.float32)
        for name, value in (("scale", 1e300), ("scale", 1e-46), ("softcap", 1e39), ("softcap", 5e-46)):
            calls = len(self.fwd.calls)   # float32 cannot hold these: refused here, naming the argument
            with self.assertRaisesRegex(ValueError, re.escape(f"{name}={value!r}: float32 cannot hold it")):
                flashtune.attention(q, k, v, **{name: value})
            self.assertEqual(len(self.fwd.calls), calls)
        self.assertEqual(_checks.check_softcap(1e-40), 1e-40)   # a float32 subnormal: held
        big = (1 << 31) + 5   # batch wraps as a c_int
        q, k, v = self.tensors([(big, 1, 1, 32)] * 3, self.torch.float32, strides=[(32, 32, 32, 1)] * 3)
        o = flashtune.attention(q, k, v)
        self.assertEqual(self.fwd.calls[-1][1], bytes(_attention._desc(q, k, v, o, 0, False, None)))

    def test_older_torch_goes_through_its_device_context_manager(self):
        self.use_torch(fake_torch.make_torch(modern=False))
        q, k, v = self.tensors([(1, 2, 16, 64)] * 3)
        flashtune.attention(q, k, v)
        stream = self.torch.cuda.current_stream(1).cuda_stream
        self.assertEqual(self.fwd.calls[-1][2][-1], stream)
        self.assertEqual(self.torch.device_log, [("set", 1), ("set", 0)])

    def test_nothing_to_differentiate_skips_autograd(self):
        # under torch.no_grad, or with no input requiring a gradient: the library's forward alone
        q, k, v = self.tensors([(1, 2, 16, 64)] * 3)
        fake_torch.Function.last_ctx = None
        self.torch.grad_enabled = False
        o = flashtune.attention(q, k, v, is_causal=True)
        self.assertIsNone(fake_torch.Function.last_ctx)
        (_, desc, pointers), = self.fwd.calls
        self.assertEqual(desc, bytes(_attention._desc(q, k, v, o, 2, True, None)))
        self.assertEqual(pointers[3], o.data_ptr())
        self.torch.grad_enabled = True
        for t in (q, k, v):
            t.requires_grad = False
        flashtune.attention(q, k, v)
        self.assertIsNone(fake_torch.Function.last_ctx)
        k.requires_grad = True   # one input that needs a gradient: through autograd
        flashtune.attention(q, k, v)
        self.assertIsNotNone(fake_torch.Function.last_ctx)
        self.assertEqual(len(self.fwd.calls), 3)

    def test_workspaces_come_from_the_caching_allocator(self):
        # a kernel that keeps a workspace: a uint8 tensor of that many bytes on the device, its
        # pointer and size passed; asked once per problem (not per call), per device
        self.fwd_size.bytes, self.bwd_size.bytes = 4096, 1 << 20
        allocated = []
        empty = self.torch.empty

        def spy(size, *, dtype, device):
            t = empty(size, dtype=dtype, device=device)
            allocated.append(t)
            return t

        self.torch.empty = spy
        q, k, v = self.tensors([(1, 2, 16, 64)] * 3)
        for _ in range(2):
            o = flashtune.attention(q, k, v)
        ws = [t for t in allocated if t.dtype is self.torch.uint8]
        self.assertEqual([(t.shape, t.device) for t in ws], [((4096,), q.device)] * 2)
        self.assertEqual(self.fwd.calls[-1][2][5:7], (ws[-1].data_ptr(), 4096))
        self.assertEqual(len(self.fwd_size.calls), 1)
        do = fake_torch.Tensor(o.shape, o.dtype, o.device)
        _attention._Attention.get().backward(fake_torch.Function.last_ctx, do)
        ws = [t for t in allocated if t.dtype is self.torch.uint8]
        self.assertEqual(ws[-1].shape, (1 << 20,))
        self.assertEqual(self.bwd.calls[-1][2][9:11], (ws[-1].data_ptr(), 1 << 20))
        # the same problem on another device asks again (its kernel may differ)
        q2, k2, v2 = self.tensors([(1, 2, 16, 64)] * 3, device=fake_torch.Device("cuda", 0))
        flashtune.attention(q2, k2, v2)
        self.assertEqual(len(self.fwd_size.calls), 2)

    def test_no_rows_give_the_empty_output_sdpa_gives(self):
        # a batch, heads or queries of 0: SDPA's empty O, without a kernel, a warning or strict's error
        # (it raised "query: empty tensor"); keys of 0 under queries stay an error
        torch = self.torch
        for qs, ks in (((0, 2, 16, 64), (0, 2, 16, 64)), ((1, 0, 16, 64), (1, 0, 16, 64)),
                       ((1, 2, 0, 64), (1, 2, 16, 64)), ((0, 16, 64), (0, 16, 64))):
            q, k, v = self.tensors([qs, ks, ks])
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                o = flashtune.attention(q, k, v, is_causal=True, strict=True)
            self.assertEqual(o.shape, tuple(qs[:-1]) + (64,))
            self.assertEqual(torch.sdpa_calls[-1][1], {"is_causal": True, "scale": None})
        self.assertEqual(self.fwd.calls, [])
        q, k, v = self.tensors([(1, 2, 16, 64), (1, 2, 0, 64), (1, 2, 0, 64)])
        with self.assertRaisesRegex(ValueError, "key: empty tensor"):
            flashtune.attention(q, k, v)

    def test_calls_the_kernels_cannot_run_go_to_sdpa(self):
        torch = self.torch
        q, k, v = self.tensors([(1, 2, 16, 64)] * 3)
        mask = fake_torch.Tensor((16, 16), torch.float32, q.device)
        _fallback._warned.clear()
        self.addCleanup(_fallback._warned.clear)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            o = flashtune.attention(q, k, v, attn_mask=mask, scale=0.25)
            flashtune.attention(q, k, v, attn_mask=mask)   # warned once per reason
            flashtune.attention(q, k, v, dropout_p=0.1, is_causal=True, enable_gqa=True)
            cpu = self.tensors([(1, 2, 16, 64)] * 3, device=fake_torch.Device("cpu", 0))
            flashtune.attention(*cpu)
        self.assertEqual(self.fwd.calls, [])
        self.assertEqual(o.shape, (1, 2, 16, 64))
        (args, kw), _, (_, kw3), (args4, _) = torch.sdpa_calls
        self.assertEqual(args, (q, k, v))
        self.assertEqual(kw, {"attn_mask": mask, "dropout_p": 0.0, "is_causal": False, "scale": 0.25})
        self.assertEqual(kw3, {"attn_mask": None, "dropout_p": 0.1, "is_causal": True, "scale": None,
                               "enable_gqa": True})
        self.assertEqual(args4, tuple(cpu))
        messages = [str(w.message) for w in caught]
        self.assertEqual(len(messages), 3, messages)
        self.assertIn("attn_mask is given", messages[0])
        self.assertIn("dropout_p=0.1", messages[1])
        self.assertIn("the tensors are on cpu:0", messages[2])
        # strict mode: an error naming the reason, by keyword or environment
        with self.assertRaisesRegex(ValueError, "attn_mask is given .*strict mode"):
            flashtune.attention(q, k, v, attn_mask=mask, strict=True)
        with mock.patch.dict(os.environ, {"FLASHTUNE_STRICT": "1"}):
            with self.assertRaisesRegex(ValueError, "dropout_p=0.5"):
                flashtune.attention(q, k, v, dropout_p=0.5)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                flashtune.attention(q, k, v, dropout_p=0.5, strict=False)   # the keyword wins
        with self.assertRaisesRegex(TypeError, "strict: expected True, False or None"):
            flashtune.attention(q, k, v, strict="yes")
        # what SDPA cannot do either: an error, whatever the mode
        for kw, name in (({"window_size": (8, 0)}, "no window"), ({"causal_align": "bottom_right"}, "bottom-right"),
                         ({"softcap": 30.0}, "softcap")):
            with self.assertRaisesRegex(ValueError, name):
                flashtune.attention(q, k, v, attn_mask=mask, **kw)
        self.assertEqual(len(torch.sdpa_calls), 5)

    def test_a_failed_call_raises_after_restoring_the_device(self):
        self.fwd.status = _library.FT_ERR_INVALID_ARGUMENT
        with mock.patch.object(_library, "check", side_effect=ValueError("from the library")) as check:
            with self.assertRaisesRegex(ValueError, "from the library"):
                flashtune.attention(*self.tensors([(1, 2, 16, 64)] * 3))
        self.assertEqual(check.call_args[0][0], _library.FT_ERR_INVALID_ARGUMENT)
        self.assertEqual(self.torch.device_log, [("set", 1), ("set", 0)])


@unittest.skipUnless(os.environ.get("FLASHTUNE_LIBRARY"), "FLASHTUNE_LIBRARY not set (ctest sets it)")
class CallPathToTheLibrary(unittest.TestCase):
    """The same calls into the real library, which checks the desc and then, with no GPU here,
    answers FT_ERR_NO_DEVICE: so the packed desc and the pointers reached it intact."""

    def setUp(self):
        torch = fake_torch.make_torch()
        patcher = mock.patch.dict(sys.modules, {"torch": torch})
        patcher.start()
        self.addCleanup(patcher.stop)
        _attention._Attention.cls = _attention._apply = None
        self.addCleanup(setattr, _attention._Attention, "cls", None)
        self.addCleanup(setattr, _attention, "_apply", None)
        dev = fake_torch.Device("cuda", 0)
        self.qkv = [fake_torch.Tensor((2, 4, 100, 64), torch.bfloat16, dev) for _ in range(3)]

    def test_forward_reaches_the_gpu_check(self):
        with self.assertRaises(flashtune.FlashtuneError) as cm:
            flashtune.attention(*self.qkv, is_causal=True)
        self.assertEqual(cm.exception.status, "FT_ERR_NO_DEVICE")
        q, k, v = self.qkv
        rows_overlap = fake_torch.Tensor(q.shape, q.dtype, q.device, (4 * 100 * 64, 100 * 64, 32, 1))
        with self.assertRaisesRegex(ValueError, "q_stride.2.=32"):
            flashtune.attention(rows_overlap, k, v)

    def test_backward_reaches_the_gpu_check(self):
        without_hotpath(self)   # the forward below is the recorder's, not the library's
        ok = Recorder(10)
        _library.handle()   # loads the library (binding forward/backward) before the swap
        with mock.patch.object(_library, "forward", ok.fn), \
                mock.patch.object(_workspace, "forward_bytes", lambda *a: 0):
            o = flashtune.attention(*self.qkv)
        do = fake_torch.Tensor(o.shape, o.dtype, o.device)
        with self.assertRaises(flashtune.FlashtuneError) as cm:
            _attention._Attention.get().backward(fake_torch.Function.last_ctx, do)
        self.assertEqual(cm.exception.status, "FT_ERR_NO_DEVICE")

    def test_mask_fields_land_where_the_library_reads_them(self):
        # descs the Python checks would refuse, built by hand: the library's own message names the
        # field, so each value sat at that field's offset in the C struct
        lib, handle = _library.library(), _library.context()
        q, k, v = self.qkv
        buf = ctypes.create_string_buffer(256)
        for field, value, fragment in (("causal_align", 7, "causal_align=7"), ("window", 3, "window=3"),
                                       ("window_left", -5, "window_left=-5 with window=0"),
                                       ("window_right", 9, "window_right=9 with window=0")):
            d = _attention._desc(q, k, v, q, 2, False, None)
            setattr(d, field, value)
            self.assertEqual(lib.ft_describe_choice(handle, ctypes.byref(d), 0, buf, len(buf)),
                             _library.FT_ERR_INVALID_ARGUMENT, field)
            self.assertIn(fragment, lib.ft_last_error(handle).decode())
        d = _attention._desc(q, k, v, q, 2, True, None, (1, 1, 64, 0))
        self.assertEqual(lib.ft_describe_choice(handle, ctypes.byref(d), 0, buf, len(buf)), _library.FT_ERR_NO_DEVICE)
        d.struct_size = 0
        self.assertEqual(lib.ft_describe_choice(handle, ctypes.byref(d), 0, buf, len(buf)),
                         _library.FT_ERR_INVALID_ARGUMENT)
        self.assertIn("struct_size=0", lib.ft_last_error(handle).decode())

    def test_variable_length_forward_reaches_the_gpu_check(self):
        from flashtune import _varlen
        self.addCleanup(setattr, _varlen, "_apply", None)
        self.addCleanup(setattr, _varlen, "_cls", None)
        _varlen._apply = _varlen._cls = None
        torch, dev = sys.modules["torch"], fake_torch.Device("cuda", 0)
        q, k, v = (fake_torch.Tensor((300, 4, 64), torch.bfloat16, dev) for _ in range(3))
        cu = fake_torch.Tensor((4,), torch.int32, dev)
        with self.assertRaises(flashtune.FlashtuneError) as cm:
            flashtune.attention_varlen(q, k, v, cu, cu, 200, 200, causal=True)
        self.assertEqual(cm.exception.status, "FT_ERR_NO_DEVICE")

    def test_masked_forward_reaches_the_gpu_check(self):
        with self.assertRaises(flashtune.FlashtuneError) as cm:
            flashtune.attention(*self.qkv, is_causal=True, causal_align="bottom_right", window_size=(16, 0))
        self.assertEqual(cm.exception.status, "FT_ERR_NO_DEVICE")

    def test_handle_follows_flashtune_db(self):
        with mock.patch.dict(os.environ, {"FLASHTUNE_DB": "/nonexistent/flashtune.db"}):
            with self.assertRaisesRegex(flashtune.FlashtuneError, "/nonexistent/flashtune.db"):
                _library.handle()
        with mock.patch.dict(os.environ, {"FLASHTUNE_DB": ""}):
            self.assertIs(_library.handle(), _library.context())
        with mock.patch.dict(os.environ):
            os.environ.pop("FLASHTUNE_DB", None)
            self.assertIs(_library.handle(), _library.context())


class Checkout(unittest.TestCase):
    ROOT = os.path.dirname(os.path.dirname(HERE))

    @unittest.skipUnless(shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")), "not a git checkout")
    def test_pip_install_leftovers_are_ignored(self):
        # `pip install ./python` builds in place: python/build/ and python/flashtune.egg-info/
        left = ["python/build/lib/flashtune/__init__.py", "python/flashtune.egg-info/PKG-INFO"]
        r = subprocess.run(["git", "-C", self.ROOT, "check-ignore", "--no-index", *left], capture_output=True,
                           text=True)
        self.assertEqual(r.stdout.split(), left, r.stderr)
        kept = subprocess.run(["git", "-C", self.ROOT, "check-ignore", "--no-index", "python/flashtune/_library.py"],
                              capture_output=True, text=True)
        self.assertEqual(kept.stdout, "")   # the package itself is not ignored


if __name__ == "__main__":
    unittest.main()
