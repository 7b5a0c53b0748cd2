#!/usr/bin/env bash
# On a GPU machine (README.md here): the capture round trip on the MHA example (README, "Tuning
# what an application runs"). The example runs with FLASHTUNE_CAPTURE; `flashtune tune
# --from-capture` tunes exactly its problems within BUDGET seconds, each search starting from the
# winner the shipped tables serve it with today (the declaration keeps that one unless another
# leads beyond the timing noise: its report's "declared:" lines say where); the example runs again
# on that database with a second capture, in which every problem must be served by a winner tuned
# for it (served=tuned). $OUT: capture.txt, capture2.txt, tune.log, winners.txt, mha.log, mha2.log.
# Usage: [BUDGET=300] dev/gpu/capture-check.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
cmake --build /tmp/build --target flashtune >> "$OUT/build-lib.log" 2>&1 || { tail -40 "$OUT/build-lib.log"; exit 1; }
export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu   # the carried Lua, SQLite, cmocka
rm -f /tmp/mha.capture* /tmp/mha2.capture* /tmp/capture.db*
FLASHTUNE_CAPTURE=/tmp/mha.capture python3 python/examples/mha.py > "$OUT/mha.log" 2>&1
echo "mha example, capturing: rc=$?"; cp /tmp/mha.capture "$OUT/capture.txt" 2>/dev/null
timeout 560 /tmp/build/tuner/flashtune tune --db /tmp/capture.db --from-capture /tmp/mha.capture \
  --budget "${BUDGET:-300}" > "$OUT/tune.log" 2>&1
echo "tune --from-capture: rc=$?"
/tmp/build/tuner/flashtune db export --db /tmp/capture.db > "$OUT/winners.txt"
FLASHTUNE_DB=/tmp/capture.db FLASHTUNE_CAPTURE=/tmp/mha2.capture python3 python/examples/mha.py > "$OUT/mha2.log" 2>&1
echo "mha example, tuned: rc=$?"; cp /tmp/mha2.capture "$OUT/capture2.txt" 2>/dev/null
problems=$(grep -c "calls=" /tmp/mha2.capture 2>/dev/null); tuned=$(grep -c "served=tuned" /tmp/mha2.capture 2>/dev/null)
echo "second capture: ${tuned:-0} of ${problems:-0} problems served by a winner tuned for them"
grep -E "^flashtune tune: (winners declared|[0-9]+ steps)|declared:" "$OUT/tune.log" | head -20
