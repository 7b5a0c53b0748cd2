#!/usr/bin/env bash
# On a GPU machine (README.md here): workloads keyed by their mask and variable-length bucket, in
# one call. Builds; runs test_tune_gpu, test_runtime_gpu and the Python tests of masks, variable
# lengths, GQA and decode; tunes tuner/spaces/kinds.lua; then bench/varlen.py with the runtime's
# choice without a database (the dense winners, PERSISTENT=0) and with the kinds' winners.
# Logs in $OUT; a summary printed last. Env: PARTS (default "tests sweep bench"), SWEEP_LIMIT_S
# (default 240).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PARTS=${PARTS:-tests sweep bench}
source dev/gpu/build.sh
summary=()
if [[ " $PARTS " == *" tests "* ]]; then
  (cd /tmp/build && timeout 300 ctest --output-on-failure -L gpu -R "test_runtime_gpu|test_tune_gpu" 2>&1) \
    > "$OUT/gpu-tests.log"; summary+=("gpu tests rc=$?")
  timeout 200 python3 python/tests/test_gpu.py AgainstPyTorch.test_masks AgainstPyTorch.test_variable_length_batches \
    AgainstPyTorch.test_grouped_query_attention AgainstPyTorch.test_decode_shapes > "$OUT/python.log" 2>&1
  summary+=("python masks/varlen/gqa/decode rc=$?")
fi
if [[ " $PARTS " == *" sweep "* ]]; then
  rm -f /tmp/kinds.db*
  timeout "${SWEEP_LIMIT_S:-240}" /tmp/build/tuner/flashtune tune --db /tmp/kinds.db tuner/spaces/kinds.lua \
    > "$OUT/kinds-tune.log" 2>&1; summary+=("kinds sweep rc=$?")
  /tmp/build/tuner/flashtune db export --db /tmp/kinds.db > "$OUT/kinds-winners.txt"
fi
if [[ " $PARTS " == *" bench "* ]]; then
  timeout 150 python3 bench/varlen.py --out /tmp/varlen-default > "$OUT/varlen-default.log" 2>&1
  summary+=("varlen bench (no database) rc=$?")
  if [ -f /tmp/kinds.db ]; then
    FLASHTUNE_DB=/tmp/kinds.db timeout 150 python3 bench/varlen.py --out /tmp/varlen-tuned \
      > "$OUT/varlen-tuned.log" 2>&1; summary+=("varlen bench (kinds winners) rc=$?")
  fi
fi
echo "== GPU tests"; grep -E "FAIL|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" 2>/dev/null | tail -12
tail -4 "$OUT/python.log" 2>/dev/null
printf '%s\n' "${summary[@]}"
grep -E "winner|best" "$OUT/kinds-tune.log" 2>/dev/null | tail -14
for f in varlen-default varlen-tuned; do [ -f "$OUT/$f.log" ] && { echo "== $f"; tail -12 "$OUT/$f.log"; }; done
