#!/usr/bin/env bash
# On a GPU machine (README.md here): the ground-truth sweep of one direction (bench/truth/truth.lua,
# every candidate timed) from a fresh database, and its results exported as one CSV: the workload's
# fields, then `flashtune results --format csv`'s columns (parameters, status, median, minimum,
# spread, registers, spills, shared memory). The CSV, the log and the device come back in $OUT.
# Usage: PART=fwd|bwd [SWEEP_LIMIT_S=470] [STRATEGY=guided|halving|prune] dev/gpu/truth.sh
#   STRATEGY: the same workloads searched with that strategy instead (bench/results/<strategy>-...):
#   what it picks, judged against the truth's CSV.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
part=${PART:?PART=fwd or PART=bwd}
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build --target flashtune >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
filter="local part = {}\nfor _, s in ipairs(spaces) do\n  if s.template:sub(1, 3) == \"$part\" then part[#part + 1] = s end\nend\nreturn part"
sed "s/^return spaces\$/$filter/" bench/truth/truth.lua > /tmp/truth-part.lua
name=truth
if [ -n "${STRATEGY:-}" ]; then
  sed -i "s/^    confirm = confirm,\$/    confirm = confirm,\n    strategy = { kind = \"$STRATEGY\" },/" /tmp/truth-part.lua
  grep -q "kind = \"$STRATEGY\"" /tmp/truth-part.lua || { echo "STRATEGY: no place for it in truth.lua"; exit 1; }
  name=$STRATEGY
fi
ft=/tmp/build/tuner/flashtune db=/tmp/truth.db
rm -f $db*
start=$(date +%s)
timeout "${SWEEP_LIMIT_S:-470}" $ft tune --db $db /tmp/truth-part.lua > "$OUT/tune-$name-$part.log" 2>&1; rc=$?
echo "tune rc=$rc after $(( $(date +%s) - start )) s"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
csv="$OUT/$name-$part-$commit.csv"; first=1
# The workload list's columns: id,op,dtype,head_dim,head_dim_v,causal,batch,heads,heads_k,softcap,
# seqlen_q,seqlen_k,... (truth.lua's workloads have no grouping, softcap, window or packing).
$ft results --db $db --format csv | tail -n +2 |
  while IFS=, read -r id op dtype d dv causal b h rest; do
    sq=$(echo "$rest" | cut -d, -f3); sk=$(echo "$rest" | cut -d, -f4)
    w="op=$op dtype=$dtype d=$d causal=$causal b=$b h=$h sq=$sq sk=$sk"
    $ft results --db $db --format csv "$w" > /tmp/w.csv || continue
    [ $first = 1 ] && { echo "op,dtype,head_dim,causal,batch,heads,seqlen,$(head -1 /tmp/w.csv)"; first=0; }
    tail -n +2 /tmp/w.csv | sed "s/^/$op,$dtype,$d,$causal,$b,$h,$sq,/"
  done > "$csv"
echo "exported $(( $(wc -l < "$csv") - 1 )) results to $(basename "$csv")"
grep -v "^\[" "$OUT/tune-$name-$part.log" | tail -${TAIL:-40}
