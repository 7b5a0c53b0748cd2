#!/usr/bin/env bash
# The README's commands that need no GPU work as written: every line of its shell blocks that
# runs the built command (build/tuner/flashtune ...), from this build instead of build/.
# (The install and pkg-config lines are tests/runtime/install_test.sh's.)
# Usage: check_readme_commands.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
mapfile -t lines < <(sed -n '/^```sh$/,/^```$/p' "$src/README.md" | grep '^build/tuner/flashtune ' || true)
[ ${#lines[@]} -gt 0 ] || { echo "FAIL: no build/tuner/flashtune line in the README's shell blocks"; exit 1; }
tmp=$(mktemp -d /tmp/ft_readme.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for line in "${lines[@]}"; do
    echo "README: $line"
    (cd "$tmp" && eval "$build/${line#build/}") > "$tmp/out.log" 2>&1 ||
        { cat "$tmp/out.log"; echo "FAIL: $line"; exit 1; }
    tail -2 "$tmp/out.log"
done
echo "README commands: ok"
