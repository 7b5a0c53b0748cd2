#!/usr/bin/env bash
# On a GPU machine (README.md here): bench/varlen.py with an earlier tree's libflashtune and with
# this one's, in turn on one machine, for each batch in VARLEN_SETS: a change to how packed
# batches run, measured against what it replaces (FlashAttention-4 beside them where staged,
# build-lib.sh). The earlier tree is unpacked beside this one first (git archive REV | tar -x -C
# .base; carry it).
# Usage: [VARLEN_SETS='default;--docs 16:64:4096'] [VARLEN_ARGS=...] [HEAD_DB=FILE] dev/gpu/varlen-base.sh
# HEAD_DB: a database the head side reads first (FLASHTUNE_DB), e.g. a sweep's of tuner/spaces/kinds.lua
# (GUARD=... dev/gpu/sweep.sh), so that winners tuned on this tree serve it.
# $OUT gets base-N.md and head-N.md for the N-th set, and the logs; the tables are printed last.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/varlen /tmp/logs
[ -d .base ] || { echo "varlen-base.sh: no .base/ (git archive REV | tar -x -C .base)"; exit 2; }
source dev/gpu/build-lib.sh
cmake -S .base -B /tmp/build-base -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > /tmp/logs/build-base.log 2>&1 &&
  cmake --build /tmp/build-base --target flashtune_shared >> /tmp/logs/build-base.log 2>&1 || { tail -30 /tmp/logs/build-base.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
IFS=';' read -ra sets <<< "${VARLEN_SETS:-default;--docs 16:64:4096}"
n=0
for set in "${sets[@]}"; do
  n=$((n + 1)); [ "$set" = default ] && set=""
  for side in base head; do   # in turn for each batch, so drifting clocks hit both
    src=$([ $side = base ] && echo .base || echo .); lib=$([ $side = base ] && echo /tmp/build-base || echo /tmp/build)
    # (FA4 timed on the head side only: the same peer twice would only cost time; each side runs
    # its own tree's varlen.py, which puts its own tree's package first on Python's path)
    only=$([ $side = base ] && echo --flashtune-only || true)
    db=$([ $side = head ] && echo "${HEAD_DB:-}" || true)
    FLASHTUNE_LIBRARY=$lib/runtime/libflashtune.so PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} FLASHTUNE_DB=$db \
      python3 $src/bench/varlen.py --out /tmp/varlen/$side-$n $set $only ${VARLEN_ARGS:-} > /tmp/logs/varlen-$side-$n.log 2>&1
    echo "== $side, batch $n (${set:-default}): varlen.py rc=$?"
    cp /tmp/varlen/$side-$n/varlen.md "$OUT/$side-$n.md" 2>/dev/null || tail -20 /tmp/logs/varlen-$side-$n.log
  done
done
tar -czf "$OUT/logs.tar.gz" -C /tmp logs 2>/dev/null
for f in "$OUT"/base-*.md "$OUT"/head-*.md; do [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }; done
