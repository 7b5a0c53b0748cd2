#!/usr/bin/env bash
# On a GPU machine (README.md here): winners tables timed against each other on this GPU in one
# sweep, each workload's kernels in rotation (dev/duel.py): a fresh sweep's winners against the
# shipped table's, or an H200's own table against the H100's. The first file is the base; every
# workload of it is timed. With GUARD (the GPU's shipped table) the sweep declares, per workload,
# the stored winner unless another file's kernel leads it beyond the timing noise; $OUT/winners.txt
# is then that table renewed (dev/gpu/merge-winners.sh puts it beside the other direction's).
# Usage: [GUARD=db/tuned/h200-sm90.txt] [SWEEP_LIMIT_S=540] dev/gpu/duel.sh NAME=FILE NAME=FILE ...
# $OUT: duel.md (per workload and the geometric means), tune.log, winners.txt, churn.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ $# -ge 2 ] || { echo "usage: dev/gpu/duel.sh NAME=FILE NAME=FILE ..."; exit 2; }
source dev/gpu/debs.sh
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build --target flashtune >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
python3 dev/duel.py space --flashtune /tmp/build/tuner/flashtune "$@" > /tmp/duel.lua || exit 1
bash dev/gpu/sweep.sh /tmp/duel.lua
python3 dev/duel.py report --flashtune /tmp/build/tuner/flashtune /tmp/sweep.db "$@" > "$OUT/duel.md"
rm -f "$OUT/sweep.db" "$OUT/build.log"
tail -8 "$OUT/duel.md"
