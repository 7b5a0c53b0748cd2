"""GPU tests of flashtune.attention against PyTorch (needs torch with CUDA; exits 77, ctest's
skip code, without them): gradcheck in float64; forward and all three gradients against
scaled_dot_product_attention's math backend in float32 (atol 1e-5) and, for float16/bfloat16,
at the dtype's tolerance; odd lengths, seqlen_q != seqlen_k, strided inputs, causal on and off;
bottom-right causal and local windows against the math backend with an explicit boolean mask.
Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 python/tests/test_gpu.py"""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False

import flashtune  # noqa: E402

# (batch, heads, seqlen_q, seqlen_k, head_dim, head_dim_v)
SHAPES = [(1, 1, 1, 1, 64, 64), (2, 3, 17, 17, 64, 64), (1, 2, 100, 37, 128, 128), (2, 2, 33, 129, 32, 64),
          (1, 4, 257, 257, 96, 96), (1, 1, 64, 200, 256, 256)]
# float32 runs the exact kernels (atol 1e-5, rtol 1e-4); the 16-bit types get their rounding's scale
TOL = {torch.float32: (1e-5, 1e-4), torch.float16: (4e-3, 4e-3), torch.bfloat16: (2.5e-2, 2.5e-2)} if HAVE_GPU else {}


def make(shape, dtype, layout, seed):
    b, h, nq, nk, d, dv = shape
    g = torch.Generator(device="cuda").manual_seed(seed)

    def one(n, dim):
        if layout == "bnhd":   # a [B, N, H, D] tensor seen as [B, H, N, D]
            t = torch.randn((b, n, h, dim), generator=g, device="cuda", dtype=torch.float64).transpose(1, 2)
        elif layout == "padded":   # rows longer than the head dim
            t = torch.randn((b, h, n, dim + 8), generator=g, device="cuda", dtype=torch.float64)[..., :dim]
        else:
            t = torch.randn((b, h, n, dim), generator=g, device="cuda", dtype=torch.float64)
        return t.to(dtype).requires_grad_(True)

    return one(nq, d), one(nk, d), one(nk, dv)


def reference(q, k, v, causal, dtype_out, enable_gqa=False):
    """SDPA's math backend in float32 (float64 for float64 inputs), on copies of the inputs."""
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    qr, kr, vr = (t.detach().to(work).requires_grad_(True) for t in (q, k, v))
    with sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal, enable_gqa=enable_gqa)
    return o, (qr, kr, vr)


def band(nq, nk, causal, causal_align, window_size):
    """The boolean [nq, nk] mask of flashtune's conventions (flashtune.h), True = visible."""
    i = torch.arange(nq, device="cuda")[:, None]
    j = torch.arange(nk, device="cuda")[None, :]
    diag = i + (nk - nq if causal_align == "bottom_right" else 0)
    visible = torch.ones((nq, nk), dtype=torch.bool, device="cuda")
    if causal:
        visible &= j <= diag
    if window_size is not None:
        left, right = window_size
        if left >= 0:
            visible &= j >= diag - left
        if right >= 0:
            visible &= j <= diag + right
    return visible


def masked_reference(q, k, v, visible):
    """The math backend with attn_mask=visible in float32 (float64 for float64). A row that sees no
    key would be NaN there: it attends to every key instead and is then multiplied by 0, which
    gives flashtune's O = 0 and zero gradients through that row."""
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    qr, kr, vr = (t.detach().to(work).requires_grad_(True) for t in (q, k, v))
    sees = visible.any(dim=1)
    with sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(qr, kr, vr, attn_mask=visible | ~sees[:, None])
    return o * sees[:, None].to(work), (qr, kr, vr)


# (shape, is_causal, causal_align, window_size): seqlen_q above and below seqlen_k, odd lengths,
# rows that see no key (bottom-right with Nq > Nk, windows), keys no row sees
MASKS = [((2, 3, 100, 300, 64, 64), True, "bottom_right", None),
         ((1, 2, 300, 77, 64, 64), True, "bottom_right", None),
         ((1, 2, 129, 129, 128, 128), False, "top_left", (32, 0)),
         ((2, 2, 257, 200, 64, 64), False, "top_left", (-1, 17)),
         ((1, 3, 333, 333, 96, 96), False, "top_left", (100, -1)),
         ((1, 2, 77, 301, 64, 128), True, "bottom_right", (50, 0)),
         ((1, 2, 400, 50, 32, 32), False, "bottom_right", (3, 2)),
         ((2, 1, 50, 400, 64, 64), False, "top_left", (4, 4)),
         ((1, 1, 65, 65, 64, 64), False, "top_left", (0, 0))]


@unittest.skipUnless(HAVE_GPU, "no CUDA GPU or no torch")
class AgainstPyTorch(unittest.TestCase):
    def compare(self, shape, dtype, causal, layout="bhnd", seed=0):
        q, k, v = make(shape, dtype, layout, seed)
        o = flashtune.attention(q, k, v, is_causal=causal)
        do = torch.randn_like(o)
        dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
        ro, rin = reference(q, k, v, causal, dtype)
        rdq, rdk, rdv = torch.autograd.grad(ro, rin, do.to(ro.dtype))
        atol, rtol = TOL[dtype]
        label = f"{shape} {dtype} causal={causal} {layout}"
        for name, got, want in (("O", o, ro), ("dQ", dq, rdq), ("dK", dk, rdk), ("dV", dv, rdv)):
            # 16-bit gradients are sums of many rounded terms: scale the tolerance by the magnitude
            scale = 1.0 if dtype == torch.float32 else max(1.0, want.abs().max().item())
            torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                       msg=lambda m: f"{label} {name}: {m}")

    def compare_masked(self, shape, dtype, causal, causal_align, window_size, seed=0):
        q, k, v = make(shape, dtype, "bhnd", seed)
        o = flashtune.attention(q, k, v, is_causal=causal, causal_align=causal_align, window_size=window_size)
        do = torch.randn_like(o)
        dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
        visible = band(shape[2], shape[3], causal, causal_align, window_size)
        ro, rin = masked_reference(q, k, v, visible)
        rdq, rdk, rdv = torch.autograd.grad(ro, rin, do.to(ro.dtype))
        atol, rtol = TOL[dtype]
        label = f"{shape} {dtype} causal={causal} {causal_align} window={window_size}"
        empty = ~visible.any(dim=1)
        if empty.any():   # exactly 0, not merely close
            self.assertEqual(o[:, :, empty].abs().max().item(), 0.0, label)
            self.assertEqual(dq[:, :, empty].abs().max().item(), 0.0, label)
        unseen = ~visible.any(dim=0)
        if unseen.any():
            self.assertEqual(dk[:, :, unseen].abs().max().item(), 0.0, label)
            self.assertEqual(dv[:, :, unseen].abs().max().item(), 0.0, label)
        for name, got, want in (("O", o, ro), ("dQ", dq, rdq), ("dK", dk, rdk), ("dV", dv, rdv)):
            scale = 1.0 if dtype == torch.float32 else max(1.0, want.abs().max().item())
            torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                       msg=lambda m: f"{label} {name}: {m}")

    def test_masks(self):
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            for shape, causal, align, window in MASKS:
                self.compare_masked(shape, dtype, causal, align, window)

    def test_masks_gradcheck_float64(self):
        for shape, causal, align, window in [((1, 2, 9, 5, 32, 32), True, "bottom_right", None),
                                             ((1, 1, 11, 13, 32, 32), False, "top_left", (2, 1)),
                                             ((1, 1, 7, 12, 64, 32), True, "bottom_right", (3, 0))]:
            q, k, v = make(shape, torch.float64, "bhnd", 3)
            self.assertTrue(torch.autograd.gradcheck(
                lambda a, b, c: flashtune.attention(a, b, c, is_causal=causal, causal_align=align,
                                                    window_size=window), (q, k, v), eps=1e-6, atol=1e-6))

    def test_float32(self):
        for shape in SHAPES:
            for causal in (False, True):
                self.compare(shape, torch.float32, causal)

    def test_half_types(self):
        for dtype in (torch.float16, torch.bfloat16):
            for shape in SHAPES:
                for causal in (False, True):
                    self.compare(shape, dtype, causal)

    def test_strided_inputs(self):
        for dtype in (torch.float32, torch.bfloat16):
            for layout in ("bnhd", "padded"):
                self.compare((2, 3, 65, 47, 64, 64), dtype, True, layout)
                self.compare((1, 2, 128, 128, 128, 128), dtype, False, layout)

    def test_any_rank(self):
        # [B, N, D] (one head), [N, D] and [A, B, H, N, D] against SDPA on the same tensors, which
        # takes them as they are; O in their shape, gradients through the views
        for shape in ((3, 70, 64), (90, 128), (2, 3, 4, 33, 64)):
            for dtype in (torch.float32, torch.bfloat16):
                g = torch.Generator(device="cuda").manual_seed(len(shape))
                q, k, v = (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64).to(dtype)
                           .requires_grad_(True) for _ in range(3))
                o = flashtune.attention(q, k, v, is_causal=True)
                self.assertEqual(o.shape, q.shape)
                do = torch.randn_like(o)
                grads = torch.autograd.grad(o, (q, k, v), do)
                ro, rin = reference(q, k, v, True, dtype)
                rgrads = torch.autograd.grad(ro, rin, do.to(ro.dtype))
                atol, rtol = TOL[dtype]
                for name, got, want in zip(("O", "dQ", "dK", "dV"), (o,) + grads, (ro,) + rgrads):
                    self.assertEqual(got.shape, want.shape)
                    scale = 1.0 if dtype == torch.float32 else max(1.0, want.abs().max().item())
                    torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                               msg=lambda m: f"{shape} {dtype} {name}: {m}")

    def assert_gqa_matches_sdpa(self, q, k, v, causal, label):
        """flashtune.attention(enable_gqa=True) and its gradients (K and V's in their own shapes,
        summed over each group) against SDPA's enable_gqa in float32 (float64 for float64)."""
        dtype = q.dtype
        o = flashtune.attention(q, k, v, is_causal=causal, enable_gqa=True)
        do = torch.randn_like(o)
        grads = torch.autograd.grad(o, (q, k, v), do)
        ro, rin = reference(q, k, v, causal, dtype, enable_gqa=True)
        rgrads = torch.autograd.grad(ro, rin, do.to(ro.dtype))
        atol, rtol = TOL.get(dtype, (1e-10, 1e-9))
        for name, got, want in zip(("O", "dQ", "dK", "dV"), (o,) + grads, (ro,) + rgrads):
            self.assertEqual(got.shape, want.shape)
            scale = 1.0 if dtype in (torch.float32, torch.float64) else max(1.0, want.abs().max().item())
            torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                       msg=lambda m: f"{label} causal {causal} {name}: {m}")

    def test_grouped_query_attention(self):
        # enable_gqa: 8 query heads over 2 and over 1 key/value heads, [B, H, N, D] and [B, N, D]
        # (heads along dimension -3), every dtype, against SDPA's enable_gqa; the gradients of
        # key and value in their own shapes, summed over each group
        shapes = (((2, 8, 150, 64), (2, 2, 190, 64)), ((2, 8, 129, 128), (2, 1, 129, 128)), ((6, 77, 64), (3, 77, 64)))
        for qshape, kshape in shapes:
            for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
                g = torch.Generator(device="cuda").manual_seed(len(qshape) + kshape[-3])
                q, k, v = (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64).to(dtype)
                           .requires_grad_(True) for shape in (qshape, kshape, kshape))
                for causal in (False, True):
                    self.assert_gqa_matches_sdpa(q, k, v, causal, f"{qshape} {kshape} {dtype}")
        q, k, v = make((1, 4, 9, 7, 32, 32), torch.float64, "bhnd", 3)
        k, v = (t.detach()[:, :2].clone().requires_grad_(True) for t in (k, v))
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b, c: flashtune.attention(a, b, c, is_causal=True, enable_gqa=True), (q, k, v), eps=1e-6,
            atol=1e-6))

    def test_decode_shapes(self):
        # A few query rows over many keys, grouped heads: the forward splits the keys over blocks
        # and packs each group's query rows into one tile (the runtime's decode kernels), checked
        # against SDPA's enable_gqa in f16 and bf16, causal and not; the backward of the same
        # problem runs the usual kernels
        for b, nq, nk in ((2, 1, 5001), (3, 7, 1111), (1, 16, 300)):
            for dtype in (torch.float16, torch.bfloat16):
                g = torch.Generator(device="cuda").manual_seed(nq * nk + b)
                q = torch.randn((b, 32, nq, 128), generator=g, device="cuda", dtype=dtype).requires_grad_(True)
                k, v = (torch.randn((b, 8, nk, 128), generator=g, device="cuda", dtype=dtype).requires_grad_(True)
                        for _ in range(2))
                for causal in (False, True):
                    self.assert_gqa_matches_sdpa(q, k, v, causal, f"B {b} Nq {nq} Nk {nk} {dtype}")

    def test_softcap(self):
        # softcap=c: each scaled score S becomes c tanh(S / c); against that written out in
        # PyTorch (float32, float64 for float64), every dtype, both directions, and gradcheck
        def capped_reference(q, k, v, causal, cap):
            work = torch.float64 if q.dtype == torch.float64 else torch.float32
            qr, kr, vr = (t.detach().to(work).requires_grad_(True) for t in (q, k, v))
            s = qr @ kr.transpose(-1, -2) / math.sqrt(q.shape[-1])
            s = cap * torch.tanh(s / cap)
            if causal:
                nq, nk = s.shape[-2:]
                s = s.masked_fill(torch.ones(nq, nk, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
            return torch.softmax(s, dim=-1) @ vr, (qr, kr, vr)

        for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
            for shape, cap, causal in (((2, 3, 150, 190, 64, 64), 5.0, False), ((1, 4, 257, 257, 128, 128), 30.0, True)):
                q, k, v = make(shape, dtype, "bhnd", 7)
                o = flashtune.attention(q, k, v, is_causal=causal, softcap=cap)
                do = torch.randn_like(o)
                grads = torch.autograd.grad(o, (q, k, v), do)
                ro, rin = capped_reference(q, k, v, causal, cap)
                rgrads = torch.autograd.grad(ro, rin, do.to(ro.dtype))
                atol, rtol = TOL.get(dtype, (1e-10, 1e-9))
                for name, got, want in zip(("O", "dQ", "dK", "dV"), (o,) + grads, (ro,) + rgrads):
                    scale = 1.0 if dtype in (torch.float32, torch.float64) else max(1.0, want.abs().max().item())
                    torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                               msg=lambda m: f"{shape} softcap {cap} {dtype} {name}: {m}")
        q, k, v = make((1, 2, 9, 7, 32, 32), torch.float64, "bhnd", 4)
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b, c: flashtune.attention(a, b, c, is_causal=True, softcap=0.7), (q, k, v), eps=1e-6, atol=1e-6))

    def test_sinks(self):
        # sinks: one logit a query head joining every row's softmax as a score with no value;
        # against that written out in PyTorch (float32, float64 for float64), every dtype, both
        # directions and the sinks' own gradient, grouped heads, a window, rows that see no key,
        # sinks in another dtype than the inputs, torch.compile, and gradcheck
        def sink_reference(q, k, v, sinks, visible):
            work = torch.float64 if q.dtype == torch.float64 else torch.float32
            qr, kr, vr = (t.detach().to(work).requires_grad_(True) for t in (q, k, v))
            sr = sinks.detach().to(work).requires_grad_(True)
            group = q.shape[1] // k.shape[1]
            kx, vx = kr.repeat_interleave(group, 1), vr.repeat_interleave(group, 1)
            s = (qr @ kx.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(~visible, float("-inf"))
            col = sr.view(1, -1, 1, 1).expand(s.shape[0], s.shape[1], s.shape[2], 1)
            p = torch.softmax(torch.cat([s, col], dim=-1), dim=-1)[..., :-1]
            return p @ vx, (qr, kr, vr, sr)

        cases = (((2, 4, 150, 190, 64, 64), 2, True, "bottom_right", None),     # grouped heads
                 ((1, 3, 257, 200, 128, 128), 3, False, "top_left", (40, 10)),  # a window
                 ((2, 2, 90, 60, 96, 96), 2, True, "bottom_right", None))       # rows that see no key
        for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
            for shape, hk, causal, align, window in cases:
                b, h, nq, nk, d, dv = shape
                q, _, _ = make(shape, dtype, "bhnd", 11)
                _, k, v = make((b, hk, nq, nk, d, dv), dtype, "bhnd", 12)
                sinks = (torch.randn(h, device="cuda", dtype=torch.float64) * 2).to(torch.bfloat16).requires_grad_(True)
                o = flashtune.attention(q, k, v, is_causal=causal, enable_gqa=hk != h, causal_align=align,
                                        window_size=window, sinks=sinks)
                do = torch.randn_like(o)
                grads = torch.autograd.grad(o, (q, k, v, sinks), do)
                ro, rin = sink_reference(q, k, v, sinks, band(nq, nk, causal, align, window))
                rgrads = torch.autograd.grad(ro, rin, do.to(ro.dtype))
                atol, rtol = TOL.get(dtype, (1e-10, 1e-9))
                for name, got, want in zip(("O", "dQ", "dK", "dV", "dsinks"), (o,) + grads, (ro,) + rgrads):
                    scale = max(1.0, want.abs().max().item())
                    if name == "dsinks":   # a sum over every row, returned in the sinks' bfloat16
                        atol, rtol = max(atol, 1e-2), max(rtol, 1e-2)
                    torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                               msg=lambda m: f"{shape} sinks {dtype} {name}: {m}")
        q, k, v = make((1, 2, 9, 7, 32, 32), torch.float64, "bhnd", 4)
        sinks = torch.randn(2, device="cuda", dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b, c, s: flashtune.attention(a, b, c, is_causal=True, sinks=s), (q, k, v, sinks), eps=1e-6,
            atol=1e-6))
        # the compiled call is the eager one, gradients included
        q, k, v = make((2, 4, 100, 100, 64, 64), torch.bfloat16, "bnhd", 5)
        sinks = torch.randn(4, device="cuda", requires_grad=True)
        run = lambda a, b, c, s: flashtune.attention(a, b, c, is_causal=True, sinks=s)
        eager = run(q, k, v, sinks)
        compiled = torch.compile(run, fullgraph=True)(q, k, v, sinks)
        torch.testing.assert_close(compiled, eager, atol=0, rtol=0)
        do = torch.randn_like(eager)
        for a, b in zip(torch.autograd.grad(eager, (q, k, v, sinks), do),
                        torch.autograd.grad(compiled, (q, k, v, sinks), do)):
            torch.testing.assert_close(b, a, atol=2e-2, rtol=2e-2)   # (dQ's atomics add in any order)
        with self.assertRaisesRegex(ValueError, r"sinks: expected shape \(4,\)"):
            flashtune.attention(q, k, v, sinks=torch.zeros(2, device="cuda"))

    def test_sinks_in_a_packed_batch(self):
        # attention_varlen(sinks=) against attention(sinks=) on each sequence alone (checked above
        # against PyTorch): O and the gradients of each sequence's rows, the sinks' gradient the sum
        # over the sequences; empty sequences and one whose queries see no key (bottom-right)
        seqs = ((37, 50), (0, 20), (64, 64), (90, 30), (1, 9))
        cu_q = torch.tensor([0] + [sum(s[0] for s in seqs[:i + 1]) for i in range(len(seqs))], dtype=torch.int32,
                            device="cuda")
        cu_k = torch.tensor([0] + [sum(s[1] for s in seqs[:i + 1]) for i in range(len(seqs))], dtype=torch.int32,
                            device="cuda")
        tq, tk, h, hk, d = int(cu_q[-1]), int(cu_k[-1]), 4, 2, 64
        g = torch.Generator(device="cuda").manual_seed(21)
        for dtype in (torch.float32, torch.bfloat16):
            q, k, v = (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64).to(dtype).requires_grad_(True)
                       for shape in ((tq, h, d), (tk, hk, d), (tk, hk, d)))
            sinks = torch.randn(h, generator=g, device="cuda").requires_grad_(True)
            o = flashtune.attention_varlen(q, k, v, cu_q, cu_k, 90, 64, causal=True, causal_align="bottom_right",
                                           sinks=sinks)
            do = torch.randn_like(o)
            got = torch.autograd.grad(o, (q, k, v, sinks), do)
            want_ds = torch.zeros_like(sinks)
            atol, rtol = TOL[dtype]
            for i, (nq, nk) in enumerate(seqs):
                if nq == 0:
                    continue
                a, b = int(cu_q[i]), int(cu_k[i])
                parts = [t.detach()[r:r + n].transpose(0, 1).unsqueeze(0).clone().requires_grad_(True)
                         for t, r, n in ((q, a, nq), (k, b, nk), (v, b, nk))]
                s_i = sinks.detach().clone().requires_grad_(True)
                oi = flashtune.attention(*parts, is_causal=True, enable_gqa=True, causal_align="bottom_right",
                                         sinks=s_i)
                doi = do[a:a + nq].transpose(0, 1).unsqueeze(0)
                gi = torch.autograd.grad(oi, parts + [s_i], doi)
                want_ds += gi[3]
                for name, x, y in (("O", o[a:a + nq], oi.squeeze(0).transpose(0, 1)),
                                   ("dQ", got[0][a:a + nq], gi[0].squeeze(0).transpose(0, 1))):
                    torch.testing.assert_close(x.float(), y.float(), atol=atol * max(1.0, y.abs().max().item()),
                                               rtol=rtol, msg=lambda m: f"sequence {i} {dtype} {name}: {m}")
            torch.testing.assert_close(got[3], want_ds, atol=2e-2 * max(1.0, want_ds.abs().max().item()), rtol=2e-2,
                                       msg=lambda m: f"{dtype} dsinks: {m}")

    def test_head_dims_the_kernels_do_not_compile(self):
        # head dims 1 to 256 that no kernel compiles run padded to the next compiled one (in
        # float16/bfloat16 off a multiple of 8 after a zero-padded copy): every dtype, both
        # directions, against SDPA; [B, H, N, D], a [B, N, H, D] view and rows longer than the
        # head dim; and gradcheck in float64
        shapes = [(2, 3, 100, 77, 40, 40), (1, 2, 130, 200, 80, 80), (2, 2, 64, 90, 16, 24),
                  (1, 2, 50, 61, 13, 7), (1, 1, 33, 33, 1, 3), (1, 2, 70, 40, 200, 136)]
        for shape in shapes:
            for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
                for layout, causal in (("bhnd", False), ("bnhd", True), ("padded", True)):
                    if dtype == torch.float64:
                        self.compare_exact(shape, causal, layout, seed=shape[4])
                    else:
                        self.compare(shape, dtype, causal, layout, seed=shape[4])
        for shape in [(1, 2, 5, 7, 13, 5), (2, 1, 9, 4, 1, 40)]:
            q, k, v = make(shape, torch.float64, "bhnd", 2)
            self.assertTrue(torch.autograd.gradcheck(
                lambda a, b, c: flashtune.attention(a, b, c, is_causal=True), (q, k, v), eps=1e-6, atol=1e-6))

    def compare_exact(self, shape, causal, layout, seed):
        """compare in float64, to float64's rounding."""
        q, k, v = make(shape, torch.float64, layout, seed)
        o = flashtune.attention(q, k, v, is_causal=causal)
        do = torch.randn_like(o)
        grads = torch.autograd.grad(o, (q, k, v), do)
        ro, rin = reference(q, k, v, causal, torch.float64)
        rgrads = torch.autograd.grad(ro, rin, do)
        for name, got, want in zip(("O", "dQ", "dK", "dV"), (o,) + grads, (ro,) + rgrads):
            torch.testing.assert_close(got, want, atol=1e-10, rtol=1e-9,
                                       msg=lambda m: f"{shape} float64 causal={causal} {layout} {name}: {m}")

    def test_gradcheck_float64(self):
        for shape in [(1, 2, 5, 7, 32, 32), (2, 1, 9, 4, 64, 32)]:
            for causal in (False, True):
                q, k, v = make(shape, torch.float64, "bhnd", 1)
                self.assertTrue(torch.autograd.gradcheck(
                    lambda a, b, c: flashtune.attention(a, b, c, is_causal=causal), (q, k, v), eps=1e-6, atol=1e-6))

    def test_deterministic_backward_repeats_bitwise(self):
        # deterministic=True, and None under torch.use_deterministic_algorithms(True): the same
        # gradients to the bit, run after run, and right
        for dtype, shape, causal in ((torch.bfloat16, (2, 4, 1000, 1000, 128, 128), True),
                                     (torch.float16, (1, 3, 700, 900, 64, 64), False)):
            q, k, v = make(shape, dtype, "bhnd", 5)
            do = torch.randn(q.shape[:3] + (v.shape[3],), device="cuda", dtype=dtype)
            grads = []
            for run in range(4):
                if run < 2:
                    o = flashtune.attention(q, k, v, is_causal=causal, deterministic=True)
                else:
                    torch.use_deterministic_algorithms(True)
                    try:
                        o = flashtune.attention(q, k, v, is_causal=causal)
                        grads.append(torch.autograd.grad(o, (q, k, v), do))
                    finally:
                        torch.use_deterministic_algorithms(False)
                    continue
                grads.append(torch.autograd.grad(o, (q, k, v), do))
            for run in range(1, 4):
                for name, a, b in zip(("dQ", "dK", "dV"), grads[0], grads[run]):
                    self.assertTrue(torch.equal(a, b), f"{dtype} run {run}: {name} differs from run 0")
            ro, rin = reference(q, k, v, causal, dtype)
            want = torch.autograd.grad(ro, rin, do.to(ro.dtype))
            atol, rtol = TOL[dtype]
            for name, got, w in zip(("dQ", "dK", "dV"), grads[0], want):
                scale = max(1.0, w.abs().max().item())
                torch.testing.assert_close(got.to(w.dtype), w, atol=atol * scale, rtol=rtol,
                                           msg=lambda m: f"{dtype} {name}: {m}")
        self.assertIn("deterministic (DQ_MODE=", flashtune.describe_choice(q, k, v, backward=True,
                                                                          deterministic=True))

    def test_variable_length_batches(self):
        # attention_varlen on packed [total, H, D] tensors against SDPA's math backend run on each
        # sequence alone (its own mask, placed by its own lengths): every dtype, forward and all
        # three gradients, grouped heads, causal top-left and bottom-right, a window, the softcap,
        # empty sequences and one without keys; gradcheck in float64; bad prefix sums refused, also
        # when written in place into sums an earlier call checked
        lengths = [((37, 50), (130, 130), (1, 0), (200, 120), (0, 101)),
                   ((100, 100), (1, 130), (189, 189))]
        cases = [(0, 8, 2, 64, 64, True, "bottom_right", None, 0.0), (1, 4, 4, 128, 128, False, "top_left", (40, 7), 0.0),
                 (0, 2, 2, 64, 32, True, "top_left", None, 5.0), (1, 6, 1, 40, 40, True, "bottom_right", (20, 0), 0.0)]
        for li, h, hk, d, dv, causal, align, window, cap in cases:
            seqs = lengths[li]
            cu_q = torch.tensor([0] + [sum(s[0] for s in seqs[:i + 1]) for i in range(len(seqs))], dtype=torch.int32,
                                device="cuda")
            cu_k = torch.tensor([0] + [sum(s[1] for s in seqs[:i + 1]) for i in range(len(seqs))], dtype=torch.int32,
                                device="cuda")
            tq, tk = int(cu_q[-1]), int(cu_k[-1])
            g = torch.Generator(device="cuda").manual_seed(d + h)
            base = [torch.randn(shape, generator=g, device="cuda", dtype=torch.float64)
                    for shape in ((tq, h, d), (tk, hk, d), (tk, hk, dv))]
            do_base = torch.randn((tq, h, dv), generator=g, device="cuda", dtype=torch.float64)
            for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
                q, k, v = (t.to(dtype).requires_grad_(True) for t in base)
                do = do_base.to(dtype)
                o = flashtune.attention_varlen(q, k, v, cu_q, cu_k, max(s[0] for s in seqs), max(s[1] for s in seqs),
                                               causal=causal, causal_align=align, window_size=window, softcap=cap)
                grads = torch.autograd.grad(o, (q, k, v), do)
                want_o, want_g = self.varlen_reference(q, k, v, do, seqs, causal, align, window, cap)
                atol, rtol = TOL.get(dtype, (1e-10, 1e-9))
                for name, got, want in zip(("O", "dQ", "dK", "dV"), (o,) + grads, (want_o,) + want_g):
                    scale = 1.0 if dtype in (torch.float32, torch.float64) else max(1.0, want.abs().max().item())
                    torch.testing.assert_close(got.to(want.dtype), want, atol=atol * scale, rtol=rtol,
                                               msg=lambda m: f"varlen {seqs} H={h}/{hk} {dtype} {name}: {m}")
        seqs = ((5, 7), (0, 3), (9, 4))
        cu_q = torch.tensor([0, 5, 5, 14], dtype=torch.int32, device="cuda")
        cu_k = torch.tensor([0, 7, 10, 14], dtype=torch.int32, device="cuda")
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float64, requires_grad=True)
                   for shape in ((14, 2, 32), (14, 1, 32), (14, 1, 16)))
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b, c: flashtune.attention_varlen(a, b, c, cu_q, cu_k, 9, 7, causal=True, softcap=0.7),
            (q, k, v), eps=1e-6, atol=1e-6))
        with self.assertRaisesRegex(ValueError, "cu_seqlens_q.2.=4 is less than cu_seqlens_q.1.=5"):
            flashtune.attention_varlen(q, k, v, torch.tensor([0, 5, 4, 14], dtype=torch.int32, device="cuda"), cu_k,
                                       9, 7)
        with self.assertRaisesRegex(ValueError, "sequence 2 is 9 rows long"):
            flashtune.attention_varlen(q, k, v, cu_q, cu_k, 8, 7)
        # Checked once, then trusted while unchanged: written in place, the sums are checked again.
        sums = cu_q.clone()
        flashtune.attention_varlen(q, k, v, sums, cu_k, 9, 7)
        flashtune.attention_varlen(q, k, v, sums, cu_k, 9, 7)
        sums[2] = 4
        with self.assertRaisesRegex(ValueError, "cu_seqlens_q.2.=4 is less than cu_seqlens_q.1.=5"):
            flashtune.attention_varlen(q, k, v, sums, cu_k, 9, 7)

    @staticmethod
    def varlen_reference(q, k, v, do, seqs, causal, align, window, cap):
        """O and the gradients of each sequence alone through the math backend (float64 for
        float64, else float32), packed back; grouped heads repeated, then summed back by autograd."""
        work = torch.float64 if q.dtype == torch.float64 else torch.float32
        qr, kr, vr = (t.detach().to(work).requires_grad_(True) for t in (q, k, v))
        group = q.shape[1] // k.shape[1]
        outs, r0, c0 = [], 0, 0
        for nq, nk in seqs:
            qs = qr[r0:r0 + nq].transpose(0, 1)
            ks = kr[c0:c0 + nk].transpose(0, 1).repeat_interleave(group, dim=0)
            vs = vr[c0:c0 + nk].transpose(0, 1).repeat_interleave(group, dim=0)
            if nq and nk:
                s = qs @ ks.transpose(1, 2) / math.sqrt(q.shape[2])
                if cap:
                    s = cap * torch.tanh(s / cap)
                visible = band(nq, nk, causal, align, window)
                s = s.masked_fill(~visible, float("-inf"))
                sees = visible.any(dim=1)
                p = torch.softmax(s.masked_fill(~sees[:, None], 0.0), dim=-1) * sees[:, None].to(work)
                outs.append((p @ vs).transpose(0, 1))
            else:   # no keys: O = 0 (and no queries: nothing)
                outs.append(torch.zeros((nq, q.shape[1], v.shape[2]), dtype=work, device="cuda") + 0 * vs.sum())
            r0, c0 = r0 + nq, c0 + nk
        o = torch.cat(outs)
        grads = torch.autograd.grad(o, (qr, kr, vr), do.to(work), allow_unused=True)
        grads = tuple(g if g is not None else torch.zeros_like(t) for g, t in zip(grads, (qr, kr, vr)))
        return o, grads

    def test_allow_tf32_rounds_float32_forwards(self):
        # float32's forward on the tensor cores: float32's accuracy by default (three TF32 products),
        # TF32's with allow_tf32 (one product: an error past float32's threshold and within TF32's),
        # against SDPA's math backend in float64 on the same values
        q, k, v = make((2, 3, 300, 300, 64, 64), torch.float32, "bhnd", 7)
        with torch.no_grad():
            want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
            errors = []
            for allow in (False, True):
                o = flashtune.attention(q, k, v, is_causal=True, allow_tf32=allow)
                errors.append(((o.double() - want).norm() / want.norm()).item())
        self.assertLess(errors[0], 1e-5)
        self.assertTrue(1e-5 < errors[1] < 2e-3, errors)
        self.assertIn("ALLOW_TF32=1", flashtune.describe_choice(q, k, v, True, allow_tf32=True))

    def test_allow_tf32_rounds_float32_backwards(self):
        # float32's backward on the tensor cores (Hopper's bwd_wgmma_f32, else bwd_mma) the same way:
        # dQ, dK, dV within float32's threshold of float64 by default, past it and within TF32's
        # with allow_tf32; and a packed batch's forward (attention_varlen) takes the flag too
        q, k, v = make((2, 3, 300, 300, 64, 64), torch.float32, "bhnd", 8)
        do = torch.randn((2, 3, 300, 64), device="cuda", dtype=torch.float32)
        leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
        F.scaled_dot_product_attention(*leaves, is_causal=True).backward(do.double())
        errors = []
        for allow in (False, True):
            ours = [t.detach().clone().requires_grad_() for t in (q, k, v)]
            flashtune.attention(*ours, is_causal=True, allow_tf32=allow).backward(do)
            errors.append(max(((a.grad.double() - b.grad).norm() / b.grad.norm()).item()
                              for a, b in zip(ours, leaves)))
        self.assertLess(errors[0], 1e-5)
        self.assertTrue(1e-5 < errors[1] < 2e-3, errors)
        text = flashtune.describe_choice(q, k, v, True, backward=True, allow_tf32=True)
        family = "bwd_wgmma_f32" if torch.cuda.get_device_capability()[0] == 9 else "bwd_mma"
        self.assertIn(family + " DTYPE=f32", text)
        self.assertIn("ALLOW_TF32=1", text)
        packed = [t.detach()[0].transpose(0, 1).contiguous() for t in (q, k, v)]   # one sequence [N, H, D]
        cu = torch.tensor([0, 300], dtype=torch.int32, device="cuda")
        with torch.no_grad():
            want = F.scaled_dot_product_attention(*(t[:1].double() for t in (q, k, v)), is_causal=True)[0]
            got = [flashtune.attention_varlen(*packed, cu, cu, 300, 300, causal=True, allow_tf32=allow)
                   for allow in (False, True)]
        errs = [((o.transpose(0, 1).double() - want).norm() / want.norm()).item() for o in got]
        self.assertLess(errs[0], 1e-5)
        self.assertTrue(1e-5 < errs[1] < 2e-3, errs)

    def test_errors_from_the_gpu_path(self):
        q, k, v = make((1, 1, 8, 8, 64, 64), torch.float32, "bhnd", 2)
        with self.assertRaises(ValueError):
            flashtune.attention(q.cpu(), k, v)
        text = flashtune.describe_choice(q, k, v)
        # f32 on tensor cores, three TF32 products: Hopper's warpgroup form there, else mma.sync
        family = "fwd_wgmma" if torch.cuda.get_device_capability()[0] == 9 else "fwd_mma"
        self.assertIn(family + " DTYPE=f32", text)
        self.assertIn("ALLOW_TF32=0", text)
        # a window runs the causal kernel (CAUSAL=1), with the band as an argument
        self.assertIn("CAUSAL=1", flashtune.describe_choice(q, k, v, window_size=(4, 0)))
        self.assertIn("CAUSAL=0", text)


class Block(torch.nn.Module if HAVE_GPU else object):
    """A transformer block's attention half (python/examples/mha.py's layer): projections,
    flashtune.attention over [B, H, N, D] views, the output projection."""

    def __init__(self, hidden=256, heads=4, deterministic=None):
        super().__init__()
        self.heads, self.deterministic = heads, deterministic
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        b, n, hidden = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, hidden // self.heads).permute(2, 0, 3, 1, 4)
        o = flashtune.attention(q, k, v, is_causal=True, deterministic=self.deterministic)
        return self.out(o.transpose(1, 2).reshape(b, n, hidden))


def block_and_input(dtype=torch.bfloat16 if HAVE_GPU else None, deterministic=None, seed=0):
    torch.manual_seed(seed)
    block = Block(deterministic=deterministic).to(device="cuda", dtype=dtype)
    x = torch.randn(2, 197, 256, device="cuda", dtype=dtype, requires_grad=True)
    return block, x


def run_block(fn, block, x, g):
    """The block's output and the gradients of its input and weights for dLoss/dy = g."""
    for p in list(block.parameters()) + [x]:
        p.grad = None
    y = fn(x)
    y.backward(g)
    return [y.detach().clone(), x.grad.clone()] + [p.grad.clone() for p in block.parameters()]


class DropIn(unittest.TestCase):
    """What makes flashtune a drop-in for SDPA in PyTorch programs: torch.compile (fullgraph),
    torch.export, CUDA graph capture and the fallback to SDPA."""

    def test_compile_fullgraph_matches_eager(self):
        block, x = block_and_input()
        g = torch.randn(2, 197, 256, device="cuda", dtype=torch.bfloat16)
        eager = run_block(block, block, x, g)
        compiled = torch.compile(block, fullgraph=True)
        got = run_block(compiled, block, x, g)
        for name, a, b in zip(["y", "dx"] + [n for n, _ in block.named_parameters()], eager, got):
            torch.testing.assert_close(b, a, atol=2e-2, rtol=2e-2, msg=name)

    def test_compiled_allow_tf32_is_the_eager_one(self):
        # float32 with allow_tf32 under torch.compile (the operators carry the switch): the same
        # forward and gradients as the eager call, bitwise (the same kernels; the backward in its
        # repeatable mode, whose dQ adds in a fixed order), and not the three-product ones
        q, k, v = (torch.randn(2, 4, 197, 64, device="cuda", requires_grad=True) for _ in range(3))

        def f(q, k, v, allow):
            return flashtune.attention(q, k, v, is_causal=True, allow_tf32=allow, deterministic=True)
        compiled = torch.compile(f, fullgraph=True)
        for allow in (True, False):
            eager = f(q, k, v, allow)
            got = compiled(q, k, v, allow)
            torch.testing.assert_close(got, eager, atol=0, rtol=0)
            g = torch.randn_like(eager)
            torch.testing.assert_close(torch.autograd.grad(got, (q, k, v), g), torch.autograd.grad(eager, (q, k, v), g),
                                       atol=0, rtol=0)
        self.assertFalse(torch.equal(compiled(q, k, v, True), compiled(q, k, v, False)))

    def test_compiled_graph_holds_the_operators(self):
        from torch._dynamo.testing import CompileCounterWithBackend
        counter = CompileCounterWithBackend("aot_eager")
        block, x = block_and_input()
        y = torch.compile(block, backend=counter, fullgraph=True)(x)
        y.sum().backward()
        self.assertEqual(counter.frame_count, 1)
        ops = {str(n.target) for gm in counter.graphs for n in gm.graph.nodes if n.op == "call_function"}
        self.assertTrue(any("flashtune.attention_forward" in op for op in ops), ops)

    def test_export(self):
        block, x = block_and_input()
        x = x.detach()
        exported = torch.export.export(block, (x,))
        ops = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
        self.assertTrue(any("flashtune.attention_forward" in op for op in ops), ops)
        torch.testing.assert_close(exported.module()(x), block(x), atol=0, rtol=0)

    def test_cuda_graph_replays_match_eager_bitwise(self):
        # flashtune's forward and backward captured (deterministic mode), replayed 100 times: the
        # same bits as eager (the workspaces come from the graph's pool; nothing allocates inside)
        q, k, v = make((2, 4, 197, 197, 64, 64), torch.bfloat16, "bnhd", 11)
        do = torch.randn(2, 4, 197, 64, device="cuda", dtype=torch.bfloat16)

        def step(q, k, v):   # dO enters through a loss made in the step (in the capture, on its stream)
            o = flashtune.attention(q, k, v, is_causal=True, deterministic=True)
            return (o,) + torch.autograd.grad((o * do).sum(), (q, k, v))

        # eager on copies: autograd keeps the stream a leaf is first used on, and a leaf first used
        # on the default stream would make the capture wait on it (PyTorch refuses that)
        eager = [t.clone() for t in step(*(t.detach().clone().requires_grad_(True) for t in (q, k, v)))]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):   # warm-up on a side stream, as torch.cuda.graphs asks
            for _ in range(2):
                step(q, k, v)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = step(q, k, v)
        for replay in range(100):
            graph.replay()
            if replay in (0, 99):
                torch.cuda.synchronize()
                for name, a, b in zip(("O", "dQ", "dK", "dV"), eager, captured):
                    self.assertTrue(torch.equal(a, b), f"{name} after replay {replay + 1}")

    def test_compiled_variable_length_batch_matches_eager(self):
        lengths = [37, 300, 0, 129]
        cu = torch.tensor([0] + list(__import__("itertools").accumulate(lengths)), dtype=torch.int32, device="cuda")
        total = int(cu[-1])
        torch.manual_seed(3)
        q, k, v = (torch.randn(total, 8, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        do = torch.randn(total, 8, 64, device="cuda", dtype=torch.bfloat16)

        def f(q, k, v):
            return flashtune.attention_varlen(q, k, v, cu, cu, max(lengths), max(lengths), causal=True,
                                              deterministic=True)

        eager = [f(q, k, v)]
        eager += torch.autograd.grad(eager[0], (q, k, v), do)
        compiled = torch.compile(f, fullgraph=True)
        got = [compiled(q, k, v)]
        got += torch.autograd.grad(got[0], (q, k, v), do)
        for name, a, b in zip(("O", "dQ", "dK", "dV"), eager, got):
            self.assertTrue(torch.equal(a, b), name)

    @unittest.skipUnless(HAVE_GPU and torch.cuda.device_count() > 1, "needs two GPUs")
    def test_tensors_on_any_device(self):
        # each device its own context and modules; the current device is left as it was
        torch.cuda.set_device(0)
        for index in (1, 0, 1):
            dev = torch.device("cuda", index)
            torch.manual_seed(index)
            q, k, v = (torch.randn(2, 4, 100, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            o = flashtune.attention(q, k, v, is_causal=True)
            self.assertEqual(o.device, dev)
            grads = torch.autograd.grad(o, (q, k, v), torch.ones_like(o))
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            ref_grads = torch.autograd.grad(ref, (q, k, v), torch.ones_like(ref))
            for a, b in zip((o,) + grads, (ref,) + ref_grads):
                torch.testing.assert_close(a, b, atol=3e-2, rtol=3e-2)
            self.assertEqual(torch.cuda.current_device(), 0)

    def test_inference_is_the_training_forward(self):
        # under torch.no_grad (and for inputs without gradients) the library runs without autograd:
        # the same kernel, the same bits, for a dense and a packed batch
        q, k, v = make((2, 3, 77, 77, 64, 64), torch.bfloat16, "bnhd", 21)
        o = flashtune.attention(q, k, v, is_causal=True)
        with torch.no_grad():
            self.assertTrue(torch.equal(flashtune.attention(q, k, v, is_causal=True), o))
        self.assertTrue(torch.equal(flashtune.attention(q.detach(), k.detach(), v.detach(), is_causal=True), o))
        cu = torch.tensor([0, 30, 77], dtype=torch.int32, device="cuda")
        packed = [t.detach()[0].transpose(0, 1).contiguous().requires_grad_(True) for t in (q, k, v)]
        ov = flashtune.attention_varlen(*packed, cu, cu, 47, 47, causal=True)
        with torch.no_grad():
            self.assertTrue(torch.equal(flashtune.attention_varlen(*packed, cu, cu, 47, 47, causal=True), ov))

    def test_hot_path_is_the_python_path(self):
        # the C hot path (built beside the library here) and the Python path: the same O bit for bit,
        # laid out the same, for plain, [B, N, H, D], decode (a split forward's workspace) and
        # scaled calls; the backward after a hot forward matches the Python path's too
        from flashtune import _attention, _library
        from unittest import mock
        _attention._Attention.get()
        built = os.path.isfile(os.path.join(os.path.dirname(os.path.realpath(_library.library()._name)),
                                            _library.HOTPATH_FILE))
        self.assertEqual(_attention._hot_attention is not None, built and os.environ.get("FLASHTUNE_HOTPATH") != "0")
        if _attention._hot_attention is None:
            self.skipTest("no C hot path beside the library")
        cases = [((2, 3, 77, 77, 64, 64), "bhnd", {}), ((2, 4, 100, 100, 128, 128), "bnhd", {}),
                 ((1, 8, 3, 1000, 128, 128), "bhnd", {}), ((2, 3, 50, 70, 64, 64), "bhnd", {"scale": 0.3})]
        for shape, layout, kw in cases:
            with self.subTest(shape=shape, layout=layout):
                q, k, v = make(shape, torch.bfloat16, layout, 8)
                with torch.no_grad():
                    hot = flashtune.attention(q, k, v, is_causal=True, **kw)
                    with mock.patch.object(_attention, "_hot_attention", None), \
                            mock.patch.object(_attention, "_hot_forward", None):
                        cold = flashtune.attention(q, k, v, is_causal=True, **kw)
                self.assertEqual(hot.stride(), cold.stride())
                self.assertTrue(torch.equal(hot, cold))
                do = torch.randn_like(hot)
                grads = torch.autograd.grad(flashtune.attention(q, k, v, is_causal=True, deterministic=True, **kw),
                                            (q, k, v), do)
                with mock.patch.object(_attention, "_hot_attention", None), \
                        mock.patch.object(_attention, "_hot_forward", None):
                    want = torch.autograd.grad(flashtune.attention(q, k, v, is_causal=True, deterministic=True, **kw),
                                               (q, k, v), do)
                for a, b in zip(grads, want):
                    self.assertTrue(torch.equal(a, b))

    def test_calls_the_kernels_cannot_run_go_to_sdpa(self):
        q, k, v = make((2, 3, 17, 17, 64, 64), torch.float32, "bhnd", 5)
        mask = torch.randn(17, 17, device="cuda") > 0
        mask[:, 0] = True
        import warnings
        flashtune._fallback._warned.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            o = flashtune.attention(q, k, v, attn_mask=mask)
            cpu = [t.detach().cpu() for t in (q, k, v)]
            o_cpu = flashtune.attention(*cpu, is_causal=True)
        self.assertTrue(torch.equal(o, F.scaled_dot_product_attention(q, k, v, attn_mask=mask)))
        self.assertTrue(torch.equal(o_cpu, F.scaled_dot_product_attention(*cpu, is_causal=True)))
        self.assertEqual(len([w for w in caught if "flashtune.attention:" in str(w.message)]), 2)
        with self.assertRaisesRegex(ValueError, "strict mode"):
            flashtune.attention(q, k, v, attn_mask=mask, strict=True)


if __name__ == "__main__":
    if not HAVE_GPU:
        print("no CUDA GPU or no torch: test_gpu.py skipped")
        sys.exit(77)
    unittest.main()
