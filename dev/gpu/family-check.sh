#!/usr/bin/env bash
# On a GPU machine (README.md here), one call for a change to one family: build, the GPU tests,
# compute-sanitizer (racecheck and memcheck, or TOOLS) on chosen test_attn_gpu cases, and the
# family's bench_kernels rows. Logs in $OUT; a short summary printed last.
# Usage: dev/gpu/family-check.sh FAMILY ['case filter' ...]   (filters: FT_TEST_FILTER patterns)
# Env: TESTS (ctest -R regex, default "test_attn_gpu|test_runtime_gpu"), REPS (bench, default 10),
# BENCH_TIMEOUT (seconds, default 150), BENCH_SET (bench_kernels' rows of that set only, e.g. "order"),
# TOOLS (default "racecheck memcheck"; synccheck too).
# TESTS=none or REPS=0 leave the tests or the bench out.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
family=${1:?usage: family-check.sh FAMILY [filter ...]}; shift
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
tests_rc=skipped; : > "$OUT/gpu-tests.log"; : > "$OUT/bench.log"
[ "${TESTS:-}" = none ] || {
  (cd /tmp/build && timeout 300 ctest --output-on-failure -L gpu -R "${TESTS:-test_attn_gpu|test_runtime_gpu}" 2>&1) \
    > "$OUT/gpu-tests.log"; tests_rc=$?; }
[ "${REPS:-10}" = 0 ] ||
  timeout "${BENCH_TIMEOUT:-150}" stdbuf -oL /tmp/build/bench/bench_kernels "${REPS:-10}" "$family" ${BENCH_SET:-} > "$OUT/bench.log" 2>&1
# One case at a time: test_attn_gpu builds only the kernels of the cases FT_TEST_FILTER selects.
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
: > "$OUT/sanitizer.log"
sanitized=()
for f in "$@"; do
  for tool in ${TOOLS:-racecheck memcheck}; do
    echo "== $tool '$f'" >> "$OUT/sanitizer.log"
    FT_TEST_FILTER="$f" timeout 120 "$CS" --tool $tool /tmp/build/tests/test_attn_gpu >> "$OUT/sanitizer.log" 2>&1
    sanitized+=("$tool '$f' rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)")
  done
done
echo "== GPU tests (rc=$tests_rc)"
grep -E "FAIL|failed|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" | tail -20
echo "== sanitizers"; printf '%s\n' "${sanitized[@]}"
echo "== bench_kernels $family"; cat "$OUT/bench.log"
