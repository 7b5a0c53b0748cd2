#!/usr/bin/env bash
# On a GPU machine (README.md here): bench/compare.py for an earlier commit and for this tree, one
# after the other in one call, so a restructuring can be checked for lost speed. The earlier tree
# is unpacked beside this one first (git archive REV | tar -x -C .base).
# Usage: dev/gpu/compare-base.sh [compare.py arguments]; $OUT gets base.csv, base.md,
# head.csv and head.md (the plots stay in /tmp/compare).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/compare/base /tmp/compare/head /tmp/logs
source dev/gpu/debs.sh
build() {   # build SRC DIR: just the library
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > /tmp/logs/build-$(basename "$2").log 2>&1 &&
    cmake --build "$2" --target flashtune_shared >> /tmp/logs/build-$(basename "$2").log 2>&1
}
[ -d /tmp/build ] || build . /tmp/build || { tail -30 /tmp/logs/build-build.log; exit 1; }
build .base /tmp/build-base || { tail -30 /tmp/logs/build-build-base.log; exit 1; }
for side in base head; do
  src=$([ $side = base ] && echo .base || echo .); lib=$([ $side = base ] && echo /tmp/build-base || echo /tmp/build)
  FLASHTUNE_LIBRARY=$lib/runtime/libflashtune.so PYTHONPATH=$src/python \
    python3 $src/bench/compare.py --out /tmp/compare/$side "$@" > /tmp/logs/compare-$side.log 2>&1
  echo "== $side: compare rc=$?"
  cp /tmp/compare/$side/compare.csv "$OUT/$side.csv"; cp /tmp/compare/$side/compare.md "$OUT/$side.md"
  sed -n '/Geometric mean/,$p' "$OUT/$side.md" | head -20
done
