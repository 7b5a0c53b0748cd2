#!/usr/bin/env bash
# On a GPU machine, after a build in /tmp/build (family-check.sh makes one): the sweep's harness
# on the product orders (order-probe.lua), the values listed first one way then the other, so a
# bias of the order of measurement shows; then the same rows in bench_kernels, with a zero L and
# with L of real size (L_VALUES="" leaves them out). Logs in $OUT; the candidates' times printed last.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=/tmp/build
source dev/gpu/debs.sh
sed 's/DQ_FIRST = {0, 1}, DV_EARLY = {0, 1}/DQ_FIRST = {1, 0}, DV_EARLY = {1, 0}/' dev/gpu/order-probe.lua > /tmp/order-probe-rev.lua
for run in fwd:dev/gpu/order-probe.lua rev:/tmp/order-probe-rev.lua; do
  name=${run%%:*}; space=${run#*:}; rm -f /tmp/probe-$name.db*
  timeout 200 $B/tuner/flashtune tune --db /tmp/probe-$name.db "$space" > "$OUT/probe-$name.log" 2>&1
  echo "== sweep harness, listed $name (rc=$?)"
  for c in 0 1; do
    echo "causal=$c"
    $B/tuner/flashtune results --db /tmp/probe-$name.db --sort DQ_FIRST --format csv \
      "op=bwd dtype=bf16 d=128 causal=$c b=4 h=16 sq=4096 sk=4096" 2>&1 |
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
               { print $c["DQ_FIRST"], $c["DV_EARLY"], $c["median_ms"], $c["min_ms"], $c["spread"], $c["tflops"] }' 
  done
done
for L in ${L_VALUES-zero typical}; do
  FT_BENCH_L=$L timeout 150 $B/bench/bench_kernels ${REPS:-20} bwd_wgmma order > "$OUT/bench-order-L$L.log" 2>&1
  echo "== bench_kernels order rows, L $L (rc=$?)"; tail -16 "$OUT/bench-order-L$L.log"
done
