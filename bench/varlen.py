"""Variable-length batches: flashtune.attention_varlen against the same tokens as one dense batch
and against the peers that take a packed batch, in one process and one run on the GPU.

The batch: sequences of mixed lengths, log-uniform from 256 to 8192 (a fixed seed), 65536 tokens
in all, packed [total, H, D] as FlashAttention's varlen takes them. Timed, forward and backward:
- flashtune.attention_varlen on it;
- flashtune.attention on a dense batch of the same tokens and about the same FLOPs (B sequences
  of length L, L = sum(n^2) / sum(n) rounded to 64, B = 65536 / L): the throughput a packed batch
  should keep (the target is >= 0.9x of it);
- FlexAttention (torch.compile) on one 65536-token sequence with a document mask (and causal
  within each document), its block mask built once, untimed;
- FlashAttention-2's flash_attn_varlen_func where the flash_attn package is installed;
- FlashAttention-4's flash_attn.cute.flash_attn_varlen_func where it imports (compare.py's
  load_fa4_module; a peer to measure, never a dependency).
--docs N:LO:HI takes N documents of log-uniform lengths in [LO, HI] instead (a fixed seed), e.g.
16:64:4096 (16 documents of 64 to 4096 tokens, a packed batch of a size models train on).
--order longest-first (or shortest-first) sorts the same lengths; --flashtune-only times flashtune
alone.
FLOPs of a packed batch: sum over sequences of 4 n^2 D H (halved when causal), backward 2.5x
that; the same convention as bench/compare.py, whose timer (median of CUDA events) this uses.

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/varlen.py --out bench/out"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import flashtune  # noqa: E402
from compare import first_line, load_fa4_module, time_ms  # noqa: E402
from varlen_lengths import documents, mixed_lengths  # noqa: E402


def packed_flops(lengths, h, d, causal, backward):
    f = sum(4.0 * h * n * n * d for n in lengths) / (2 if causal else 1)
    return 2.5 * f if backward else f


def timed(fn, inputs):
    """(forward ms, backward ms) of fn(*inputs) and of its gradient, or None and why."""
    try:
        o = fn(*inputs)
        do = torch.randn_like(o)
        fwd = time_ms(lambda: fn(*inputs))[0]
        bwd = time_ms(lambda: torch.autograd.grad(o, inputs, do, retain_graph=True))[0]
        return (fwd, bwd), ""
    except Exception as e:   # a peer that does not take this problem (FlexAttention's errors vary)
        torch.cuda.synchronize()
        return None, first_line(e)


def flex_document(lengths, causal):
    """FlexAttention over one packed sequence with a document mask, or None and why."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError as e:
        return None, f"no FlexAttention ({e})"
    doc = torch.repeat_interleave(torch.arange(len(lengths), device="cuda"),
                                  torch.tensor(lengths, device="cuda"))

    def mask(b, h, q, kv):
        same = doc[q] == doc[kv]
        return same & (q >= kv) if causal else same

    total = sum(lengths)
    block_mask = create_block_mask(mask, None, None, total, total, device="cuda")
    torch._dynamo.reset()
    compiled = torch.compile(flex_attention, dynamic=False)
    return (lambda q, k, v: compiled(q, k, v, block_mask=block_mask)), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench/out")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--docs", default="", help="N:LO:HI: N documents of log-uniform lengths in [LO, HI]")
    ap.add_argument("--order", choices=("drawn", "longest-first", "shortest-first"), default="drawn",
                    help="the sequences' order in the packed batch (the same lengths): how much a kernel's "
                         "speed depends on where the long ones lie (its blocks' schedule)")
    ap.add_argument("--flashtune-only", action="store_true", help="time flashtune alone (varlen and dense)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    h, d, dtype = args.heads, args.head_dim, torch.bfloat16
    lengths = documents(args.docs) if args.docs else mixed_lengths()
    if args.order != "drawn":
        lengths.sort(reverse=args.order == "longest-first")
    tokens = sum(lengths)
    cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32, device="cuda")
    longest = max(lengths)
    dense_n = max(64, round(sum(n * n for n in lengths) / sum(lengths) / 64) * 64)
    dense_b = max(1, round(tokens / dense_n))
    g = torch.Generator(device="cuda").manual_seed(1)
    packed = [torch.randn((tokens, h, d), generator=g, device="cuda", dtype=dtype).requires_grad_(True)
              for _ in range(3)]
    dense = [torch.randn((dense_b, h, dense_n, d), generator=g, device="cuda", dtype=dtype).requires_grad_(True)
             for _ in range(3)]
    one = [t.detach().transpose(0, 1).unsqueeze(0).contiguous().requires_grad_(True) for t in packed]
    fa4, fa4_why = load_fa4_module()
    rows, facts = [], {"lengths": lengths, "heads": h, "head_dim": d, "dtype": "bf16",
                       "dense": [dense_b, dense_n], "device": torch.cuda.get_device_name(),
                       "fa4": fa4_why or "flash_attn.cute.flash_attn_varlen_func"}
    for causal in (False, True):
        runs = {
            "flashtune varlen": (lambda q, k, v: flashtune.attention_varlen(q, k, v, cu, cu, longest, longest,
                                                                            causal=causal), packed,
                                 packed_flops(lengths, h, d, causal, False)),
            "flashtune dense": (lambda q, k, v: flashtune.attention(q, k, v, is_causal=causal), dense,
                                4.0 * dense_b * h * dense_n ** 2 * d / (2 if causal else 1)),
        }
        if args.flashtune_only:
            for name, (fn, inputs, fwd_flops) in runs.items():
                t, why_not = timed(fn, inputs)
                rows.append((causal, name, t and (t, fwd_flops / t[0] / 1e9, 2.5 * fwd_flops / t[1] / 1e9), why_not))
            continue
        flex, why = flex_document(lengths, causal)
        runs["flex document mask"] = (flex, one, packed_flops(lengths, h, d, causal, False))
        try:
            from flash_attn import flash_attn_varlen_func
            runs["FA2 varlen"] = (lambda q, k, v: flash_attn_varlen_func(q, k, v, cu, cu, longest, longest,
                                                                         causal=causal), packed,
                                  packed_flops(lengths, h, d, causal, False))
        except ImportError:
            why_fa = "flash_attn not installed"
            rows.append((causal, "FA2 varlen", None, why_fa))
        if fa4 is not None:
            def fa4_varlen(q, k, v, causal=causal):
                out = fa4.flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=longest,
                                                 max_seqlen_k=longest, causal=causal)
                return out[0] if isinstance(out, tuple) else out
            runs["FA4 varlen"] = (fa4_varlen, packed, packed_flops(lengths, h, d, causal, False))
        else:
            rows.append((causal, "FA4 varlen", None, fa4_why))
        for name, (fn, inputs, fwd_flops) in runs.items():
            if fn is None:
                rows.append((causal, name, None, why))
                continue
            t, why_not = timed(fn, inputs)
            rows.append((causal, name, t and (t, fwd_flops / t[0] / 1e9, 2.5 * fwd_flops / t[1] / 1e9), why_not))
    md = [f"# Variable-length batch: {len(lengths)} sequences, {tokens} tokens ({min(lengths)}..{max(lengths)}, "
          f"order {args.order}), H {h}, D {d}, bf16; dense comparison {dense_b} x {dense_n}", "",
          "| causal | implementation | fwd ms | fwd TFLOP/s | bwd ms | bwd TFLOP/s | note |", "|---|---|---|---|---|---|---|"]
    for causal, name, r, why in rows:
        if r is None:
            md.append(f"| {int(causal)} | {name} | | | | | {why} |")
        else:
            (f, b), tf, tb = r
            md.append(f"| {int(causal)} | {name} | {f:.3f} | {tf:.0f} | {b:.3f} | {tb:.0f} | |")
    for causal in (False, True):
        got = {name: r for c, name, r, _ in rows if c == causal and r}
        if "flashtune varlen" in got:
            v = got["flashtune varlen"]
            for peer in ("flashtune dense", "flex document mask", "FA2 varlen", "FA4 varlen"):
                if peer in got:
                    p = got[peer]
                    md.append(f"- causal {int(causal)}: varlen / {peer}: forward {v[1] / p[1]:.2f}x, "
                              f"backward {v[2] / p[2]:.2f}x (TFLOP/s)")
    text = "\n".join(md) + "\n"
    print(text)
    with open(os.path.join(args.out, "varlen.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "varlen.json"), "w") as f:
        json.dump(facts, f, indent=2)


if __name__ == "__main__":
    main()
