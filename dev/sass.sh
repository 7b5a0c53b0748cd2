#!/usr/bin/env bash
# The SASS of one configuration, without a GPU: `flashtune compile -o` (NVRTC) to a CUBIN, then
# nvdisasm. Prints each entry's instruction count, its opcodes by frequency and its spill
# instructions; the whole listing goes to $SASS_OUT (default /tmp/flashtune.sass). Use it to
# check what a template edit does to the instruction stream before spending GPU time (the
# backward's descriptors were found this way: notes/kernels.md).
# nvdisasm: from PATH, else from the `nvidia-cuda-nvdisasm` wheel on PyPI, fetched once into
# .deps/nvdisasm (a developer's tool; flashtune never needs it).
# Usage: dev/sass.sh FAMILY [PARAM=VALUE ...]     e.g. dev/sass.sh bwd_wgmma HEAD_DIM=128 NUM_WARPS=12
set -euo pipefail
family=${1:?usage: dev/sass.sh FAMILY [PARAM=VALUE ...]}; shift
root=$(cd "$(dirname "$0")/.." && pwd)
ft=${FLASHTUNE:-$root/build/tuner/flashtune}
[ -x "$ft" ] || { echo "dev/sass.sh: no $ft (build first, or set FLASHTUNE)"; exit 2; }
nvd=$(command -v nvdisasm || true)
if [ -z "$nvd" ]; then
  nvd=$(ls "$root"/.deps/nvdisasm/nvidia/*/bin/nvdisasm 2>/dev/null | head -1 || true)
fi
if [ -z "$nvd" ]; then
  mkdir -p "$root/.deps/nvdisasm"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$root/.deps/nvdisasm" nvidia-cuda-nvdisasm
  (cd "$root/.deps/nvdisasm" && python3 -m zipfile -e nvidia_cuda_nvdisasm-*.whl .)
  nvd=$(ls "$root"/.deps/nvdisasm/nvidia/*/bin/nvdisasm | head -1)
  chmod +x "$nvd"
fi
cubin=$(mktemp /tmp/flashtune-sass.XXXXXX.cubin)
trap 'rm -f "$cubin"' EXIT
"$ft" compile --template "$family" -o "$cubin" "$@"
out=${SASS_OUT:-/tmp/flashtune.sass}
"$nvd" -c "$cubin" > "$out"
# Per entry (a `.text.NAME:` section): instructions, then the 20 commonest opcodes and the spills.
awk '
  /^\.text\./ { sub(/^\.text\./, ""); sub(/:$/, ""); name = $0; next }
  /\/\*[0-9a-f]+\*\// && name != "" {
    op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); base = op; sub(/\..*/, "", base)
    n[name]++; c[name, base]++; if (base == "STL" || base == "LDL") s[name]++
  }
  END {
    for (e in n) {
      printf "%s: %d instructions, %d spill instructions\n ", e, n[e], s[e]
      k = 0
      for (key in c) { split(key, p, SUBSEP); if (p[1] == e) { ops[++k] = p[2]; cnt[k] = c[key] } }
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (cnt[j] > cnt[i]) {
        t = cnt[i]; cnt[i] = cnt[j]; cnt[j] = t; t = ops[i]; ops[i] = ops[j]; ops[j] = t }
      for (i = 1; i <= k && i <= 20; i++) printf " %s %d", ops[i], cnt[i]
      printf "\n"; delete ops; delete cnt
    }
  }' "$out"
echo "(SASS in $out)"
