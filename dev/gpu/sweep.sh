#!/usr/bin/env bash
# On a GPU machine (README.md here): build the tuner and run a full sweep from a fresh database,
# timed; the log, the winners in text form and the database come back in $OUT.
# Usage: dev/gpu/sweep.sh [SPACE.lua]   (default tuner/spaces/default.lua)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SPACE=${1:-tuner/spaces/default.lua}
TARGETS="flashtune ${EXTRA_TARGETS:-}" bash dev/gpu/check.sh '^$' > "$OUT/check.log" 2>&1
export LD_LIBRARY_PATH=/tmp/prefix/usr/lib/x86_64-linux-gnu   # the carried Lua, SQLite, cmocka
[ -n "${RESUME_DB:-}" ] && cp "$RESUME_DB" /tmp/sweep.db || rm -f /tmp/sweep.db*
start=$(date +%s)
timeout ${SWEEP_LIMIT_S:-540} /tmp/build/tuner/flashtune tune --db /tmp/sweep.db "$SPACE" > "$OUT/tune.log" 2>&1; rc=$?
echo "tune rc=$rc after $(( $(date +%s) - start )) s"
/tmp/build/tuner/flashtune db export --db /tmp/sweep.db > "$OUT/winners.txt"; echo "export rc=$?"
cp /tmp/sweep.db "$OUT/sweep.db" 2>/dev/null
grep -v "^\[" "$OUT/tune.log" | tail -120
