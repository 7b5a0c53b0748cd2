"""Float32 accuracy: flashtune's paths and PyTorch's against a float64 reference, on the GPU.

For each shape (the seed checks' B 4 H 8 N 64 D 64, and N 4096 and 16384), causal and not, random
normal inputs: O and the gradients dQ, dK, dV of
- flashtune on tensor cores (its f32 forward and backward as the tuned table serves them: three
  TF32 products a product, or in the Hopper forward six products of bfloat16 parts, BF16_PARTS),
  the inputs laid out so that every row starts 16-byte aligned;
- flashtune on CUDA cores (fwd_exact, bwd_exact): the same values in rows 4 bytes past that
  alignment, which the library runs there;
- SDPA's memory-efficient and math backends in float32 (TF32 off);
against SDPA's math backend in float64 on the same values. Prints and writes (--out) a markdown
table of relative L2 errors, and whether O and each gradient are within atol 1e-5 / rtol 1e-4 of
the float64 result (torch.allclose), the seed checks' bar.

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/fp32_accuracy.py --out bench/out"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import flashtune  # noqa: E402
from compare import sdpa  # noqa: E402   (bench/compare.py: an SDPA backend as a function)

# B, H, N, D: the seeds' check, then long sequences at both head dims the float32 winners differ at
# (at 128 the backward's slab warps split the queries, SPLIT_QUERIES).
SHAPES = [(4, 8, 64, 64), (1, 4, 4096, 64), (1, 2, 16384, 64), (1, 4, 4096, 128), (1, 2, 16384, 128)]


def misaligned(x):
    """x's values in a [B, H, N, D] view whose base and rows sit 4 bytes past 16-byte alignment."""
    b, h, n, d = x.shape
    buf = torch.empty(b * h * n * (d + 1) + 1, dtype=x.dtype, device=x.device)
    view = buf[1:].as_strided((b, h, n, d), (h * n * (d + 1), n * (d + 1), d + 1, 1))
    view.copy_(x)
    return view


def flashtune_run(layout):
    def run(q, k, v, causal):
        return flashtune.attention(q, k, v, is_causal=causal)
    run.layout = layout
    return run


IMPLS = {
    "flashtune tensor cores": flashtune_run(None),
    "flashtune CUDA cores": flashtune_run(misaligned),
    "SDPA efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
    "SDPA math": sdpa(SDPBackend.MATH),
}


def outputs(fn, inputs, dout, causal, layout=None):
    """O, dQ, dK, dV of fn on copies of inputs (laid out by layout, if any)."""
    leaves = []
    for x in inputs:
        y = layout(x.detach()) if layout else x.detach().clone()
        leaves.append(y.requires_grad_())
    o = fn(*leaves, causal)
    o.backward(dout.to(o.dtype))
    return [o.detach()] + [t.grad.detach() for t in leaves]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(20261129)
    names = ["O", "dQ", "dK", "dV"]
    lines = [f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, flashtune {flashtune.version()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "| B H N D | causal | implementation | rel. L2 error O, dQ, dK, dV | allclose(atol 1e-5, rtol 1e-4) |",
             "| --- | --- | --- | --- | --- |"]
    for b, h, n, d in SHAPES:
        for causal in (False, True):
            x = [torch.randn((b, h, n, d), generator=g, device="cuda", dtype=torch.float32) for _ in range(4)]
            with sdpa_kernel(SDPBackend.MATH):
                ref = outputs(lambda q, k, v, c: F.scaled_dot_product_attention(q, k, v, is_causal=c),
                              [t.double() for t in x[:3]], x[3].double(), causal)
            for name, fn in IMPLS.items():
                try:
                    got = outputs(fn, x[:3], x[3], causal, getattr(fn, "layout", None))
                except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                    lines.append(f"| {b} {h} {n} {d} | {int(causal)} | {name} | n/a: {str(e).splitlines()[0][:80]} | |")
                    continue
                errs = [((a.double() - r).norm() / r.norm()).item() for a, r in zip(got, ref)]
                close = [torch.allclose(a.double(), r, atol=1e-5, rtol=1e-4) for a, r in zip(got, ref)]
                lines.append(f"| {b} {h} {n} {d} | {int(causal)} | {name} | " + ", ".join(f"{e:.2e}" for e in errs) +
                             " | " + " ".join(f"{nm} {'yes' if c else 'no'}" for nm, c in zip(names, close)) + " |")
                print(lines[-1], flush=True)
            del ref
            torch.cuda.empty_cache()
    with open(os.path.join(args.out, "fp32_accuracy.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
