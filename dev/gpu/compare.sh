#!/usr/bin/env bash
# On a GPU machine (README.md here): build libflashtune and run bench/compare.py (flashtune beside
# PyTorch's backends, FlexAttention and, where staged there, FlashAttention-4, in one process).
# Results in $OUT; the summary tables last.
# Usage: [COMPARE_ARGS="--dtypes bf16"] [FLASHTUNE_COMMIT=abc1234] dev/gpu/compare.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/debs.sh
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build-lib.log" 2>&1 &&
  cmake --build /tmp/build --target flashtune_shared >> "$OUT/build-lib.log" 2>&1 || { tail -40 "$OUT/build-lib.log"; exit 1; }
export FLASHTUNE_LIBRARY=/tmp/build/runtime/libflashtune.so
# FlashAttention-4, where its parts were installed on this machine (../shared/peers/README.md in the
# developers' tree): a peer to measure, never a dependency.
[ -f /tmp/fa4site/env.sh ] && . /tmp/fa4site/env.sh
timeout "${COMPARE_LIMIT_S:-560}" python3 bench/compare.py --out "$OUT" ${COMPARE_ARGS:-} > "$OUT/compare.log" 2>&1
echo "compare rc=$?"
sed -n '/Geometric mean/,/Peak memory/p' "$OUT/compare.md"
