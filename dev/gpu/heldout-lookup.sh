#!/usr/bin/env bash
# On a GPU machine (README.md here): every candidate of default.lua's spaces timed at the problems
# of a capture file (dev/gpu/heldout-lookup.capture: shapes the shipped table does not hold), so
# that the runtime's lookup can be replayed over them on the CPU: `dev/lookup-replay.py --csv
# OUT.csv tune.log` turns the log into what tests/test_lookup_replay.c reads. Measures only: the
# database stays here, nothing is merged into a table. $OUT: tune.log, winners.txt.
# Usage: [CAPTURE=dev/gpu/heldout-lookup.capture] [SPACE=tuner/spaces/default.lua] dev/gpu/heldout-lookup.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/debs.sh
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > /tmp/build.log 2>&1 &&
  cmake --build /tmp/build --target flashtune >> /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
rm -f /tmp/heldout.db*
start=$(date +%s)
timeout ${SWEEP_LIMIT_S:-480} /tmp/build/tuner/flashtune tune --db /tmp/heldout.db \
  --from-capture "${CAPTURE:-dev/gpu/heldout-lookup.capture}" "${SPACE:-tuner/spaces/default.lua}" > "$OUT/tune.log" 2>&1
echo "tune rc=$? after $(( $(date +%s) - start )) s"
/tmp/build/tuner/flashtune db export --db /tmp/heldout.db > "$OUT/winners.txt"
grep -v "^\[" "$OUT/tune.log" | tail -${TAIL:-40}
