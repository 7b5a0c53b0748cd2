#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel ./python` from this checkout (FLASHTUNE_PREBUILT, when
# set, names the library to pack instead of building it with CMake), installed into a fresh
# virtual environment, imported away from the checkout: its tag says the platform, the library
# lies inside the package and loads (flashtune.version()), nothing else of the checkout is used.
# With WHEEL_GPU=1 it is installed beside the interpreter's own packages (torch) instead, and one
# attention call on the GPU is compared with SDPA; WHEEL_NO_ISOLATION=1 builds with the Python's own setuptools (a
# machine without PyPI); WHEEL_FILE names a wheel to check instead of building one (the one
# python/build_manylinux.sh makes, with MANYLINUX=1 to build it first: its tag must then be a
# manylinux one, and SQLite lies inside it). Exits 77 (skipped) when pip cannot fetch the build
# backend (or, with MANYLINUX=1, auditwheel).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-python3}
isolation=()
[ "${WHEEL_NO_ISOLATION:-0}" = 1 ] && isolation=(--no-build-isolation)
platform=linux_
if [ "${MANYLINUX:-0}" = 1 ]; then
  PYTHON="$py" "$src/python/build_manylinux.sh" "$tmp/wheel" > "$tmp/wheel.log" 2>&1; rc=$?
  [ $rc = 77 ] && { tail -3 "$tmp/wheel.log"; exit 77; }
  [ $rc = 0 ] || { echo "FAIL: python/build_manylinux.sh"; tail -30 "$tmp/wheel.log"; exit 1; }
  WHEEL_FILE=$(tail -1 "$tmp/wheel.log"); platform=manylinux_
fi
if [ -n "${WHEEL_FILE:-}" ]; then
  wheel=$WHEEL_FILE
elif ! "$py" -m pip wheel --no-deps "${isolation[@]}" -w "$tmp/wheel" "$src/python" > "$tmp/wheel.log" 2>&1; then
  if grep -qiE "no matching distribution|could not find a version|connection|temporary failure|network" "$tmp/wheel.log"; then
    echo "wheel_test: pip could not fetch the build backend (setuptools): skipped"; tail -3 "$tmp/wheel.log"; exit 77
  fi
  echo "FAIL: pip wheel ./python"; tail -30 "$tmp/wheel.log"; exit 1
else
  wheel=$(ls "$tmp"/wheel/flashtune-*.whl)
fi
# With the C hot path (built beside the library) the wheel is for CPython's stable ABI, else for any Python 3.
hotpath=0
[ -n "${FLASHTUNE_PREBUILT:-}" ] && [ -f "$(dirname "$(realpath "$FLASHTUNE_PREBUILT")")/_hotpath.abi3.so" ] && hotpath=1
[ -z "${FLASHTUNE_PREBUILT:-}" ] && "$py" -c 'import os, sysconfig, sys; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' && hotpath=1
want=py3-none-$platform; [ $hotpath = 1 ] && want=cp39-abi3-$platform
case "$(basename "$wheel")" in
  flashtune-*-$want*.whl) ;;
  *) echo "FAIL: the wheel's tag is not ${want}*: $(basename "$wheel")"; exit 1 ;;
esac
# A fresh virtual environment; with WHEEL_GPU=1 a fresh folder of the interpreter that has torch
# instead (a venv made from another venv sees the base Python's packages, not torch).
if [ "${WHEEL_GPU:-0}" = 1 ]; then
  "$py" -m pip install -q --no-deps --target "$tmp/site" "$wheel" || { echo "FAIL: installing $wheel"; exit 1; }
  run=(env -u FLASHTUNE_LIBRARY PYTHONPATH="$tmp/site" "$py")
else
  "$py" -m venv "$tmp/venv" && "$tmp/venv/bin/pip" install -q --no-deps "$wheel" ||
    { echo "FAIL: installing $wheel into a fresh venv"; exit 1; }
  run=(env -u FLASHTUNE_LIBRARY "$tmp/venv/bin/python")
fi
cd "$tmp"   # away from the checkout: nothing of it is on sys.path
HOTPATH=$hotpath "${run[@]}" - "$src" <<'PY' || exit 1
import os, sys
import flashtune
from flashtune import _library
src = sys.argv[1]
here = os.path.dirname(flashtune.__file__)
assert not here.startswith(src), f"flashtune imported from the checkout: {here}"
lib = os.path.join(here, "lib", "libflashtune.so")
assert os.path.isfile(lib) and not os.path.islink(lib), f"no library file in the package: {lib}"
want = ["_hotpath.abi3.so", "libflashtune.so"] if os.environ["HOTPATH"] == "1" else ["libflashtune.so"]
assert sorted(os.listdir(os.path.dirname(lib))) == want, os.listdir(os.path.dirname(lib))
assert os.path.isfile(os.path.join(here, "LICENSE")), "no LICENSE in the package"
from importlib import metadata
meta = metadata.metadata("flashtune")
assert meta["License"] == "MIT" or "MIT" in (meta.get("License-Expression") or ""), meta["License"]
# No CUDA library is needed to load it: NVRTC and the driver are opened at run time.
needed = os.popen(f"readelf -d {lib}").read()
assert "NEEDED" in needed, f"readelf -d {lib} listed nothing: {needed!r}"
assert "libnvrtc" not in needed and "libcuda" not in needed, needed
if os.environ.get("MANYLINUX") == "1":   # SQLite inside the wheel, beside the package
    libs = os.path.join(os.path.dirname(here), "flashtune.libs")
    assert any(f.startswith("libsqlite3") for f in os.listdir(libs)), os.listdir(libs)
print("wheel_test: flashtune", flashtune.__version__, "library", flashtune.version(), "from", lib)
loaded = _library.library()._name
assert os.path.realpath(loaded) == os.path.realpath(lib), f"loaded {loaded}, not the package's"
hot = _library.hotpath
if os.environ["HOTPATH"] == "1":   # loaded from the package and bound to its library
    assert hot is not None and os.path.dirname(hot.__file__) == os.path.dirname(lib), hot
    print("wheel_test: the C hot path", hot.__file__)
else:
    assert hot is None, hot
if os.environ.get("WHEEL_GPU") == "1":
    import torch
    q, k, v = (torch.randn(2, 4, 300, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = flashtune.attention(q, k, v, is_causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    err = (o.float() - ref.float()).abs().max().item()
    assert err < 2e-2, f"attention differs from SDPA by {err}"
    print(f"wheel_test: one attention call on {torch.cuda.get_device_name()}: max |O - SDPA| = {err:.2e}")
PY
echo "wheel_test: ok"
