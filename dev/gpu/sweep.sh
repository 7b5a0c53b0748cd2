#!/usr/bin/env bash
# On a GPU machine (README.md here): build the tuner and run a full sweep from a fresh database,
# timed; the log, the winners in text form and the database come back in $OUT (the database also as
# sweep-results.db.gz, its CUBINs emptied, which comes back where the whole one is too large).
# Usage: [PART=fwd|bwd] dev/gpu/sweep.sh [SPACE.lua]   (default tuner/spaces/default.lua)
#   PART: only the spaces of that direction (their template's prefix), e.g. after a change to
#   one direction's kernels; merge the exported winners with the other direction's.
#   ONLY: only the spaces of those names (e.g. ONLY=bwd_mla or ONLY=fwd_f32,bwd_f32), after a change
#   to their workloads' kernels.
#   GUARD: a winners file (GUARD=db/tuned/h200-sm90.txt) imported first: its winners are re-timed
#   among the candidates and stay declared while they tie with the fastest (db_declare_winners);
#   dev/declare-churn.py then says how many the fastest alone would have replaced, and by how much.
#   BUDGET: the sweep's --budget (BUDGET=450 or 7m: make tune's bound, for one direction's share).
#   UNSEEDED=1: --unseeded, the searches not seeded by the shipped tables (a GPU model without one).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SPACE=${1:-tuner/spaces/default.lua}
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build --target flashtune ${EXTRA_TARGETS:-} >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
if [ -n "${PART:-}${ONLY:-}" ]; then   # the same file, returning only that direction's spaces (or that one)
  keep="(\"${PART:-}\" == \"\" or s.template:sub(1, 3) == \"${PART:-}\")"
  keep="$keep and (\"${ONLY:-}\" == \"\" or string.find(\",${ONLY:-},\", \",\" .. s.name .. \",\", 1, true))"
  filter="local part = {}\nfor _, s in ipairs(spaces) do\n  if $keep then part[#part + 1] = s end\nend\nreturn part"
  sed "s/^return spaces\$/$filter/" \
    "$SPACE" > /tmp/space-part.lua
  grep -q "local part" /tmp/space-part.lua || { echo "PART: $SPACE does not end with 'return spaces'"; exit 1; }
  SPACE=/tmp/space-part.lua
fi
[ -n "${RESUME_DB:-}" ] && cp "$RESUME_DB" /tmp/sweep.db || rm -f /tmp/sweep.db*
if [ -n "${GUARD:-}" ]; then
  /tmp/build/tuner/flashtune db import --db /tmp/sweep.db "$GUARD" || exit 1
  cp /tmp/sweep.db /tmp/guard-before.db
fi
start=$(date +%s)
timeout ${SWEEP_LIMIT_S:-540} /tmp/build/tuner/flashtune tune --db /tmp/sweep.db ${BUDGET:+--budget "$BUDGET"} ${UNSEEDED:+--unseeded} "$SPACE" \
  > "$OUT/tune.log" 2>&1; rc=$?
echo "tune rc=$rc after $(( $(date +%s) - start )) s"
/tmp/build/tuner/flashtune db export --db /tmp/sweep.db > "$OUT/winners.txt"; echo "export rc=$?"
cp /tmp/sweep.db "$OUT/sweep.db" 2>/dev/null
# Every result with the CUBINs emptied (their bulk is why the whole database does not come back;
# the compile facts, registers and spills, stay): what a replay of strategies or of the lookup
# reads (gunzip, then flashtune results or sqlite3). For reading only: never resume or serve from it.
python3 - <<'PY' && gzip -f /tmp/sweep-results.db && cp /tmp/sweep-results.db.gz "$OUT/"
import sqlite3
src, dst = sqlite3.connect("/tmp/sweep.db"), sqlite3.connect("/tmp/sweep-results.db")
src.backup(dst)   # a WAL a killed tuner left included
src.close()
dst.execute("PRAGMA journal_mode=DELETE")
dst.execute("UPDATE binaries SET cubin = zeroblob(0)")
dst.commit()
dst.execute("VACUUM")
dst.close()
PY
[ -n "${GUARD:-}" ] && python3 dev/declare-churn.py /tmp/guard-before.db /tmp/sweep.db > "$OUT/churn.txt" 2>&1
grep -v "^\[" "$OUT/tune.log" | tail -${TAIL:-60}
[ -n "${GUARD:-}" ] && tail -${CHURN_TAIL:-30} "$OUT/churn.txt"
