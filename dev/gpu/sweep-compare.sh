#!/usr/bin/env bash
# On a GPU machine (README.md here), one call after a kernel change to one direction: sweep that
# direction's spaces (sweep.sh with PART), put its winners into this GPU's table (TUNED: by
# default db/tuned/h200-sm90.txt on an H200, else db/tuned/h100-sm90.txt) beside the other
# direction's (merge-winners.sh; merge $OUT/winners.txt into the same file at home the same way),
# then run compare.sh on them. Keeps $OUT to the 8 files a device call returns: device.txt,
# tune.log, winners.txt and compare's csv, extra csv, json, md and log.
# Usage: PART=fwd|bwd [TUNED=db/tuned/...] [SWEEP_LIMIT_S=380] [COMPARE_LIMIT_S=330]
#        [COMPARE_ARGS=...] [FLASHTUNE_COMMIT=abc1234] dev/gpu/sweep-compare.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
: "${PART:?PART=fwd or PART=bwd: the direction whose winners are renewed}"
SWEEP_LIMIT_S=${SWEEP_LIMIT_S:-380} bash dev/gpu/sweep.sh > "$OUT/sweep.out" 2>&1
grep -E "tune rc|export rc" "$OUT/sweep.out"
rm -f "$OUT/sweep.db" "$OUT/build.log" "$OUT/sweep.out"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) TUNED=${TUNED:-db/tuned/h200-sm90.txt} ;;
  *) TUNED=${TUNED:-db/tuned/h100-sm90.txt} ;;
esac
bash dev/gpu/merge-winners.sh "$PART" "$OUT/winners.txt" "$TUNED" || exit 1
COMPARE_LIMIT_S=${COMPARE_LIMIT_S:-330} COMPARE_ARGS=${COMPARE_ARGS:---dtypes bf16} bash dev/gpu/compare.sh
rm -f "$OUT"/*.png "$OUT/build-lib.log"
ls "$OUT"
