#!/usr/bin/env bash
# On a GPU machine (README.md here): unpack the Debian packages in .deps/debs when there are any,
# build, run the gpu-labelled tests and the kernel benchmark. Logs go to $OUT.
# Usage: [TARGETS="test_attn_gpu bench_kernels"] dev/gpu/check.sh [ctest -R regex]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
git rev-parse HEAD 2>/dev/null | tee -a "$OUT/device.txt"; date -u | tee -a "$OUT/device.txt"
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build ${TARGETS:+--target $TARGETS} >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
filter=${1:-}
(cd /tmp/build && ctest --output-on-failure -L gpu ${filter:+-R "$filter"} 2>&1) > "$OUT/gpu-tests.log"
grep -E "FAIL|rel .*FAIL|build failed|failed|Passed|Failed|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" | tail -60
/tmp/build/bench/bench_kernels 20 2>&1 | tee "$OUT/bench.log"
