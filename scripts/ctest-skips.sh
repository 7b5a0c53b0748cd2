#!/usr/bin/env bash
# Prints, after ctest's summary, why each test that did not run was skipped: the last line it
# printed (a GPU test says "no GPU: ..."), read from ctest's JUnit file (ctest --output-junit),
# which marks skipped tests, where ctest's own summary shows only "(Skipped)".
# Usage: scripts/ctest-skips.sh JUNIT.xml
set -euo pipefail
junit=${1:?usage: ctest-skips.sh JUNIT.xml}
[ -r "$junit" ] || { echo "ctest-skips.sh: cannot read '$junit'" >&2; exit 1; }
awk '
function unescape(s) {
    gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s)
    gsub(/&amp;/, "\\&", s); return s
}
function attr(line, key,    m) {
    if (match(line, key "=\"[^\"]*\"")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 3)
    return ""
}
/<testcase / { name = attr($0, "name"); skipped = (attr($0, "status") == "notrun"); reason = ""; out = 0 }
skipped && /<skipped / { why = attr($0, "message") }
skipped && /<system-out>/ { out = 1; sub(/.*<system-out>/, "") }
skipped && out {
    line = $0; done = sub(/<\/system-out>.*/, "", line)
    if (line ~ /[^[:space:]]/) reason = line
    if (done) out = 0
}
skipped && /<\/testcase>/ {
    if (!count++) print "Skipped tests and why:"
    printf "  %-24s %s\n", name, (reason != "" ? unescape(reason) : "(printed nothing; ctest: " unescape(why) ")")
    skipped = 0
}
' "$junit"
