#!/usr/bin/env bash
# Puts a sweep's winners of one direction into a winners file (db/tuned/h100-sm90.txt): each
# workload the sweep measured gets the sweep's line; the file's other lines of that direction
# (workloads the sweep did not measure: another space's kinds, a sweep cut short) and of the
# other direction stay. After PART=fwd (or bwd) dev/gpu/sweep.sh, on the GPU machine or at home
# with the winners.txt that came back.
# Usage: dev/gpu/merge-winners.sh fwd|bwd SWEEP_WINNERS.txt TUNED.txt
set -euo pipefail
part=${1:?usage: merge-winners.sh fwd|bwd SWEEP_WINNERS.txt TUNED.txt}; new=${2:?}; tuned=${3:?}
case $part in fwd) other=bwd ;; bwd) other=fwd ;; *) echo "merge-winners.sh: '$part' is not fwd or bwd" >&2; exit 2 ;; esac
count=$(grep -c "^device=.* op=$part " "$new" || true)
[ "$count" -gt 0 ] || { echo "merge-winners.sh: $new has no op=$part winners" >&2; exit 1; }
tmp=$(mktemp)
# A line's workload: the device and the problem, everything before " family=".
{ grep -v "^device=" "$tuned"; grep "^device=.* op=$part " "$new"
  awk -v part=" op=$part " 'function key(l) { return substr(l, 1, index(l, " family=") - 1) }
       FNR == NR { if (index($0, part)) seen[key($0)] = 1; next }
       /^device=/ && index($0, part) && !(key($0) in seen)' "$new" "$tuned"
  grep "^device=.* op=$other " "$tuned" || true; } > "$tmp"
kept=$(( $(grep -c "^device=.* op=$part " "$tmp") - count ))
mv "$tmp" "$tuned"
echo "merge-winners.sh: $count op=$part winners from $new into $tuned ($kept of its others kept)"
