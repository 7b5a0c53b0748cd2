# Sourced by the check scripts here, from the repository's root, with OUT set: the Debian packages
# unpacked (debs.sh), the device described in $OUT/device.txt, a Release build in /tmp/build (its
# log in $OUT/build.log; on failure the log's end is printed and the script exits), and the
# loader's path and FLASHTUNE_LIBRARY pointed at what it built.
source dev/gpu/debs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"; date -u >> "$OUT/device.txt"
# The package's C hot path needs Python.h; where this machine's Python has none, the headers carried
# in .deps/python-include (any CPython >= 3.9: the module uses the stable ABI only).
pyinc=()
python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.isfile(sysconfig.get_paths()["include"] + "/Python.h"))' ||
  { [ -f .deps/python-include/Python.h ] && pyinc=(-DFLASHTUNE_PYTHON_INCLUDE=$PWD/.deps/python-include); }
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release "${pyinc[@]}" > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/build >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
export LD_LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FLASHTUNE_LIBRARY=/tmp/build/runtime/libflashtune.so
