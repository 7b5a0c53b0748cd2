#!/bin/sh
# The library's and the Python package's comments and docs must make sense in a clone: no
# pointers to files outside the project (../shared, DESIGN.md, GPU.md, ANCHORS.md) and no
# team-internal references (issue numbers, "the lent H100"). Usage: check_references.sh SRC_DIR
cd "$1" || exit 2
found=$(grep -rnIE '\.\./shared|shared/[A-Z]+\.md|DESIGN\.md|GPU\.md|ANCHORS\.md|[Ii]ssue #?[0-9]|the issue\b|lent H100' \
    runtime python tests/runtime --exclude-dir=__pycache__ --exclude=check_references.sh)
if [ -n "$found" ]; then
    printf 'references a clone cannot follow:\n%s\n' "$found"
    exit 1
fi
exit 0
