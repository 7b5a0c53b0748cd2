"""A multi-head attention layer whose attention kernel is a choice, as in the seed notebook:
"materialize" (softmax of the full score matrix), "pytorch" (scaled_dot_product_attention) or
"flashtune". Checks that flashtune's outputs and the gradients of query, key and value (dQ, dK, dV) match the
materializing reference in float32 (atol 1e-5, rtol 1e-4), causal and not.
Run on a GPU: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 python/examples/mha.py
To tune flashtune for exactly the problems this layer runs: run it once with
FLASHTUNE_CAPTURE=/tmp/mha.capture (the counts are written at exit), then
`flashtune tune --from-capture /tmp/mha.capture` on the same GPU, and run it again with
FLASHTUNE_DB=flashtune.db."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import flashtune  # noqa: E402


def materialize(q, k, v, is_causal=False):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if is_causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


IMPLS = {"materialize": materialize, "pytorch": F.scaled_dot_product_attention, "flashtune": flashtune.attention}


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden, heads, attention_impl="flashtune"):
        super().__init__()
        assert hidden % heads == 0, f"hidden={hidden} must be a multiple of heads={heads}"
        self.heads, self.attend = heads, IMPLS[attention_impl]
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x, is_causal=False):
        b, n, hidden = x.shape
        # [B, N, 3, H, D] -> three [B, H, N, D] views (strided: no copy)
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, hidden // self.heads).permute(2, 0, 3, 1, 4)
        for t in (q, k, v):   # keep dQ, dK, dV for the check
            t.retain_grad()
        self.last_qkv = (q, k, v)
        o = self.attend(q, k, v, is_causal=is_causal)
        return self.out(o.transpose(1, 2).reshape(b, n, hidden))


def check(is_causal, batch=2, seqlen=197, hidden=256, heads=4):
    torch.manual_seed(0)
    x = torch.randn(batch, seqlen, hidden, device="cuda")
    g = torch.randn(batch, seqlen, hidden, device="cuda")   # dLoss/dy
    ref = MultiHeadAttention(hidden, heads, "materialize").cuda()
    results = {}
    for impl in ("materialize", "pytorch", "flashtune"):
        layer = MultiHeadAttention(hidden, heads, impl).cuda()
        layer.load_state_dict(ref.state_dict())
        # Gradients of the attention inputs: capture them on the projection's output.
        y = layer(x, is_causal=is_causal)
        (y * g).sum().backward()
        q, k, v = layer.last_qkv
        results[impl] = (y.detach(), q.grad, k.grad, v.grad)
    want = results["materialize"]
    for impl in ("pytorch", "flashtune"):
        for name, got, exp in zip(("output", "dQ", "dK", "dV"), results[impl], want):
            err = (got - exp).abs().max().item()
            torch.testing.assert_close(got, exp, atol=1e-5, rtol=1e-4)
            print(f"causal={is_causal} {impl:>9} {name:>6}: max abs diff {err:.2e} ok")


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    for c in (False, True):
        check(c)
    print("flashtune matches the materializing reference in float32")
