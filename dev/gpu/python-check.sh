#!/usr/bin/env bash
# On a GPU machine (README.md here): build libflashtune, run the Python package's operator tests
# (test_ops.py: CPU, but CI has no PyTorch) and GPU tests and the MHA example against PyTorch,
# then bench/compare.py (all peers, one run). Logs and results in $OUT.
# Usage: [COMPARE_ARGS="--dtypes bf16"] [SKIP_COMPARE=1] dev/gpu/python-check.sh
# (The library alone is built, build-lib.sh: on a warm machine dev/gpu/check.sh's whole
# bench_kernels run once took most of a 600 s call before the tests.)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu   # the carried Lua, SQLite, cmocka
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
# The operators' CPU tests too: CI has no PyTorch, so they run where it is (they had gone stale unseen).
python3 python/tests/test_ops.py > "$OUT/python-ops.log" 2>&1; echo "python operator tests rc=$?"; tail -1 "$OUT/python-ops.log"
python3 python/tests/test_gpu.py -v > "$OUT/python-gpu.log" 2>&1; echo "python GPU tests rc=$?"
tail -4 "$OUT/python-gpu.log"
python3 python/examples/mha.py > "$OUT/mha.log" 2>&1; echo "mha example rc=$?"; tail -3 "$OUT/mha.log"
[ -n "${SKIP_COMPARE:-}" ] && exit 0
python3 bench/compare.py --out "$OUT" ${COMPARE_ARGS:-} > "$OUT/compare.log" 2>&1; echo "compare rc=$?"
sed -n '/Geometric mean/,$p' "$OUT/compare.md"
