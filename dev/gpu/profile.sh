#!/usr/bin/env bash
# On a GPU machine: profiles bench_kernels rows of one family with Nsight Compute, clocks as an
# application sees them (--clock-control none), the full section set, one text report per row.
# ROWS lists the family's rows to profile (0 = its first row in bench/bench_kernels.c); each row
# runs 3 warm-ups and one timed launch, and the timed one is profiled.
# With SOURCE=1, also the per-instruction SASS page (stall samples per instruction) as CSV, and
# dev/stall-summary.py's reading of it (stalls-FAMILY-rowN.txt).
# BENCH_SET picks bench_kernels' rows of that set (e.g. tf32: the float32 rows); ROWS count the rows
# that launch (a row the traits refuse, "skipped: invalid", launches nothing).
# Usage: [KERNEL=ft_bwd_dkdv] [ROWS="0 6"] [SOURCE=1] [BENCH_SET=tf32] dev/gpu/profile.sh FAMILY
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
family=${1:?usage: dev/gpu/profile.sh FAMILY}
kernel=${KERNEL:-ft_bwd_dkdv}
source dev/gpu/debs.sh
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build --target bench_kernels >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
/tmp/build/bench/bench_kernels 20 "$family" ${BENCH_SET:-} 2>&1 | tee "$OUT/bench-$family.log"
for row in ${ROWS:-0}; do
  pick=(--clock-control none --kernel-name "$kernel" --launch-skip $((4 * row + 3)) --launch-count 1)
  ncu "${pick[@]}" --set full --print-details all /tmp/build/bench/bench_kernels 1 "$family" ${BENCH_SET:-} > "$OUT/ncu-$family-row$row.txt" 2>&1
  if [ "${SOURCE:-0}" = 1 ]; then
    ncu "${pick[@]}" --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
        /tmp/build/bench/bench_kernels 1 "$family" ${BENCH_SET:-} > "$OUT/sass-$family-row$row.csv" 2>&1
    # The page read here too: a call returns eight files, and the CSV is the one most often left out.
    python3 dev/stall-summary.py "$OUT/sass-$family-row$row.csv" 40 > "$OUT/stalls-$family-row$row.txt" 2>&1
  fi
  grep -E "^  [a-z_]+|Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|Registers Per|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Achieved Occupancy" \
      "$OUT/ncu-$family-row$row.txt" | head -30
done
