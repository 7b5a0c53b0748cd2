"""One attention problem, forward and backward, a few times over: something for a profiler to
watch (dev/gpu/profile-peer.sh runs it under Nsight Compute for flashtune and for a peer at the
same shape). Inputs [B, N, H, D] random bf16, the SDPA-style backends on their [B, H, N, D] view,
as bench/compare.py does; no timing of its own.

Usage: python3 bench/one_pass.py --impl flashtune|fa4|cudnn [--batch 4 --heads 16 --seqlen 4096
       --head-dim 128 --head-dim-v 128 --causal] [--window LEFT] [--docs N:LO:HI] [--reps 4]
       [--forward-only]
--window LEFT: a local window of LEFT keys left of the diagonal (flashtune and FA4; cuDNN has none).
--docs N:LO:HI: a packed batch instead, bench/varlen.py's (its lengths, [total, H, D]), through each
one's varlen call (flashtune and FA4); --batch and --seqlen are then unused.
--forward-only: no backward (inputs without gradients), so the forward's kernel is the longest."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def fa4_module():
    """flash_attn.cute where it imports (compare.py's load_fa4_module); else exits saying why."""
    from compare import load_fa4_module
    module, why = load_fa4_module()
    if module is None:
        sys.exit(f"one_pass.py: --impl fa4: {why}")
    return module


def packed_backend(name, cu, longest):
    """run(q, k, v, causal) of a packed batch ([total, H, D]); exits where `name` takes none."""
    if name == "flashtune":
        import flashtune
        return lambda q, k, v, c: flashtune.attention_varlen(q, k, v, cu, cu, longest, longest, causal=c)
    if name == "fa4":
        module = fa4_module()

        def run(q, k, v, c):
            out = module.flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=longest,
                                                max_seqlen_k=longest, causal=c)
            return out[0] if isinstance(out, tuple) else out
        return run
    sys.exit(f"one_pass.py: --impl {name}: no packed batch (--docs) here; flashtune or fa4")


def backend(name, window):
    """(run(q, k, v, causal), takes [B, N, H, D]); exits naming the reason where it cannot run."""
    if name == "flashtune":
        import flashtune
        size = (window, 0) if window is not None else None
        return (lambda q, k, v, c: flashtune.attention(q, k, v, is_causal=c, window_size=size)), False
    if name == "cudnn":
        if window is not None:
            sys.exit("one_pass.py: --impl cudnn: SDPA's cuDNN backend takes no window")

        def run(q, k, v, c):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=c)
        return run, False
    if name == "fa4":
        module = fa4_module()

        def run(q, k, v, c):
            out = module.flash_attn_func(q, k, v, causal=c,
                                         window_size=(window, 0) if window is not None else (None, None))
            return out[0] if isinstance(out, tuple) else out
        return run, True
    sys.exit(f"one_pass.py: --impl {name}: not flashtune, fa4 or cudnn")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", required=True)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seqlen", type=int, default=4096)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--head-dim-v", type=int, default=0)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--window", type=int, default=None)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--docs", default="", help="N:LO:HI: a packed batch of N documents (bench/varlen.py's)")
    ap.add_argument("--forward-only", action="store_true")
    args = ap.parse_args()
    b, h, n, d, dv = args.batch, args.heads, args.seqlen, args.head_dim, args.head_dim_v or args.head_dim
    grad = not args.forward_only
    if args.docs:
        from varlen_lengths import documents
        lengths = documents(args.docs)
        cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32, device="cuda")
        run = packed_backend(args.impl, cu, max(lengths))
        q, k, v = (torch.randn((sum(lengths), h, e), device="cuda", dtype=torch.bfloat16).requires_grad_(grad)
                   for e in (d, d, dv))
        inputs = (q, k, v)
    else:
        run, bnhd = backend(args.impl, args.window)
        q, k, v = (torch.randn((b, n, h, e), device="cuda", dtype=torch.bfloat16).requires_grad_(grad)
                   for e in (d, d, dv))
        inputs = (q, k, v) if bnhd else (q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    for _ in range(args.reps):
        o = run(*inputs, args.causal)
        if grad:
            torch.autograd.grad(o, (q, k, v), torch.randn_like(o))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
