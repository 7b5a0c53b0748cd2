#!/usr/bin/env bash
# Whether a template edit left a configuration's machine code as it was, without a GPU: the SASS
# of one configuration from an earlier tree and from this one (dev/sass.sh, NVRTC then nvdisasm),
# compared instruction by instruction with the addresses taken out. Prints "identical" or how
# many lines differ and the first of them; exit status 0 identical, 1 different, 2 usage.
# (Compare instruction lines: a filter that drops lines starting with an address comment drops
# every instruction, and two such listings always match; notes/fp32.md, thirty-first session.)
# The earlier tree is REV unpacked and its flashtune built once under /tmp/sass-diff-SHA (reused
# when its stamp names the same commit), or FLASHTUNE_BASE names a flashtune binary built from it.
# This tree's side is build/tuner/flashtune, rebuilt first (the templates are compiled into it: an
# edit not built in would compare as identical), or FLASHTUNE. nvdisasm prints no control bits, so
# "identical" says nothing of stall counts or scoreboards.
# Usage: dev/sass-diff.sh REV FAMILY [PARAM=VALUE ...]      e.g. dev/sass-diff.sh HEAD~1 bwd_wgmma_f32
#        FLASHTUNE_BASE=/path/flashtune dev/sass-diff.sh - FAMILY [PARAM=VALUE ...]
set -euo pipefail
usage="usage: dev/sass-diff.sh REV|- FAMILY [PARAM=VALUE ...]"
rev=${1:?$usage}; family=${2:?$usage}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
base=${FLASHTUNE_BASE:-}
if [ -z "$base" ]; then
  [ "$rev" != - ] || { echo "dev/sass-diff.sh: REV is '-' but FLASHTUNE_BASE is not set" >&2; exit 2; }
  sha=$(git -C "$root" rev-parse --verify "$rev^{commit}") || exit 2
  tree=/tmp/sass-diff-${sha:0:12}
  if [ ! -x "$tree/build/tuner/flashtune" ] || [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$sha" ]; then
    rm -rf "$tree" && mkdir -p "$tree"
    git -C "$root" archive "$sha" | tar -x -C "$tree"
    [ -d "$root/.deps" ] && ln -s "$root/.deps" "$tree/.deps"
    cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release > "$tree/build.log" 2>&1 &&
      cmake --build "$tree/build" --target flashtune -j2 >> "$tree/build.log" 2>&1 ||
      { tail -20 "$tree/build.log"; exit 2; }
    echo "$sha" > "$tree/.stamp"
  fi
  base=$tree/build/tuner/flashtune
fi
if [ -z "${FLASHTUNE:-}" ]; then   # this tree's templates, built in
  cmake --build "$root/build" --target flashtune > /tmp/sass-diff-build.log 2>&1 ||
    { tail -20 /tmp/sass-diff-build.log; echo "dev/sass-diff.sh: building $root/build failed" >&2; exit 2; }
fi
listing() {   # FLASHTUNE PARAMS...: the instruction lines of that build's SASS, addresses taken out
  local ft=$1 out
  shift
  out=$(mktemp /tmp/sass-diff.XXXXXX)
  FLASHTUNE=$ft SASS_OUT=$out "$root/dev/sass.sh" "$family" "$@" > "$out.log" 2>&1 ||
    { tail -5 "$out.log" >&2; echo "dev/sass-diff.sh: dev/sass.sh failed with FLASHTUNE=$ft" >&2
      rm -f "$out" "$out.log"; return 2; }
  grep -E '/\*[0-9a-f]+\*/' "$out" | sed -E 's@/\*[0-9a-f]+\*/@@g; s/[[:space:]]+/ /g; s/ $//'
  rm -f "$out" "$out.log"
}
old=$(mktemp /tmp/sass-diff-old.XXXXXX); new=$(mktemp /tmp/sass-diff-new.XXXXXX)
trap 'rm -f "$old" "$new"' EXIT
listing "$base" "$@" > "$old" || exit 2
listing "${FLASHTUNE:-$root/build/tuner/flashtune}" "$@" > "$new" || exit 2
[ -s "$old" ] && [ -s "$new" ] || { echo "dev/sass-diff.sh: an empty listing" >&2; exit 2; }
if cmp -s "$old" "$new"; then
  echo "identical: $(wc -l < "$new") instructions"
  exit 0
fi
changed=$(diff "$old" "$new" | grep -c '^[<>]' || true)   # diff's status 1 would end the script (pipefail)
echo "different: $(wc -l < "$old") instructions before, $(wc -l < "$new") now; $changed lines differ"
diff "$old" "$new" | head -20
exit 1
