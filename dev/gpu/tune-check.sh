#!/usr/bin/env bash
# On a GPU machine (README.md here): build everything, run the gpu tests, the kernel benchmark,
# and a quick tuning sweep (twice: the second run must resume and measure nothing). Logs go to
# $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SPACE=${1:-tuner/spaces/quick.lua}
export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu   # the carried Lua, SQLite, cmocka
TARGETS=${TARGETS-} bash dev/gpu/check.sh > "$OUT/check.log" 2>&1
grep -E "tests passed|FAILED|Failed" "$OUT/gpu-tests.log" | tail -5
cat "$OUT/bench.log"
/tmp/build/tests/test_sweep > "$OUT/test_sweep.log" 2>&1; echo "test_sweep rc=$?"
/tmp/build/tuner/flashtune tune --db /tmp/quick.db "$SPACE" > "$OUT/tune.log" 2>&1; echo "tune rc=$?"
tail -30 "$OUT/tune.log"
/tmp/build/tuner/flashtune best --db /tmp/quick.db 2>&1 | tee "$OUT/best.log" | tail -12
/tmp/build/tuner/flashtune tune --db /tmp/quick.db "$SPACE" 2>&1 | head -8
/tmp/build/tuner/flashtune db export --db /tmp/quick.db > "$OUT/winners.txt"; echo "export rc=$?"
