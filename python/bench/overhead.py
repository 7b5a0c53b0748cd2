"""Host-side cost of one flashtune.attention() call, forward and backward, on a machine without a
GPU or PyTorch: the real libflashtune (loaded, ft_open'ed), the stand-in torch of
python/tests/fake_torch.py (its calls cost what a Python call costs), and no-op C functions in
place of ft_attention_forward/backward (which return FT_ERR_NO_DEVICE without a GPU). So the
figures are the package's own Python work around the C call plus the stand-in's, not PyTorch's;
on a GPU, torch's allocations and autograd add the same to both columns.

    python3 python/bench/overhead.py                  # the package in this checkout
    python3 python/bench/overhead.py --baseline REV   # also REV's python/flashtune, side by side

Needs a C compiler (cc) for the no-op functions and libflashtune built (build/runtime), or
FLASHTUNE_LIBRARY naming it."""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python", "tests"))
import c_stub  # noqa: E402
from fake_torch import Device, Function, Tensor, make_torch  # noqa: E402

NOOP_C = """
#include <stddef.h>
int ft_noop_forward(void *a, const void *b, const void *c, const void *d, const void *e, void *f, void *g,
                    void *ws, size_t bytes, void *h) { return 0; }
int ft_noop_backward(void *a, const void *b, const void *c, const void *d, const void *e, const void *f,
                     const void *g, const void *h, void *i, void *j, void *k, void *ws, size_t bytes, void *l)
{ return 0; }
int ft_noop_size(void *a, const void *b, size_t *bytes) { *bytes = 0; return 0; }
"""


def noop_library(tmp):
    return c_stub.build(tmp, "ftnoop", NOOP_C)


def swap_in_noops(noop):
    """Puts the no-op C functions where the package keeps ft_attention_forward/backward, with the
    same argtypes, so each call converts its arguments exactly as it would for the real one."""
    from flashtune import _library
    lib = _library.library()
    _library.context()
    # _library.forward/backward since they were bound separately; before, the CDLL's attributes
    holders = [(_library, "forward", "ft_noop_forward"), (_library, "backward", "ft_noop_backward"),
               (_library, "forward_ws_size", "ft_noop_size"), (_library, "backward_ws_size", "ft_noop_size")]
    if not hasattr(_library, "forward"):
        holders = [(lib, "ft_attention_forward", "ft_noop_forward"),
                   (lib, "ft_attention_backward", "ft_noop_backward")]
    for holder, name, stub in holders:
        if getattr(holder, name, None) is None:   # an older package: no workspace-size calls
            continue
        real, fake = getattr(holder, name), noop[stub]
        fake.argtypes, fake.restype = real.argtypes, real.restype
        setattr(holder, name, fake)
    hot = getattr(_library, "hotpath", None)
    if hot is not None:   # the C hot path calls the library through its own pointers: the no-ops there too
        address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value  # noqa: E731
        entries = [address(noop.ft_noop_forward), address(noop.ft_noop_size), address(noop.ft_noop_backward)]
        try:
            hot.bind_library(*entries)        # the backward too (the hot backward)
        except TypeError:
            hot.bind_library(*entries[:2])    # an older package: the forward alone


class Trivial(Function):
    @staticmethod
    def forward(ctx, q, k, v):
        ctx.save_for_backward(q, k, v)
        return q


def per_call_us(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def measure(package, number):
    sys.modules["torch"] = torch = make_torch()
    sys.path.insert(0, package)
    import flashtune
    from flashtune import _attention, _checks
    # check_options's arguments: (is_causal, causal, scale), or before the fallback to SDPA
    # (attn_mask, dropout_p, is_causal, causal, scale, enable_gqa)
    options = (True, None, None) if _checks.check_options.__code__.co_argcount == 3 else \
        (None, 0.0, True, None, None, False)

    with tempfile.TemporaryDirectory() as tmp:
        swap_in_noops(noop_library(tmp))
        cuda0 = Device("cuda", 0)
        b, h, n, d = 4, 16, 512, 64
        q, k, v = (Tensor((b, h, n, d), torch.bfloat16, cuda0) for _ in range(3))
        # [B, N, H, D] storage seen as [B, H, N, D]
        bnhd = tuple(Tensor((b, h, n, d), torch.bfloat16, cuda0, (n * h * d, d, h * d, 1)) for _ in range(3))

        # speculative decoding's drafts: 16 rows of 32 heads over 4096 cached keys of 8, bottom-right
        draft = (Tensor((8, 32, 16, 128), torch.bfloat16, cuda0),
                 *(Tensor((8, 8, 4096, 128), torch.bfloat16, cuda0) for _ in range(2)))
        flashtune.attention(q, k, v, is_causal=True)   # loads, opens, builds the autograd class
        saved = Function.last_ctx
        cls = _attention._Attention.get()
        do = Tensor((b, h, n, d), torch.bfloat16, cuda0)
        results = {
            "checks (check_options + check_tensors)": per_call_us(
                lambda: (_checks.check_options(*options), _checks.check_tensors(q, k, v)),
                number),
            "forward, [B,H,N,D] bf16 causal": per_call_us(lambda: flashtune.attention(q, k, v, is_causal=True), number),
            "forward, [B,N,H,D] view, scale=0.125": per_call_us(
                lambda: flashtune.attention(*bnhd, scale=0.125), number),
            "forward, bottom-right causal, grouped 32/8, 16 rows": per_call_us(
                lambda: flashtune.attention(*draft, is_causal=True, enable_gqa=True, causal_align="bottom_right"),
                number),
            "backward": per_call_us(lambda: cls.backward(saved, do), number),
            # the same in both columns: to subtract for the package's own share
            "  stand-in torch in a forward (2 empty, apply)": per_call_us(
                lambda: (torch.empty((b, h, n, d), dtype=torch.bfloat16, device=cuda0),
                         torch.empty((b, h, n), dtype=torch.float32, device=cuda0), Trivial.apply(q, k, v)), number),
            "  stand-in torch in a backward (3 empty_strided)": per_call_us(
                lambda: [torch.empty_strided((b, h, n, d), q.stride(), dtype=torch.bfloat16, device=cuda0)
                         for _ in range(3)], number),
        }
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", metavar="REV", help="also time REV's python/flashtune (git archive)")
    ap.add_argument("--number", type=int, default=20000, help="calls per timing (default 20000)")
    ap.add_argument("--package", help=argparse.SUPPRESS)   # internal: time the package under this dir
    args = ap.parse_args()
    os.environ.setdefault("FLASHTUNE_LIBRARY", os.path.join(REPO, "build", "runtime", "libflashtune.so"))
    os.environ.pop("FLASHTUNE_DB", None)
    if args.package:
        print(json.dumps(measure(args.package, args.number)))
        return

    def run(package):
        out = subprocess.run([sys.executable, __file__, "--package", package, "--number", str(args.number)],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    columns = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            archive = subprocess.run(["git", "-C", REPO, "archive", args.baseline, "python/flashtune"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            columns.append((args.baseline, run(os.path.join(tmp, "python"))))
        columns.append(("this tree", run(os.path.join(REPO, "python"))))
    width = max(len(k) for k in columns[0][1])
    print(f"{'us per call':<{width}}  " + "  ".join(f"{name:>10}" for name, _ in columns))
    for key in columns[0][1]:
        print(f"{key:<{width}}  " + "  ".join(f"{res[key]:10.2f}" for _, res in columns))


if __name__ == "__main__":
    main()
