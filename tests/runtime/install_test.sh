#!/usr/bin/env bash
# The installed package as a consumer sees it: cmake --install into a fresh prefix, then the
# example built against it with pkg-config and with find_package(flashtune), shared and static,
# and run (exit 77, "no GPU", is fine on a machine without one).
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d /tmp/ft_install_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log"
for f in include/flashtune.h; do [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }; done
pc=$(find "$prefix" -name flashtune.pc)
libdir=$(dirname "$(dirname "$pc")")
ls "$libdir"/libflashtune.so "$libdir"/libflashtune.a > /dev/null
echo "installed into $prefix ($(cd "$prefix" && find . -type f | sort | tr '\n' ' '))"
if nm -D --defined-only "$libdir/libflashtune.so" | awk '{print $3}' | grep -v '^ft_'; then
    echo "FAIL: libflashtune.so exports names outside ft_"; exit 1
fi

run() {   # run EXE: 0 passes, 77 is "no GPU"
    set +e; "$1" > "$tmp/run.log" 2>&1; rc=$?; set -e
    cat "$tmp/run.log"
    if [ $rc -ne 0 ] && ! { [ $rc -eq 77 ] && grep -q "no GPU" "$tmp/run.log"; }; then
        echo "FAIL: $1 exited $rc"; exit 1
    fi
}

# pkg-config, as a Makefile would.
export PKG_CONFIG_PATH=$(dirname "$pc")
cc_flags=$(pkg-config --cflags flashtune)
${CC:-cc} -std=c11 -Wall -Werror $cc_flags -o "$tmp/example_pc" "$src/runtime/examples/example.c" \
    $(pkg-config --libs flashtune) -Wl,-rpath,"$(pkg-config --variable=libdir flashtune)" -ldl -lm
${CC:-cc} -std=c11 $cc_flags -o "$tmp/example_pc_static" "$src/runtime/examples/example.c" \
    "$(pkg-config --variable=libdir flashtune)/libflashtune.a" \
    $(pkg-config --static --libs-only-L --libs-only-l flashtune | sed 's/-lflashtune//') -ldl -lm
echo "pkg-config build: ok"
run "$tmp/example_pc"
run "$tmp/example_pc_static"

# find_package, as a CMake project would.
cmake -S "$src/runtime/examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/cmake" > "$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log"; exit 1; }
echo "find_package build: ok"
run "$tmp/cmake/ft_example"
run "$tmp/cmake/ft_example_static"
echo "install test: ok"
