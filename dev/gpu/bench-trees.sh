#!/usr/bin/env bash
# On a GPU machine (README.md here): several variants of a template change in one call. Each tree
# named (unpacked beside this one: git archive BRANCH | tar -x -C .v1; carry them) is built, its
# test_attn_gpu run when TESTS=1 (a variant wrong on the GPU is left out of the bench), then
# bench_kernels of this tree and of every variant, one after the other on one machine (free of
# the 3-10 % spread between calls). This tree's bench/bench_kernels.c is used for all, so the rows
# match. TEST_FILTER: a glob of test_attn_gpu's case names (its FT_TEST_FILTER), so that several
# variants' tests fit one call.
# Usage: [REPS=20] [BENCH_SET=persist] [TESTS=1] [TEST_FILTER='bf16 persistent'] \
#        dev/gpu/bench-trees.sh FAMILY TREE...
# $OUT gets one file of rows a tree (NAME.txt), the tests' tails (NAME-tests.log) and table.txt:
# each row's TFLOP/s in this tree, then each variant's and its ratio to this tree's.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/logs
[ $# -ge 2 ] || { echo "usage: bench-trees.sh FAMILY TREE..."; exit 2; }
family=$1; shift
for t in "$@"; do [ -d "$t" ] || { echo "bench-trees.sh: no $t/ (git archive BRANCH | tar -x -C $t)"; exit 2; }; done
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"
date -u >> "$OUT/device.txt"
trees=(.)
for t in "$@"; do
  cp bench/bench_kernels.c "$t/bench/bench_kernels.c"
  trees+=("$t")
done
name() { [ "$1" = . ] && echo head || basename "$1" | sed 's/^\.//'; }
ok=()
for t in "${trees[@]}"; do
  n=$(name "$t")
  targets=(--target bench_kernels)
  [ "${TESTS:-0}" = 1 ] && [ "$t" != . ] && targets+=(--target test_attn_gpu)
  log=/tmp/logs/build-$n.log
  if ! { cmake -S "$t" -B "/tmp/trees-$n" -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release \
           > "$log" 2>&1 &&
         cmake --build "/tmp/trees-$n" "${targets[@]}" >> "$log" 2>&1; }; then
    echo "== $n: build failed"; tail -20 "$log"; continue
  fi
  if [ "${TESTS:-0}" = 1 ] && [ "$t" != . ]; then
    (cd "/tmp/trees-$n" && { [ -z "${TEST_FILTER:-}" ] || export FT_TEST_FILTER=$TEST_FILTER; } &&
       timeout 400 ./tests/test_attn_gpu) > "/tmp/logs/tests-$n.log" 2>&1
    rc=$?
    tail -15 "/tmp/logs/tests-$n.log" > "$OUT/$n-tests.log"
    echo "== $n: test_attn_gpu rc=$rc"
    [ $rc -eq 0 ] || continue
  fi
  ok+=("$t")
  : > "$OUT/$n.txt"
done
[ "${ok[0]:-}" = . ] || { echo "bench-trees.sh: this tree did not build"; exit 1; }
for t in "${ok[@]}"; do
  n=$(name "$t")
  timeout 300 "/tmp/trees-$n/bench/bench_kernels" "${REPS:-20}" "$family" ${BENCH_SET:-} | grep -v "^bench_kernels:" \
    >> "$OUT/$n.txt"
done
# One line a row: its fields up to the registers, then each tree's TFLOP/s (a variant's with its
# ratio to this tree's).
files=(); for t in "${ok[@]}"; do files+=("$OUT/$(name "$t").txt"); done
header="row"; for t in "${ok[@]}"; do header="$header | $(name "$t")"; done
echo "$header" | tee "$OUT/table.txt"
paste -d'|' "${files[@]}" | awk -F'|' '
  $1 ~ /^family/ { next }
  { n = split($1, b, " ")   # ... regs med_ms min_ms TFLOP/s order
    key = ""; for (i = 1; i < n - 4; i++) key = key " " b[i]
    line = sprintf("%s %s  %8.1f", key, b[n], b[n-1])
    for (f = 2; f <= NF; f++) {
      m = split($f, v, " ")
      line = line sprintf("  %8.1f %5.3f", v[m-1], b[n-1] > 0 ? v[m-1] / b[n-1] : 0) }
    print line }' | tee -a "$OUT/table.txt"
