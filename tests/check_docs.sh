#!/usr/bin/env bash
# The documentation is true for a clone. In every tracked Markdown file, each relative link must
# lead to a file or folder of the tree. In the current documentation (README.md, CHANGELOG.md,
# docs/, bench/RESULTS.md, templates/README.md, dev/**/README.md; notes/ keep their history), also:
# no path outside the repository (shared/...), no words only the team knows (the lent H100, a
# lease name, "issue 12"), every *.md named exists, and every repository path named exists
# (outside the dated records: bench/RESULTS.md and CHANGELOG.md may name files of their day).
# And there is a LICENSE, named in the README, and a CHANGELOG.md with an Unreleased section; and
# every FLASHTUNE_* variable the code reads is in the README's table.
# Usage: check_docs.sh SOURCE_DIR
set -euo pipefail
cd "$1"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    mapfile -t docs < <(git ls-files '*.md')
    mapfile -t tracked < <(git ls-files)
else   # an unpacked archive: every Markdown file outside build folders
    mapfile -t docs < <(find . -name '*.md' -not -path './build*' -not -path './.*' | sed 's|^\./||')
    mapfile -t tracked < <(find . -type f -not -path './build*' -not -path './.*' | sed 's|^\./||')
fi
[ ${#docs[@]} -gt 0 ] || { echo "FAIL: no Markdown files found"; exit 1; }
bad=0
fail() { echo "FAIL: $*"; bad=1; }

for f in "${docs[@]}"; do
    dir=$(dirname "$f")
    # [text](target): the target up to a space or the closing parenthesis.
    while IFS=: read -r line target; do
        case $target in http://*|https://*|mailto:*|'#'*) continue ;; esac
        path=${target%%#*}
        case $path in /*) path=.$path ;; *) path=$dir/$path ;; esac
        [ -e "$path" ] || fail "$f:$line: link to '$target', which is not in the tree"
    done < <(grep -noE '\]\([^)[:space:]]+' "$f" | sed 's/:\](/:/' || true)
done

current=()
for f in "${docs[@]}"; do
    case $f in README.md|CHANGELOG.md|docs/*|bench/RESULTS.md|templates/README.md|dev/*/README.md|dev/README.md)
        current+=("$f") ;;
    esac
done
declare -A names=()
for t in "${tracked[@]}"; do names[$(basename "$t")]=1; done
top='(templates|generator|launch|tuner|runtime|db|tests|bench|python|docs|notes|scripts|dev|cmake)'
# grep finds nothing: no failure.
find_in() { grep "$@" || true; }
for f in "${current[@]}"; do
    while IFS= read -r l; do
        fail "$f:${l%%:*}: names a file outside the repository: ${l#*:}"
    done < <(find_in -nE '(^|[^A-Za-z0-9_/.-])(\.\./)*shared/[A-Za-z]' "$f")
    while IFS= read -r l; do
        fail "$f:${l%%:*}: words a reader cannot know: ${l#*:}"
    done < <(find_in -niE '\blent\b|\bnvidia-h[0-9]+(-x[0-9]+)?\b|\bissues? #?[0-9]+' "$f")
    while IFS=: read -r line name; do
        [ -n "${names[$name]:-}" ] || fail "$f:$line: names $name, which is not in the tree"
    done < <(find_in -noE '\b[A-Za-z0-9_-]+\.md\b' "$f")
    # Repository paths, except patterns (a path followed by *, < or {); the dated records
    # (RESULTS, CHANGELOG) may name files of their day.
    case $f in bench/RESULTS.md|CHANGELOG.md) continue ;; esac
    while IFS=: read -r line path; do
        case $path in *'*'|*'<'|*'{') continue ;; esac
        path=${path%[.,;:]}
        [ -e "$path" ] || fail "$f:$line: names $path, which is not in the tree"
    done < <(find_in -noE "(^|[^A-Za-z0-9_./-])$top/[A-Za-z0-9_./-]*[*<{]?" "$f" | sed -E 's/^([0-9]+):[^a-z]?/\1:/')
done
# A library others link says under which terms, and what changed between versions.
[ -s LICENSE ] || fail "no LICENSE"
grep -q '^## License' README.md && grep -q '`LICENSE`' README.md || fail "README.md has no License section naming LICENSE"
grep -q '^## Unreleased' CHANGELOG.md 2>/dev/null || fail "no CHANGELOG.md with an Unreleased section"
# Every FLASHTUNE_* variable the code reads (getenv, os.environ, a CMake cache variable, an ENV_
# name) has its row in the README's table of environment variables.
while IFS= read -r var; do
    grep -q "^| \`$var\` |" README.md || fail "README.md: the code reads $var, which the environment table lacks"
done < <(grep -rhoE '(getenv\("|environ\.get\("|environ\[")FLASHTUNE_[A-Z_]+|set\(FLASHTUNE_[A-Z_]+|#define ENV_[A-Z_]+ "FLASHTUNE_[A-Z_]+' \
             runtime tuner db launch generator python/flashtune python/setup.py python/CMakeLists.txt bench 2>/dev/null |
         grep -oE 'FLASHTUNE_[A-Z_]+' | sort -u)
[ $bad -eq 0 ] || exit 1
echo "documentation: ${#docs[@]} Markdown files, links and references ok"
