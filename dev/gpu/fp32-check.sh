#!/usr/bin/env bash
# On a GPU machine (README.md here), one call for float32 on tensor cores (fwd_mma's and
# bwd_mma's TF32 paths): build, test_attn_gpu's f32 cases (FT_TEST_FILTER) and test_runtime_gpu,
# bench_kernels' "tf32" rows, bench/fp32_accuracy.py (errors against float64) and
# bench/compare.py's float32 table beside SDPA's memory-efficient and math backends. Eight files
# in $OUT (device, build log, tests, bench, the accuracy table, compare.py's table, CSV and log);
# the tables printed last.
# compare.py's float32 rows include flashtune with TF32 allowed (its own table, beside SDPA efficient).
# Usage: [FP32_TESTS=0] [FP32_BENCH=0] [FP32_ACCURACY=0] [COMPARE_LIMIT_S=300, 0: none] [FLASHTUNE_COMMIT=abc1234]
#        dev/gpu/fp32-check.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build.sh
if [ "${FP32_TESTS:-1}" != 0 ]; then
  (cd /tmp/build && FT_TEST_FILTER='*f32*' timeout 240 ctest --output-on-failure -L gpu -R "test_attn_gpu|test_runtime_gpu" 2>&1) \
    > "$OUT/gpu-tests.log"; echo "tests rc=$?"
fi
[ "${FP32_BENCH:-1}" = 0 ] ||
  { timeout 120 /tmp/build/bench/bench_kernels 20 all tf32 > "$OUT/bench-tf32.log" 2>&1; echo "bench rc=$?"; }
[ "${FP32_ACCURACY:-1}" = 0 ] ||
  { timeout 180 python3 bench/fp32_accuracy.py --out "$OUT" > /tmp/accuracy.log 2>&1; echo "accuracy rc=$?"; }
if [ "${COMPARE_LIMIT_S:-300}" != 0 ]; then
  mkdir -p /tmp/compare-f32
  timeout "${COMPARE_LIMIT_S:-300}" python3 bench/compare.py --out /tmp/compare-f32 --dtypes f32 \
    --skip flash,cudnn,flex,fa4 --extra= > "$OUT/compare.log" 2>&1; echo "compare rc=$?"
  cp /tmp/compare-f32/compare.md /tmp/compare-f32/compare.csv "$OUT/" 2>/dev/null
fi
grep -E "tests passed|FAILED" "$OUT/gpu-tests.log" 2>/dev/null | tail -3
cut -c1-150 "$OUT/bench-tf32.log" 2>/dev/null; cat "$OUT/fp32_accuracy.md" 2>/dev/null
[ -f "$OUT/compare.md" ] && sed -n '/Geometric mean/,/Peak memory/p' "$OUT/compare.md"
