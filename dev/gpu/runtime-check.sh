#!/usr/bin/env bash
# On a GPU machine (README.md here): libflashtune end to end. Unpacks the Debian packages in
# .deps/debs, builds into /tmp/build-rt, installs to /tmp/ft-install, builds runtime/examples
# against the install with pkg-config and with find_package, runs the example, test_runtime_gpu
# and bench_dispatch. Logs go to $OUT; a summary is printed last.
# Usage: dev/gpu/runtime-check.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/debs.sh
B=/tmp/build-rt I=/tmp/ft-install E=/tmp/ft-example
declare -A result

nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/device.txt"
git rev-parse HEAD 2>/dev/null | tee -a "$OUT/device.txt"
gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
if cmake -S . -B $B "${gen[@]}" -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
   cmake --build $B -j "$(nproc)" --target flashtune flashtune_shared flashtune_static test_runtime test_runtime_gpu \
         bench_dispatch ft_example >> "$OUT/build.log" 2>&1; then
    result[build]=ok
else
    tail -40 "$OUT/build.log"; echo "SUMMARY: build failed (see $OUT/build.log)"; exit 1
fi

# The install tree, and a consumer built against it both ways.
rm -rf $I $E
if cmake --install $B --prefix $I > "$OUT/install.log" 2>&1; then result[install]=ok; else result[install]=FAIL; fi
pc_dir=$(dirname "$(find $I -name flashtune.pc | head -1)")
(
    set -e
    mkdir -p $E
    cc -std=c11 -Wall $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags flashtune) -o $E/example_pc \
        runtime/examples/example.c $(PKG_CONFIG_PATH=$pc_dir pkg-config --libs flashtune) \
        -Wl,-rpath,"$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir flashtune)" -ldl -lm
) > "$OUT/example-pkgconfig.log" 2>&1 && result[pkg-config build]=ok || result[pkg-config build]=FAIL
(cmake -S runtime/examples -B $E/cmake "${gen[@]}" -DCMAKE_PREFIX_PATH="$I;$P/usr" &&
 cmake --build $E/cmake) > "$OUT/example-cmake.log" 2>&1 && result[find_package build]=ok || result[find_package build]=FAIL

run() {   # run NAME LOG COMMAND...: records ok / FAIL (rc)
    local name=$1 log=$2; shift 2
    "$@" > "$OUT/$log" 2>&1; local rc=$?
    result[$name]=$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")
}
[ -x $E/example_pc ] && run "example (pkg-config)" example-pc.log $E/example_pc
[ -x $E/cmake/ft_example ] && run "example (find_package)" example-cmake-run.log $E/cmake/ft_example
[ -x $E/cmake/ft_example_static ] && run "example (static)" example-static.log $E/cmake/ft_example_static
run test_runtime test_runtime.log $B/tests/runtime/test_runtime
run test_runtime_gpu test_runtime_gpu.log $B/tests/runtime/test_runtime_gpu
run bench_dispatch bench_dispatch.log $B/bench/bench_dispatch

echo "---- example (pkg-config)"; cat "$OUT/example-pc.log" 2>/dev/null
echo "---- test_runtime_gpu"; cat "$OUT/test_runtime_gpu.log"
echo "---- bench_dispatch"; cat "$OUT/bench_dispatch.log"
echo "==== SUMMARY (logs in $OUT)"
for k in build install "pkg-config build" "find_package build" "example (pkg-config)" "example (find_package)" \
         "example (static)" test_runtime test_runtime_gpu bench_dispatch; do
    printf '  %-24s %s\n' "$k" "${result[$k]:-not run}"
done
