#!/usr/bin/env bash
# Everything in one call on a GPU machine (README.md here says what it needs): build, every
# gpu-labelled test (ctest -L gpu), the runtime's install-tree check (dev/gpu/runtime-check.sh),
# then bench/compare.py for COMPARE_DTYPES (default bf16,f16,f32). Full logs stay in /tmp/logs;
# $OUT gets the summary (summary.log) and compare's CSV, sidecar JSON, Markdown and plots.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL" /tmp/logs
export OUT=/tmp/logs
{
  bash dev/gpu/check.sh 2>&1 | tail -25
  bash dev/gpu/runtime-check.sh 2>&1 | sed -n '/SUMMARY/,$p'
  grep -E "added|per call" /tmp/logs/bench_dispatch.log
  export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu FLASHTUNE_LIBRARY=/tmp/build/runtime/libflashtune.so
  python3 bench/compare.py --out "$FINAL" --dtypes "${COMPARE_DTYPES:-bf16,f16,f32}" > /tmp/logs/compare.log 2>&1
  echo "compare rc=$?"
  sed -n '/Geometric mean/,$p' "$FINAL/compare.md"
} > "$FINAL/summary.log" 2>&1
cat "$FINAL/summary.log"
