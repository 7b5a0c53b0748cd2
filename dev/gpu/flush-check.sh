#!/usr/bin/env bash
# On a GPU machine: what a cold L2 costs a family's kernels. bench_kernels' rows of one set timed
# with L2 left warm between launches and with 256 MB written before each (FT_BENCH_FLUSH=1, as
# bench/compare.py's timing and the sweep do); then Nsight Compute's duration of every kernel of
# the set's first ROWS rows (default 3), caches flushed before each kernel and not.
# Usage: dev/gpu/flush-check.sh FAMILY SET      e.g. dev/gpu/flush-check.sh bwd_wgmma order
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
family=${1:?usage: flush-check.sh FAMILY SET}; set_=${2:?usage: flush-check.sh FAMILY SET}
source dev/gpu/debs.sh
[ -x /tmp/build/bench/bench_kernels ] && [ -z "${REBUILD:-}" ] || {
  cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/build --target bench_kernels >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }; }
for f in 0 1; do
  FT_BENCH_FLUSH=$f timeout 200 /tmp/build/bench/bench_kernels ${REPS:-20} "$family" "$set_" > "$OUT/flush$f.log" 2>&1
done
# Each row: 3 warm-up runs and one timed run of its plan, each of a few kernels.
for cc in all none; do
  timeout 150 ncu --clock-control none --cache-control $cc --metrics gpu__time_duration.sum --kernel-name regex:^ft_ \
    --launch-count $(( ${ROWS:-3} * 4 * 3 )) /tmp/build/bench/bench_kernels 1 "$family" "$set_" > "$OUT/ncu-cache-$cc.txt" 2>&1
  echo "== ncu, cache-control $cc: kernel, microseconds"
  awk '/^  ft_/ { k = $1 } /gpu__time_duration.sum/ { printf "%s %s %s\n", k, $2, $3 }' "$OUT/ncu-cache-$cc.txt" |
    paste -sd' ' | fold -w 200
done
echo "== bench_kernels $family $set_: warm L2 | flushed (median ms, TFLOP/s)"
paste <(awk 'NR > 2 { print $3, $7, $8, $(NF-3), $(NF-1), $NF }' "$OUT/flush0.log") \
      <(awk 'NR > 2 { print $(NF-3), $(NF-1) }' "$OUT/flush1.log")
