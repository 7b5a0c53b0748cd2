"""Decode shapes: one query row a sequence over a long key/value cache, grouped heads, in one
process and one run on the GPU, against the device-to-device copy rate and the peers.

Shapes: batch 1, 2, 4 and 8; 32 query heads over 8 key/value heads; head dim 128; seqlen_q 1;
seqlen_k 8192, 32768 and 131072; bf16. Each implementation's rate is the key/value bytes it must
read (2 · B · Hk · Nk · D · 2 bytes) over its median time; the copy rate is torch's
device-to-device copy of a buffer of the same bytes (bytes copied over time), measured in the
same run. Timed: flashtune.attention (enable_gqa=True), and SDPA's FLASH_ATTENTION,
CUDNN_ATTENTION and EFFICIENT_ATTENTION backends (enable_gqa=True), each where it takes the
shape; bench/compare.py's timer (median of CUDA events, L2 flushed between calls).

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/decode.py --out bench/out"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import flashtune  # noqa: E402
from compare import first_line, time_ms  # noqa: E402

HEADS, HEADS_K, D = 32, 8, 128
PEERS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
         "efficient": SDPBackend.EFFICIENT_ATTENTION}


def sdpa(backend):
    def run(q, k, v):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench/out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    impls = {"flashtune": lambda q, k, v: flashtune.attention(q, k, v, enable_gqa=True)}
    impls.update({name: sdpa(b) for name, b in PEERS.items()})
    lines = [f"# Decode: seqlen_q 1, {HEADS} query heads over {HEADS_K} K/V heads, D {D}, bf16; "
             f"{torch.cuda.get_device_name()}", "",
             "| B | Nk | KV MB | copy GB/s | " + " | ".join(f"{n} GB/s" for n in impls) + " | best peer | flashtune / copy |",
             "|---|---|---|---|" + "---|" * len(impls) + "---|---|"]
    notes = set()
    for b in (1, 2, 4, 8):
        for nk in (8192, 32768, 131072):
            kv_bytes = 2 * b * HEADS_K * nk * D * 2
            src = torch.empty(kv_bytes // 2, dtype=torch.bfloat16, device="cuda")
            dst = torch.empty_like(src)
            copy_ms = time_ms(lambda: dst.copy_(src))[0]
            del src, dst
            copy = kv_bytes / copy_ms / 1e6
            g = torch.Generator(device="cuda").manual_seed(nk + b)
            q = torch.randn((b, HEADS, 1, D), generator=g, device="cuda", dtype=torch.bfloat16)
            k, v = (torch.randn((b, HEADS_K, nk, D), generator=g, device="cuda", dtype=torch.bfloat16)
                    for _ in range(2))
            rates = {}
            for name, fn in impls.items():
                try:
                    fn(q, k, v)
                    rates[name] = kv_bytes / time_ms(lambda: fn(q, k, v))[0] / 1e6
                except Exception as e:   # a backend that does not take the shape
                    torch.cuda.synchronize()
                    rates[name] = None
                    notes.add(f"{name}: {first_line(e)}")
            peers = [r for n, r in rates.items() if n != "flashtune" and r]
            best = max(peers) if peers else None
            ft = rates["flashtune"]
            cells = " | ".join(f"{r:.0f}" if r else "n/a" for r in rates.values())
            lines.append(f"| {b} | {nk} | {kv_bytes / 1e6:.0f} | {copy:.0f} | {cells} | "
                         f"{best:.0f} | {ft / copy:.2f} |" if best and ft else
                         f"| {b} | {nk} | {kv_bytes / 1e6:.0f} | {copy:.0f} | {cells} | n/a | n/a |")
            del q, k, v
            torch.cuda.empty_cache()
    lines += [""] + [f"- {n}" for n in sorted(notes)]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "decode.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
