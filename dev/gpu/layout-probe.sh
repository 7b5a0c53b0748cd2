#!/usr/bin/env bash
# On a GPU machine: flashtune alone through bench/compare.py with the inputs laid out [B, N, H, D]
# (a projection's output, what FlashAttention-4 and most models hand over) and then [B, H, N, D]
# (contiguous heads, what the tuner's sweep times), in one process each, so that a kernel's speed
# in the two layouts can be told apart from the harness. The library's capture file says which
# problems a tuned winner served. Usage: [COMPARE_ARGS="--dtypes bf16"] dev/gpu/layout-probe.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build-lib.sh
skip="--skip flash,cudnn,flex,fa4,efficient,math"
for layout in bnhd bhnd; do
  FLASHTUNE_CAPTURE="$OUT/capture-$layout.txt" timeout 280 python3 bench/compare.py --out "/tmp/$layout" \
    --layout $layout $skip ${COMPARE_ARGS:---dtypes bf16} > "$OUT/compare-$layout.log" 2>&1
  echo "$layout rc=$?"
  cp "/tmp/$layout/compare.csv" "$OUT/compare-$layout.csv" 2>/dev/null
  cp "/tmp/$layout/compare-extra.csv" "$OUT/compare-extra-$layout.csv" 2>/dev/null
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
def rows(layout):
    got = {}
    for fn in glob.glob(f"{out}/compare*-{layout}.csv"):
        for r in csv.DictReader(open(fn)):
            if r["impl"] == "flashtune" and r["ms"]:
                key = (r.get("dtype", "bf16"), r["head_dim"], r.get("head_dim_v") or r["head_dim"], r["causal"],
                       r["seqlen"], r["batch"], r["heads"], r["pass_"])
                got[key] = float(r["ms"])
    return got
a, b = rows("bnhd"), rows("bhnd")
print("| dtype | D | DV | causal | N | B | H | pass | bnhd ms | bhnd ms | bnhd / bhnd |")
print("| --- | ---: | ---: | :---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
for k in sorted(a, key=lambda k: (k[0], int(k[1]), int(k[2]), k[3], k[7], int(k[4]))):
    if k in b:
        print("| " + " | ".join(k) + f" | {a[k]:.4f} | {b[k]:.4f} | {a[k] / b[k]:.3f} |")
PY
grep -c "served=tuned" "$OUT"/capture-*.txt
