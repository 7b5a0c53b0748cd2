#!/usr/bin/env bash
# On a GPU machine (README.md here): the capture round trip (README, "Tuning what an application
# runs"). Without CAPTURE, the MHA example runs with FLASHTUNE_CAPTURE; with CAPTURE=FILE, that
# capture file's problems are the ones (dev/gpu/underfilled.capture: grids that leave SMs idle).
# `flashtune tune --from-capture` tunes exactly those problems within BUDGET seconds, each search
# starting from the winner the shipped tables serve it with today (the declaration keeps that
# one unless another leads beyond the timing noise: its report's "declared:" lines say where).
# Then bench/capture_served.py times every dense problem as the library serves it, once from the
# shipped tables alone and once with the tuned database, and joins the two (served.md: the tuned
# winner's speed against the shipped choice's). For the MHA example it then runs again on that
# database with a second capture, in which every problem must be served by a winner tuned for it
# (served=tuned). $OUT: capture.txt, tune.log, winners.txt, served.md, served.log (and for the
# example capture2.txt, mha.log, mha2.log).
# Usage: [BUDGET=300] [CAPTURE=dev/gpu/underfilled.capture] dev/gpu/capture-check.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
cmake --build /tmp/build --target flashtune >> "$OUT/build-lib.log" 2>&1 || { tail -40 "$OUT/build-lib.log"; exit 1; }
export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu   # the carried Lua, SQLite, cmocka
rm -f /tmp/cap.capture /tmp/cap2.capture /tmp/capture.db*
if [ -n "${CAPTURE:-}" ]; then
  cp "$CAPTURE" /tmp/cap.capture
else
  FLASHTUNE_CAPTURE=/tmp/cap.capture python3 python/examples/mha.py > "$OUT/mha.log" 2>&1
  echo "mha example, capturing: rc=$?"
fi
cp /tmp/cap.capture "$OUT/capture.txt" 2>/dev/null
timeout 560 /tmp/build/tuner/flashtune tune --db /tmp/capture.db --from-capture /tmp/cap.capture \
  --budget "${BUDGET:-300}" > "$OUT/tune.log" 2>&1
echo "tune --from-capture: rc=$?"
/tmp/build/tuner/flashtune db export --db /tmp/capture.db > "$OUT/winners.txt"
# The same problems timed as served: the shipped tables alone, then the tuned database first; the
# pair twice, in turn, so that a drift of the clocks between processes shows as a difference
# between the two joins.
: > "$OUT/served.log"; : > "$OUT/served.md"
for round in 1 2; do
  rm -f /tmp/served-shipped.json /tmp/served-tuned.json   # never join an earlier round's
  { env -u FLASHTUNE_DB python3 bench/capture_served.py /tmp/cap.capture --out /tmp/served-shipped.json &&
    FLASHTUNE_DB=/tmp/capture.db python3 bench/capture_served.py /tmp/cap.capture --out /tmp/served-tuned.json; } \
    >> "$OUT/served.log" 2>&1
  rc=$?; echo "capture_served, round $round: rc=$rc"
  [ $rc = 0 ] || continue
  { echo "## Round $round"; python3 bench/capture_served.py --join /tmp/served-shipped.json /tmp/served-tuned.json; } \
    >> "$OUT/served.md" 2>&1
done
if [ -z "${CAPTURE:-}" ]; then
  FLASHTUNE_DB=/tmp/capture.db FLASHTUNE_CAPTURE=/tmp/cap2.capture python3 python/examples/mha.py > "$OUT/mha2.log" 2>&1
  echo "mha example, tuned: rc=$?"; cp /tmp/cap2.capture "$OUT/capture2.txt" 2>/dev/null
  problems=$(grep -c "calls=" /tmp/cap2.capture 2>/dev/null); tuned=$(grep -c "served=tuned" /tmp/cap2.capture 2>/dev/null)
  echo "second capture: ${tuned:-0} of ${problems:-0} problems served by a winner tuned for them"
fi
grep -E "^flashtune tune: (winners declared|[0-9]+ steps)|declared:" "$OUT/tune.log" | head -20
grep "problems: tuned against" "$OUT/served.md"
