"""The package's C hot path (python/flashtune/_hotpath.c) against its Python path, on a machine
without a GPU or PyTorch: fake_torch's tensors, the real library's context, and a recording
stand-in for the two library entry points the hot path calls (compiled here with cc). Every
call the hot path takes must reach the library exactly as the Python path would send it (the
same desc bytes, pointers, stream and device switches, O laid out the same); every call it
leaves (anything the Python path copies, pads, falls back on or refuses) must come back None,
so the Python path runs it with its checks and messages.
Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 python/tests/test_hotpath.py"""
import ctypes
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import c_stub  # noqa: E402
import fake_torch  # noqa: E402
import flashtune  # noqa: E402
from flashtune import _attention, _library  # noqa: E402

RECORDER_C = r"""
#include <stddef.h>
#include <string.h>
/* The last forward call's arguments, and what the next calls answer. */
unsigned char last_desc[4096];
size_t desc_bytes;                 /* how much of the desc to record (the test sets it) */
void *last_ctx, *last_ptrs[6];     /* q, k, v, o, lse, workspace */
size_t last_ws_bytes;
void *last_stream;
int calls, size_calls;
int forward_status, size_status;   /* 0: FT_OK */
size_t workspace;                  /* what the size call answers */

int rec_forward(void *ctx, const void *d, const void *q, const void *k, const void *v, void *o, void *lse,
                void *ws, size_t bytes, void *stream)
{
    calls++;
    memcpy(last_desc, d, desc_bytes);
    last_ctx = ctx;
    void *p[6] = { (void *)q, (void *)k, (void *)v, o, lse, ws };
    memcpy(last_ptrs, p, sizeof p);
    last_ws_bytes = bytes;
    last_stream = stream;
    return forward_status;
}

int rec_workspace_size(void *ctx, const void *d, size_t *bytes)
{
    (void)ctx, (void)d;
    size_calls++;
    *bytes = size_status ? 0 : workspace;
    return size_status;
}

/* The last backward call's arguments (q, k, v, o, lse, dO, dQ, dK, dV, workspace), and its answer. */
unsigned char bwd_desc[4096];
void *bwd_ctx, *bwd_ptrs[10], *bwd_stream;
size_t bwd_ws_bytes;
int bwd_calls, backward_status;

int rec_backward(void *ctx, const void *d, const void *q, const void *k, const void *v, const void *o,
                 const void *lse, const void *dout, void *dq, void *dk, void *dv, void *ws, size_t bytes,
                 void *stream)
{
    bwd_calls++;
    memcpy(bwd_desc, d, desc_bytes);
    bwd_ctx = ctx;
    void *p[10] = { (void *)q, (void *)k, (void *)v, (void *)o, (void *)lse, (void *)dout, dq, dk, dv, ws };
    memcpy(bwd_ptrs, p, sizeof p);
    bwd_ws_bytes = bytes;
    bwd_stream = stream;
    return backward_status;
}
"""


def build_recorder(tmp):
    return c_stub.build(tmp, "recorder", RECORDER_C)


def address(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


class HotPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rec = build_recorder(cls.tmp.name)
        lib = _library.library()
        if _library.hotpath is None:   # ctest registers this test only where the hot path was built
            raise AssertionError(f"no hot path beside {lib._name} ({_library.HOTPATH_FILE}), or it was not bound")
        cls.hot = _library.hotpath
        cls.hot.bind_library(address(cls.rec.rec_forward), address(cls.rec.rec_workspace_size),
                             address(cls.rec.rec_backward))
        ctypes.c_size_t.in_dll(cls.rec, "desc_bytes").value = _library.DESC_SIZE

    @classmethod
    def tearDownClass(cls):
        lib = _library.library()
        cls.hot.bind_library(*(address(lib[name]) for name in _library.HOTPATH_ENTRIES))
        cls.tmp.cleanup()

    def setUp(self):
        self.torch = torch = fake_torch.make_torch()
        patcher = mock.patch.dict(sys.modules, {"torch": torch})
        patcher.start()
        self.addCleanup(patcher.stop)
        _attention._Attention.cls = _attention._apply = None   # rebuilt (and the hot path bound) for this torch
        self.addCleanup(setattr, _attention._Attention, "cls", None)
        self.addCleanup(setattr, _attention, "_apply", None)
        _attention._Attention.get()
        self.assertIsNotNone(_attention._hot_attention)
        for name in ("forward_status", "size_status", "calls", "size_calls", "bwd_calls", "backward_status"):
            self.var(name).value = 0
        ctypes.c_size_t.in_dll(self.rec, "workspace").value = 0

    # ---- what reached the stand-in ---------------------------------------------------------------
    def var(self, name):
        """The stand-in's int variable `name`."""
        return ctypes.c_int.in_dll(self.rec, name)

    def recorded(self, prefix, pointers):
        """The stand-in's record of its last forward ("last") or backward ("bwd") call: context, desc,
        the pointers, stream and workspace bytes."""
        desc = bytes((ctypes.c_ubyte * _library.DESC_SIZE).in_dll(self.rec, prefix + "_desc"))
        ptrs = [p or 0 for p in (ctypes.c_void_p * pointers).in_dll(self.rec, prefix + "_ptrs")]
        stream = ctypes.c_void_p.in_dll(self.rec, prefix + "_stream").value or 0
        ctx = ctypes.c_void_p.in_dll(self.rec, prefix + "_ctx").value
        return ctx, desc, ptrs, stream, ctypes.c_size_t.in_dll(self.rec, prefix + "_ws_bytes").value

    def last_call(self):
        return self.recorded("last", 6)

    def tensors(self, shapes, dtype=None, device=None, strides=(None, None, None), grad=False):
        device = device or fake_torch.Device("cuda", 1)
        out = [fake_torch.Tensor(s, dtype or self.torch.bfloat16, device, st) for s, st in zip(shapes, strides)]
        for t in out:
            t.requires_grad = grad
        return out

    def python_desc(self, q, k, v, o, causal, scale):
        code = _attention.check_tensors(q, k, v, True)
        return _attention.desc_of(q, k, v, o, (q.shape[0], q.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3],
                                               k.shape[1]), (q.stride(), k.stride(), v.stride(), o.stride()), code,
                                  causal, scale, _attention.NO_MASK, 0.0)

    # ---- calls the hot path takes ----------------------------------------------------------------
    def test_plain_calls_reach_the_library_as_the_python_path_sends_them(self):
        torch = self.torch
        # a [B, N, H, D] tensor's strides seen as [B, H, N, D]
        bnhd = lambda b, n, h, d: (n * h * d, d, h * d, 1)  # noqa: E731
        cases = [  # (shapes, dtype, strides, keywords)
            ([(2, 3, 100, 64)] * 3, torch.bfloat16, (None,) * 3, dict(is_causal=True)),
            ([(2, 3, 100, 64), (2, 3, 77, 64), (2, 3, 77, 128)], torch.float16, (None,) * 3, dict(scale=0.25)),
            ([(2, 8, 100, 64), (2, 2, 50, 64), (2, 2, 50, 64)], torch.bfloat16, (None,) * 3,
             dict(enable_gqa=True, is_causal=True)),
            ([(1, 4, 33, 40)] * 3, torch.float32, (None,) * 3, {}),   # any head dim in f32
            ([(1, 2, 9, 3)] * 3, torch.float64, (None,) * 3, dict(scale=1e-3)),
            ([(2, 4, 100, 64)] * 3, torch.bfloat16, (bnhd(2, 100, 4, 64),) * 3, dict(is_causal=True)),
        ]
        for shapes, dtype, strides, kw in cases:
            with self.subTest(shapes=shapes, dtype=dtype, strides=strides, kw=kw):
                q, k, v = self.tensors(shapes, dtype, strides=strides)
                calls = self.var("calls").value
                torch.device_log.clear()
                o = flashtune.attention(q, k, v, **kw)
                self.assertEqual(self.var("calls").value, calls + 1)
                ctx, desc, ptrs, stream, ws_bytes = self.last_call()
                self.assertEqual(ctx, _library.handle().value)
                # O as the Python path lays it out: the query's order
                want = _attention.new_output(torch, q.stride(), (q.shape[0], q.shape[1], q.shape[2], v.shape[3]),
                                             q.dtype, q.device)
                self.assertEqual((o.shape, o.stride(), o.dtype, o.device),
                                 (want.shape, want.stride(), q.dtype, q.device))
                self.assertEqual(desc, self.python_desc(q, k, v, o, kw.get("is_causal", False), kw.get("scale")))
                self.assertEqual(ptrs[:4], [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()])
                self.assertNotIn(ptrs[4], (0, o.data_ptr()))   # L: a buffer of its own
                self.assertEqual((ptrs[5], ws_bytes), (0, 0))
                self.assertEqual(stream, torch._C._cuda_getCurrentRawStream(1))
                self.assertEqual(torch.device_log, [("set", 1), ("set", 0)])   # cuda:1 for the call, then back

    def test_autograd_forward_takes_the_hot_path_and_saves_what_the_backward_reads(self):
        q, k, v = self.tensors([(2, 3, 100, 64)] * 3, grad=True)
        o = flashtune.attention(q, k, v, is_causal=True)   # autograd.Function: forward_call in C
        self.assertEqual(self.var("calls").value, 1)
        _, desc, ptrs, _, _ = self.last_call()
        q_, k_, v_, o_, lse = fake_torch.Function.last_ctx.saved_tensors
        self.assertEqual((q_, k_, v_, o_), (q, k, v, o))
        self.assertEqual((lse.shape, lse.dtype, lse.data_ptr()), ((2, 3, 100), self.torch.float32, ptrs[4]))
        ft = fake_torch.Function.last_ctx.ft
        self.assertEqual(ft[0], desc)   # the desc the backward sends
        self.assertEqual(ft[3:], ((q.shape, q.stride()), (k.shape, k.stride()), (v.shape, v.stride()), o.stride()))
        # float64: L in float64
        q, k, v = self.tensors([(1, 2, 10, 8)] * 3, self.torch.float64, grad=True)
        flashtune.attention(q, k, v)
        self.assertEqual(fake_torch.Function.last_ctx.saved_tensors[4].dtype, self.torch.float64)

    def test_masked_forward_takes_the_hot_path(self):
        """A bottom-right diagonal (a KV cache, speculative decoding's drafts) or a window: the same
        desc as the Python path's, with or without anything to differentiate."""
        cases = [  # (shapes, keywords, the desc's mask)
            ([(2, 8, 16, 128), (2, 2, 4096, 128), (2, 2, 4096, 128)],
             dict(is_causal=True, enable_gqa=True, causal_align="bottom_right"), (1, 0, 0, 0)),
            ([(1, 4, 300, 64)] * 3, dict(is_causal=True, window_size=(128, 0)), (0, 1, 128, 0)),
            ([(1, 4, 300, 64), (1, 4, 500, 64), (1, 4, 500, 64)],
             dict(window_size=(-1, 32), causal_align="bottom_right"), (1, 1, -1, 32)),
        ]
        for grad in (False, True):
            for shapes, kw, mask in cases:
                with self.subTest(shapes=shapes, kw=kw, grad=grad):
                    q, k, v = self.tensors(shapes, grad=grad)
                    calls = self.var("calls").value
                    with mock.patch.object(_attention, "desc_of", side_effect=AssertionError("the Python path ran")):
                        o = flashtune.attention(q, k, v, **kw)
                    self.assertEqual(self.var("calls").value, calls + 1)
                    _, desc, ptrs, _, _ = self.last_call()
                    want = _attention.desc_of(q, k, v, o, (q.shape[0], q.shape[1], q.shape[2], k.shape[2], q.shape[3],
                                                           v.shape[3], k.shape[1]),
                                              (q.stride(), k.stride(), v.stride(), o.stride()),
                                              _attention.check_tensors(q, k, v, True), kw.get("is_causal", False),
                                              None, mask, 0.0)
                    self.assertEqual(desc, want)
                    self.assertEqual(ptrs[:4], [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()])
                    if grad:   # the backward sends the same desc
                        self.assertEqual(fake_torch.Function.last_ctx.ft[0], desc)

    def test_a_mask_it_cannot_read_is_left_to_the_python_path(self):
        hot, ctx = _attention._hot_forward, _library.handle().value
        q, k, v = self.tensors([(2, 3, 100, 64)] * 3)
        for mask in ([1, 0, 0, 0], (1, 0, 0), (1, 0, 0, 0, 0), (True, 0, 0, 0), (1, 0, 2 ** 40, 0), (1, 0, 2 ** 70, 0),
                     (1, 1, -2 ** 40, 0), (1, 0, 1.0, 0), "bottom_right"):
            with self.subTest(mask=mask):
                self.assertIsNone(hot(ctx, q, k, v, True, None, False, mask))
        self.assertEqual(self.var("calls").value + self.var("size_calls").value, 0)
        self.assertIsNotNone(hot(ctx, q, k, v, True, None, False, None))   # None: no mask
        self.assertEqual(self.var("calls").value, 1)
        with self.assertRaises(TypeError):   # attention() takes no mask
            _attention._hot_attention(ctx, q, k, v, True, None, False, None)

    def test_workspace_from_the_allocator(self):
        ctypes.c_size_t.in_dll(self.rec, "workspace").value = 12345
        q, k, v = self.tensors([(1, 4, 8, 64), (1, 4, 4096, 64), (1, 4, 4096, 64)])
        flashtune.attention(q, k, v)
        _, _, ptrs, _, ws_bytes = self.last_call()
        self.assertEqual(ws_bytes, 12345)
        self.assertNotIn(ptrs[5], (0,) + tuple(ptrs[:5]))

    def test_failed_calls_raise_as_the_library_says_and_restore_the_device(self):
        q, k, v = self.tensors([(2, 3, 100, 64)] * 3)
        for status_name, status, exc in (("forward_status", 1, ValueError),
                                         ("size_status", 3, flashtune.FlashtuneError),
                                         ("forward_status", 2, flashtune.FlashtuneError)):
            with self.subTest(status_name=status_name, status=status):
                self.var("forward_status").value = self.var("size_status").value = 0
                self.var(status_name).value = status
                self.torch.device_log.clear()
                calls = self.var("calls").value
                with self.assertRaises(exc) as cm:
                    flashtune.attention(q, k, v)
                if exc is flashtune.FlashtuneError:
                    self.assertEqual(cm.exception.status, _library.STATUS_NAMES[status])
                # a failed size call never reaches the forward
                self.assertEqual(self.var("calls").value, calls + (status_name == "forward_status"))
                self.assertEqual(self.torch.device_log, [("set", 1), ("set", 0)])

    # ---- the backward's call ---------------------------------------------------------------------
    def last_backward(self):
        return self.recorded("bwd", 10)

    def backward_operands(self, shapes, strides=(None, None, None)):
        q, k, v = self.tensors(shapes, strides=strides)
        b, h, nq, _ = q.shape
        o = _attention.new_output(self.torch, q.stride(), (b, h, nq, v.shape[3]), q.dtype, q.device)
        lse = fake_torch.Tensor((b, h, nq), self.torch.float32, q.device)
        do = fake_torch.Tensor(o.shape, o.dtype, o.device, o.stride())
        desc = self.python_desc(q, k, v, o, True, None)
        shapes = ((q.shape, q.stride()), (k.shape, k.stride()), (v.shape, v.stride()))
        return desc, (q, k, v, o, lse, do), shapes

    def python_backward(self, *args):
        """run_backward by the Python path, its library call the stand-in's."""
        fn = ctypes.CFUNCTYPE(ctypes.c_int, *([ctypes.c_void_p] * 12 + [ctypes.c_size_t, ctypes.c_void_p]))(
            address(self.rec.rec_backward))
        with mock.patch.object(_attention, "_hot_backward", None), mock.patch.object(_library, "backward", fn):
            return _attention.run_backward(self.torch, *args)

    def test_backward_reaches_the_library_as_the_python_path_sends_it(self):
        bnhd = lambda b, n, h, d: (n * h * d, d, h * d, 1)  # noqa: E731
        cases = [  # (shapes, strides, deterministic)
            ([(2, 3, 100, 64)] * 3, (None,) * 3, False),
            ([(2, 8, 100, 64), (2, 2, 50, 64), (2, 2, 50, 128)], (None,) * 3, True),
            ([(2, 4, 100, 64)] * 3, (bnhd(2, 100, 4, 64),) * 3, False),
        ]
        for shapes, strides, deterministic in cases:
            with self.subTest(shapes=shapes, strides=strides, deterministic=deterministic):
                desc, (q, k, v, o, lse, do), grad_shapes = self.backward_operands(shapes, strides)
                args = (desc, q.device, q, k, v, o, lse, do, o.stride(), grad_shapes, deterministic)
                self.torch.device_log.clear()
                grads = _attention.run_backward(self.torch, *args)
                self.assertEqual(self.var("bwd_calls").value, 1)
                hot = self.last_backward()
                hot_log = list(self.torch.device_log)
                self.torch.device_log.clear()
                want = self.python_backward(*args)
                self.assertEqual(self.var("bwd_calls").value, 2)
                py = self.last_backward()
                self.assertEqual(hot_log, self.torch.device_log)
                self.assertEqual(hot_log, [("set", 1), ("set", 0)])
                # the same desc (deterministic set or not), context, stream, workspace size and operands
                self.assertEqual((hot[0], hot[1], hot[3], hot[4]), (py[0], py[1], py[3], py[4]))
                self.assertEqual(hot[1][_library.DETERMINISTIC_AT], int(deterministic))
                self.assertEqual(hot[2][:6], [t.data_ptr() for t in (q, k, v, o, lse, do)])
                self.assertEqual(hot[2][6:9], [g.data_ptr() for g in grads])
                # the gradients laid out as the Python path lays them out: as their operands
                for g, w, t in zip(grads, want, (q, k, v)):
                    self.assertEqual((g.shape, g.stride(), g.dtype, g.device), (w.shape, w.stride(), t.dtype, t.device))
                self.assertEqual(hot[2][9] != 0, hot[4] > 0)   # a workspace when the library asks for one
                self.var("bwd_calls").value = 0

    def test_backward_leaves_a_differently_laid_out_do_to_the_python_path(self):
        desc, (q, k, v, o, lse, do), shapes = self.backward_operands([(2, 3, 100, 64)] * 3)
        other = fake_torch.Tensor(o.shape, o.dtype, o.device, (3 * 100 * 72, 100 * 72, 72, 1))
        hot = _attention._hot_backward
        self.assertIsNone(hot(_library.handle().value, desc, 0, q, k, v, o, lse, other, o.stride(), shapes))
        subclass = type("Sub", (fake_torch.Tensor,), {})(q.shape, q.dtype, q.device)
        self.assertIsNone(hot(_library.handle().value, desc, 0, subclass, k, v, o, lse, do, o.stride(), shapes))
        self.assertIsNone(hot(_library.handle().value, desc[:-1], 0, q, k, v, o, lse, do, o.stride(), shapes))
        empty = fake_torch.Tensor(q.shape, q.dtype, q.device)
        empty._ptr = 0   # an empty tensor's data pointer
        self.assertIsNone(hot(_library.handle().value, desc, 0, q, k, v, o, empty, do, o.stride(), shapes))
        as_lists = tuple([shape, stride] for shape, stride in shapes)
        self.assertIsNone(hot(_library.handle().value, desc, 0, q, k, v, o, lse, do, o.stride(), as_lists))
        self.assertEqual(self.var("bwd_calls").value, 0)
        # run_backward then copies dO as O is laid out, and the library reads the copy
        grads = self.python_backward(desc, q.device, q, k, v, o, lse, other, o.stride(), shapes, False)
        _, _, ptrs, _, _ = self.last_backward()
        self.assertNotEqual(ptrs[5], other.data_ptr())
        self.assertEqual(len(grads), 3)

    def test_failed_backward_raises_as_the_library_says_and_restores_the_device(self):
        desc, (q, k, v, o, lse, do), shapes = self.backward_operands([(2, 3, 100, 64)] * 3)
        for status, exc in ((1, ValueError), (2, flashtune.FlashtuneError)):
            with self.subTest(status=status):
                self.var("backward_status").value = status
                self.torch.device_log.clear()
                with self.assertRaises(exc):
                    _attention.run_backward(self.torch, desc, q.device, q, k, v, o, lse, do, o.stride(), shapes, False)
                self.assertEqual(self.torch.device_log, [("set", 1), ("set", 0)])

    # ---- calls it leaves to the Python path ------------------------------------------------------
    def test_everything_else_is_left_to_the_python_path(self):
        torch, hot, ctx = self.torch, _attention._hot_attention, _library.handle().value
        half = lambda **kw: self.tensors([(2, 3, 100, 64)] * 3, **kw)  # noqa: E731
        q, k, v = half()
        misaligned = fake_torch.Tensor(q.shape, q.dtype, q.device, offset=8)
        odd_rows = fake_torch.Tensor(q.shape, q.dtype, q.device, (3 * 100 * 68, 100 * 68, 68, 1))
        subclass = type("Sub", (fake_torch.Tensor,), {})(q.shape, q.dtype, q.device)
        cpu = fake_torch.Tensor(q.shape, q.dtype, fake_torch.Device("cpu", 0))
        other_gpu = fake_torch.Tensor(q.shape, q.dtype, fake_torch.Device("cuda", 0))
        head_dim_60 = self.tensors([(2, 3, 100, 60)] * 3)
        gqa = self.tensors([(2, 8, 100, 64), (2, 2, 50, 64), (2, 2, 50, 64)])
        left = {
            "needs a gradient": (half(grad=True), False, None, False),
            "misaligned half data": ((misaligned, k, v), False, None, False),
            "half rows not a multiple of 8": ((q, odd_rows, v), False, None, False),
            "half head dim 60 (padded)": (head_dim_60, False, None, False),
            "a tensor subclass": ((subclass, k, v), False, None, False),
            "a CPU tensor (SDPA)": ((q, k, cpu), False, None, False),
            "tensors on two GPUs": ((q, other_gpu, v), False, None, False),
            "mixed dtypes": ((q, k, fake_torch.Tensor(q.shape, torch.float16, q.device)), False, None, False),
            "3 dimensions": ((fake_torch.Tensor((3, 100, 64), q.dtype, q.device), k, v), False, None, False),
            "grouped heads without enable_gqa": (gqa, False, None, False),
            "is_causal not a bool": ((q, k, v), 1, None, False),
            "an int scale": ((q, k, v), False, 2, False),
            "a negative scale": ((q, k, v), False, -0.5, False),
            "a nan scale": ((q, k, v), False, float("nan"), False),
            "head dim 300": (self.tensors([(1, 2, 10, 300)] * 3, torch.float32), False, None, False),
            "not a tensor": (([1], k, v), False, None, False),
        }
        for name, ((q_, k_, v_), causal, scale, gqa_flag) in left.items():
            with self.subTest(name):
                self.assertIsNone(hot(ctx, q_, k_, v_, causal, scale, gqa_flag))
        self.assertEqual(self.var("calls").value + self.var("size_calls").value, 0)
        # the Python path then says what is wrong, as before
        with self.assertRaisesRegex(ValueError, "heads: query has 8, key and value 2; they must match"):
            flashtune.attention(*gqa)
        with self.assertRaisesRegex(ValueError, "scale=-0.5"):
            flashtune.attention(q, k, v, scale=-0.5)

    def test_turned_off_by_the_environment(self):
        with mock.patch.dict(os.environ, {"FLASHTUNE_HOTPATH": "0"}):
            _library._load_hotpath(_library.library()._name, _library.library())
        self.assertIsNone(_library.hotpath)
        _library._load_hotpath(_library.library()._name, _library.library())
        self.assertIsNotNone(_library.hotpath)
        _library.hotpath.bind_library(address(self.rec.rec_forward), address(self.rec.rec_workspace_size),
                                      address(self.rec.rec_backward))


if __name__ == "__main__":
    unittest.main()
