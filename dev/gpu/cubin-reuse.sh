#!/usr/bin/env bash
# On a GPU machine, after dev/gpu/check.sh has built /tmp/build: a database made with `flashtune
# db import`, then the same forward and backward in two processes through the Python package.
# The first compiles and stores each CUBIN; the second must find every one in the database
# (describe_choice says where the CUBIN came from). Prints the choices and PASS or FAIL.
set -uo pipefail
source dev/gpu/debs.sh
export FLASHTUNE_LIBRARY=/tmp/build/runtime/libflashtune.so FLASHTUNE_DB=/tmp/cubin-reuse.db
rm -f "$FLASHTUNE_DB"
/tmp/build/tuner/flashtune db import db/tuned/*.txt > /dev/null || exit 1
run() {
    PYTHONPATH=python python3 - <<'PY'
import torch, flashtune
for d in (64, 128):
    q = torch.randn(2, 8, 1024, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    o = flashtune.attention(q, q, q, is_causal=True)
    o.sum().backward()
    torch.cuda.synchronize()
    print(f"d={d} fwd:", flashtune.describe_choice(q, q, q, is_causal=True))
    print(f"d={d} bwd:", flashtune.describe_choice(q, q, q, is_causal=True, backward=True))
PY
}
echo "first process:"; run | tee /tmp/reuse1.txt
echo "second process:"; run | tee /tmp/reuse2.txt
if grep -qi "compiled with NVRTC" /tmp/reuse2.txt; then echo "cubin reuse: FAIL"; exit 1; fi
echo "cubin reuse: PASS"
