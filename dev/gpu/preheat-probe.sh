#!/usr/bin/env bash
# On a GPU machine: the sweep's harness (dev/gpu/harness-probe.lua: the H200's forward winners at
# head dims 96 and 128, N 4096, persistent and not) timed by an earlier tree's flashtune (.base/,
# carry it) and by this one's, a pause before each, then test_tune_gpu: whether the warm-up after
# a pause (tune_warmup_ms) times the first candidate at the clocks the rest see. Per candidate:
# median and least ms, spread, least SM clock, clock event reasons; each sweep's wall time.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -d .base ] || { echo "preheat-probe.sh: no .base/ (git archive REV | tar -x -C .base)"; exit 2; }
source dev/gpu/debs.sh
cfg="-G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release"
{ cmake -S . -B /tmp/build $cfg && cmake --build /tmp/build --target flashtune test_tune_gpu; } > $OUT/build.log 2>&1 ||
  tail -20 $OUT/build.log
{ cmake -S .base -B /tmp/build-base $cfg && cmake --build /tmp/build-base --target flashtune; } \
  > $OUT/build-base.log 2>&1 || tail -20 $OUT/build-base.log
for side in base head; do
  B=/tmp/build; [ $side = base ] && B=/tmp/build-base
  rm -f /tmp/hp-$side.db*; sleep 3
  s=$(date +%s.%N)
  timeout 200 $B/tuner/flashtune tune --db /tmp/hp-$side.db dev/gpu/harness-probe.lua > $OUT/probe-$side.log 2>&1
  rc=$?; e=$(date +%s.%N)
  echo "== $side: rc=$rc $(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f", e - s }') s"
  for d in 96 128; do for c in 0 1; do
    /tmp/build/tuner/flashtune results --db /tmp/hp-$side.db --format csv \
      "op=fwd dtype=bf16 d=$d causal=$c b=4 h=16 sq=4096 sk=4096" 2>&1 |
      awk -F, -v w="d$d c$c" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print w, "PERSISTENT=" $c["PERSISTENT"], $c["median_ms"], $c["min_ms"], $c["spread"], $c["sm_mhz"],
          $c["clock_events"] }'
  done; done
done
(cd /tmp/build && timeout 300 ctest --output-on-failure -L gpu -R test_tune_gpu) > $OUT/tune-gpu.log 2>&1
echo "tune_gpu rc=$?"; grep -E "tests passed|FAIL|PASSED|FAILED" $OUT/tune-gpu.log | tail -5
