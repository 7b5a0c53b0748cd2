#!/usr/bin/env bash
# On a GPU machine (README.md here): the decode path in one call. Builds; runs the GPU tests
# (test_attn_gpu, test_runtime_gpu, test_tune_gpu), memcheck and racecheck on the split and packed cases; then
# bench/decode.py with the runtime's choice (the shipped winners), the default sweep's decode space
# alone and bench/decode.py again with its winners. Logs in $OUT; a summary printed last.
# Env: PARTS (default "tests bench sweep"), SWEEP_LIMIT_S (default 300).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PARTS=${PARTS:-tests bench sweep}
source dev/gpu/build.sh
summary=()
if [[ " $PARTS " == *" tests "* ]]; then
  (cd /tmp/build && timeout 420 ctest --output-on-failure -L gpu -R "test_attn_gpu|test_runtime_gpu|test_tune_gpu" 2>&1) \
    > "$OUT/gpu-tests.log"; summary+=("gpu tests rc=$?")
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  : > "$OUT/sanitizer.log"
  for f in 'decode varlen*' 'decode bf16 gqa 32/8*'; do
    for tool in memcheck racecheck; do
      echo "== $tool '$f'" >> "$OUT/sanitizer.log"
      FT_TEST_FILTER="$f" timeout 120 "$CS" --tool $tool /tmp/build/tests/test_attn_gpu >> "$OUT/sanitizer.log" 2>&1
      summary+=("$tool '$f' rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)")
    done
  done
fi
if [[ " $PARTS " == *" bench "* ]]; then
  timeout 200 python3 bench/decode.py --out "$OUT/decode-default" > "$OUT/decode-default.log" 2>&1
  summary+=("decode bench (built-in choice) rc=$?")
fi
if [[ " $PARTS " == *" sweep "* ]]; then
  rm -f /tmp/decode.db*
  # The default sweep's decode space alone.
  sed 's/^return spaces$/local only = {}\nfor _, s in ipairs(spaces) do\n  if s.name == "decode" then only[1] = s end\nend\nreturn only/' \
    tuner/spaces/default.lua > /tmp/decode-space.lua
  timeout "${SWEEP_LIMIT_S:-300}" /tmp/build/tuner/flashtune tune --db /tmp/decode.db /tmp/decode-space.lua \
    > "$OUT/decode-tune.log" 2>&1; summary+=("decode sweep rc=$?")
  /tmp/build/tuner/flashtune db export --db /tmp/decode.db > "$OUT/decode-winners.txt"
  FLASHTUNE_DB=/tmp/decode.db timeout 200 python3 bench/decode.py --out "$OUT/decode-tuned" \
    > "$OUT/decode-tuned.log" 2>&1; summary+=("decode bench (tuned) rc=$?")
fi
echo "== GPU tests"; grep -E "FAIL|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" 2>/dev/null | tail -12
printf '%s\n' "${summary[@]}"
for f in decode-default decode-tuned; do [ -f "$OUT/$f.log" ] && { echo "== $f"; tail -16 "$OUT/$f.log"; }; done
