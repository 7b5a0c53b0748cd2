#!/usr/bin/env bash
# Replaces one direction's lines of a winners file (db/tuned/h100-sm90.txt) with those of a
# sweep's export, keeping the header and the other direction's lines: after PART=fwd (or bwd)
# dev/gpu/sweep.sh, on the GPU machine or at home with the winners.txt that came back.
# Usage: dev/gpu/merge-winners.sh fwd|bwd SWEEP_WINNERS.txt TUNED.txt
set -euo pipefail
part=${1:?usage: merge-winners.sh fwd|bwd SWEEP_WINNERS.txt TUNED.txt}; new=${2:?}; tuned=${3:?}
case $part in fwd) other=bwd ;; bwd) other=fwd ;; *) echo "merge-winners.sh: '$part' is not fwd or bwd" >&2; exit 2 ;; esac
count=$(grep -c "^device=.* op=$part " "$new" || true)
[ "$count" -gt 0 ] || { echo "merge-winners.sh: $new has no op=$part winners" >&2; exit 1; }
tmp=$(mktemp)
{ grep -v "^device=" "$tuned"; grep "^device=.* op=$part " "$new"; grep "^device=.* op=$other " "$tuned" || true; } > "$tmp"
mv "$tmp" "$tuned"
echo "merge-winners.sh: $count op=$part winners from $new into $tuned"
