#!/usr/bin/env bash
# On a GPU machine: Nsight Compute (clocks as found, the full section set) on the longest kernel
# of one problem's forward and backward passes, flashtune's and a peer's at the same shape, side
# by side: where the peer's backward gains on ours is in the difference of the two reports.
# bench/one_pass.py runs the passes; a first, light ncu pass lists every launch with its
# duration, and the longest launch (the backward's main kernel) is then profiled by its index;
# its details and its SASS page with stall samples (sass-*.csv) come back.
# The peer: FlashAttention-4 where its parts were installed on this machine (/tmp/fa4site),
# else cuDNN. Logs in $OUT; the reports' headline figures printed last.
# Usage: [SHAPE="--batch 4 --heads 16 --seqlen 4096 --head-dim 128 --causal"] [PEER=fa4|cudnn]
#        dev/gpu/profile-peer.sh
# The forward's kernel instead: SHAPE="... --forward-only" (one_pass.py runs no backward).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
peer=${PEER:-fa4}
[ "$peer" = fa4 ] && [ "$FA4_STAGED" = 0 ] && peer=cudnn
shape=${SHAPE:---batch 4 --heads 16 --seqlen 4096 --head-dim 128 --causal}
for impl in flashtune "$peer"; do
  ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    python3 bench/one_pass.py --impl "$impl" $shape > "$OUT/launches-$impl.csv" 2> "$OUT/launches-$impl.err"
  # The longest launch among those of the last pass (the passes repeat; the first compiles).
  pick=$(python3 - "$OUT/launches-$impl.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r and "Metric Value" in r)
cols = rows[head]
data = [dict(zip(cols, r)) for r in rows[head + 1:] if len(r) == len(cols)]
scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}   # ncu scales each row's unit
durations = [(float(d["Metric Value"].replace(",", "")) * scale.get(d["Metric Unit"], 1.0), int(d["ID"]),
              d["Kernel Name"]) for d in data]
longest = max(durations)
last = max(i for t, i, name in durations if name == longest[2])
print(last, longest[2][:80].replace(" ", "_"))
PY
)
  [ -n "$pick" ] || { echo "$impl: no launch found (see $OUT/launches-$impl.*)"; continue; }
  set -- $pick
  echo "$impl: launch $1, $2"
  ncu --clock-control none --launch-skip "$1" --launch-count 1 --set full --import-source no -f -o /tmp/ncu-$impl \
    python3 bench/one_pass.py --impl "$impl" $shape > "$OUT/ncu-$impl.log" 2>&1
  ncu -i /tmp/ncu-$impl.ncu-rep --print-details all > "$OUT/ncu-$impl.txt" 2>&1
  # The per-instruction page (SASS, stall samples) as CSV: where each kernel's warps wait.
  ncu -i /tmp/ncu-$impl.ncu-rep --page source --csv --print-source sass > "$OUT/sass-$impl.csv" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput|Registers Per|Pipe Tensor Cycles|Issue Slots Busy|Shared Memory Configuration Size|Achieved Occupancy|Warp Cycles Per Issued" \
    "$OUT/ncu-$impl.txt" | head -14
done
