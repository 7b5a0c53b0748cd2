#!/usr/bin/env bash
# On a GPU machine (README.md here): build libflashtune and run bench/compare.py (flashtune beside
# PyTorch's backends, FlexAttention and, where staged there, FlashAttention-4, in one process).
# Results in $OUT; the summary tables last.
# Usage: [COMPARE_ARGS="--dtypes bf16"] [COMPARE_LIMIT_S=560, 0: no compare.py] [FEATURES=1]
#        [FEATURES_ARGS="--rounds 3"] [VARLEN_ARGS="--docs 16:64:4096"] [FLASHTUNE_COMMIT=abc1234]
#        dev/gpu/compare.sh
# Ratios near 1 against FA4: COMPARE_ARGS="--dtypes bf16 --skip flash,flex,efficient,math --rounds 3"
# (each point's implementations in three interleaved rounds; bench/rounds.py): 9 timings a point,
# against 7 with every backend once.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
if [ "${COMPARE_LIMIT_S:-560}" != 0 ]; then
  timeout "${COMPARE_LIMIT_S:-560}" python3 bench/compare.py --out "$OUT" ${COMPARE_ARGS:-} > "$OUT/compare.log" 2>&1
  echo "compare rc=$?"
fi
# FEATURES=1: also bench/features.py (grouped heads, the deterministic backward, a window, a
# softcap, MLA, speculative decoding) and bench/varlen.py (VARLEN_ARGS), beside the same peers.
if [ -n "${FEATURES:-}" ]; then
  timeout 240 python3 bench/features.py --out "$OUT" ${FEATURES_ARGS:-} > "$OUT/features.log" 2>&1
  echo "features rc=$?"
  timeout 180 python3 bench/varlen.py --out "$OUT" ${VARLEN_ARGS:-} > "$OUT/varlen.log" 2>&1; echo "varlen rc=$?"
  cat "$OUT/features.md" "$OUT/varlen.md" 2>/dev/null
fi
[ -f "$OUT/compare.md" ] && sed -n '/Geometric mean/,/Peak memory/p' "$OUT/compare.md"
