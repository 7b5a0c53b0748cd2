"""What a packed batch's empty blocks cost: the same packed batch (bench/varlen.py's documents)
timed with max_seqlen as it is and 2x, 4x, 8x larger, so the grid gains blocks past every
sequence's end (they exit at once) and nothing else changes. Prints ms a row."""
import sys
import torch
sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import flashtune  # noqa: E402
from compare import time_ms  # noqa: E402
from varlen import documents, mixed_lengths  # noqa: E402

for name, lengths in (("16 docs 64..4096", documents("16:64:4096")), ("23 seqs 610..7718", mixed_lengths())):
    total, longest = sum(lengths), max(lengths)
    cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32, device="cuda")
    q, k, v = (torch.randn((total, 16, 128), device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for causal in (False, True):
        row = []
        for scale in (1, 2, 4, 8):
            m = longest * scale
            fn = lambda: flashtune.attention_varlen(q, k, v, cu, cu, m, m, causal=causal)  # noqa: E731
            row.append(f"x{scale} {time_ms(fn)[0]:.4f}")
        print(f"{name} causal={int(causal)}: " + "  ".join(row), flush=True)
