#!/usr/bin/env bash
# On a GPU machine (README.md here), one call for a change to one family: build, the GPU tests,
# compute-sanitizer (racecheck and memcheck, or TOOLS) on chosen test_attn_gpu cases, and the
# family's bench_kernels rows. Logs in $OUT; a short summary printed last.
# Usage: dev/gpu/family-check.sh FAMILY ['case filter' ...]   (filters: FT_TEST_FILTER patterns)
# Env: TESTS (ctest -R regex, default "test_attn_gpu|test_runtime_gpu"), REPS (bench, default 10),
# BENCH_TIMEOUT (seconds, default 150), TOOLS (default "racecheck memcheck"; synccheck too).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
family=${1:?usage: family-check.sh FAMILY [filter ...]}; shift
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# The sanitizers run beside the GPU tests and each other (none is timed; each test_attn_gpu
# process compiles every kernel before its cases run, so one after the other they would take
# most of a call); the bench runs alone afterwards.
sanitize() {   # filter tool index
  FT_TEST_FILTER="$1" timeout 240 "$CS" --tool "$2" /tmp/build/tests/test_attn_gpu > "/tmp/sanitize-$2-$3.log" 2>&1
  echo "$2 '$1' rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/sanitize-$2-$3.log" | tail -1)" \
    > "/tmp/sanitized-$2-$3.txt"
}
rm -f /tmp/sanitize-* /tmp/sanitized-*; sanitizing=()
n=0
for f in "$@"; do
  n=$((n + 1))
  for tool in ${TOOLS:-racecheck memcheck}; do sanitize "$f" "$tool" "$n" & sanitizing+=($!); done
done
(cd /tmp/build && timeout 300 ctest --output-on-failure -L gpu -R "${TESTS:-test_attn_gpu|test_runtime_gpu}" 2>&1) \
  > "$OUT/gpu-tests.log"; tests_rc=$?
wait "${sanitizing[@]}"
cat /tmp/sanitize-*.log > "$OUT/sanitizer.log" 2>/dev/null; cat /tmp/sanitized-*.txt > "$OUT/sanitized.txt" 2>/dev/null
timeout "${BENCH_TIMEOUT:-150}" /tmp/build/bench/bench_kernels "${REPS:-10}" "$family" > "$OUT/bench.log" 2>&1
echo "== GPU tests (rc=$tests_rc)"
grep -E "FAIL|failed|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" | tail -20
echo "== sanitizers"; cat "$OUT/sanitized.txt"
echo "== bench_kernels $family"; cat "$OUT/bench.log"
