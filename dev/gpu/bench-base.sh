#!/usr/bin/env bash
# On a GPU machine (README.md here): bench_kernels of an earlier tree and of this one, one after
# the other in one call on one machine, for the families named: the speed of a template change
# measured against what it replaces, free of the machine-to-machine spread (3-10% between
# calls). The earlier tree is unpacked beside this one first (git archive REV | tar -x -C .base);
# this tree's bench/bench_kernels.c is used for both, so the rows match.
# Usage: [REPS=20] [BENCH_SET=order] dev/gpu/bench-base.sh FAMILY ...; $OUT gets base.txt, head.txt
# and the table (BENCH_SET: only bench_kernels' rows of that set, in both trees; BASE_BENCH: the bench
# source the earlier tree builds instead, when this one names a parameter that tree lacks).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/logs
[ $# -ge 1 ] || { echo "usage: bench-base.sh FAMILY ..."; exit 2; }
[ -d .base ] || { echo "bench-base.sh: no .base/ (git archive REV | tar -x -C .base)"; exit 2; }
source dev/gpu/debs.sh
cp "${BASE_BENCH:-bench/bench_kernels.c}" .base/bench/bench_kernels.c
for side in base head; do
  src=$([ $side = base ] && echo .base || echo .)
  cmake -S $src -B /tmp/bench-$side -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > /tmp/logs/build-$side.log 2>&1 &&
    cmake --build /tmp/bench-$side --target bench_kernels >> /tmp/logs/build-$side.log 2>&1 ||
    { tail -30 /tmp/logs/build-$side.log; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
: > "$OUT/base.txt"; : > "$OUT/head.txt"
for family in "$@"; do   # base and head in turn for each family, so drifting clocks hit both
  for side in base head; do
    timeout 300 /tmp/bench-$side/bench/bench_kernels "${REPS:-20}" "$family" ${BENCH_SET:-} | grep -v "^bench_kernels:" >> "$OUT/$side.txt"
  done
done
# One line a row: its fields up to the registers, then base and head TFLOP/s and their ratio.
paste -d'|' "$OUT/base.txt" "$OUT/head.txt" | awk -F'|' '
  $1 ~ /^family/ { next }
  { n = split($1, b, " "); split($2, h, " ")   # ... regs med_ms min_ms TFLOP/s order
    key = ""; for (i = 1; i < n - 4; i++) key = key " " b[i]
    printf "%s %s  %8.1f %8.1f  %5.3f\n", key, b[n], b[n-1], h[n-1], (b[n-1] > 0 ? h[n-1] / b[n-1] : 0) }' | tee "$OUT/table.txt"
