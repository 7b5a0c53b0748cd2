#!/usr/bin/env bash
# The installed package as a consumer sees it: cmake --install into a fresh prefix; the installed
# flashtune command runs; the example built against it with the README's pkg-config line as
# written, with pkg-config for the static library and with find_package(flashtune), shared and
# static, and run (exit 77, "no GPU", is fine on a machine without one); the installed CMake files
# name no path of this machine; the library alone configures and builds without Lua or cmocka.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d /tmp/ft_install_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log"
for f in include/flashtune.h bin/flashtune; do [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }; done
version=$("$prefix/bin/flashtune" --version) && [[ $version == "flashtune "[0-9]* ]] ||
    { echo "FAIL: bin/flashtune --version printed '${version:-}'"; exit 1; }
echo "installed command: $version"
# Its main job outside a checkout: 'flashtune tune' with no space finds the installed default one
# (it looked for tuner/spaces/default.lua in the current folder only). The load's summary line is
# enough here; the compile-only run that follows is cut short.
[ -f "$prefix/share/flashtune/spaces/default.lua" ] || { echo "FAIL: the search spaces are not installed"; exit 1; }
(cd "$tmp" && FLASHTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1 exec "$prefix/bin/flashtune" tune \
    --db "$tmp/none.db" > "$tmp/tune.log" 2>&1) &
tune_pid=$!
for _ in $(seq 600); do   # up to 60 s for the summary line, then the run is stopped
    grep -qE "flashtune tune: [0-9]+ spaces, [0-9]+ workloads" "$tmp/tune.log" && break
    kill -0 "$tune_pid" 2> /dev/null || break
    sleep 0.1
done
kill "$tune_pid" 2> /dev/null; wait "$tune_pid" 2> /dev/null || true
grep -qE "flashtune tune: [0-9]+ spaces, [0-9]+ workloads" "$tmp/tune.log" ||
    { head -5 "$tmp/tune.log"; echo "FAIL: the installed flashtune tune did not find its default space"; exit 1; }
echo "installed default space: ok"
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

# The README's pkg-config line, word for word, with the example as app.c and this prefix for
# /opt/flashtune (the README installs there).
readme_line=$(grep -E '^cc app\.c .*pkg-config' "$src/README.md") || { echo "FAIL: no 'cc app.c' line in README.md"; exit 1; }
grep -q '^cmake --install build --prefix /opt/flashtune$' "$src/README.md" ||
    { echo "FAIL: README.md no longer installs into /opt/flashtune"; exit 1; }
mkdir "$tmp/readme"
cp "$src/runtime/examples/example.c" "$tmp/readme/app.c"
echo "README: $readme_line"
(cd "$tmp/readme" && eval "${readme_line//\/opt\/flashtune/$prefix}") || { echo "FAIL: the README's pkg-config line"; exit 1; }
cp "$tmp/readme/a.out" "$tmp/example_pc"

# pkg-config for the static library, as a Makefile would.
export PKG_CONFIG_PATH=$(dirname "$pc")
cc_flags=$(pkg-config --cflags flashtune)
${CC:-cc} -std=c11 $cc_flags -o "$tmp/example_pc_static" "$src/runtime/examples/example.c" \
    "$(pkg-config --variable=libdir flashtune)/libflashtune.a" \
    $(pkg-config --static --libs-only-L --libs-only-l flashtune | sed 's/-lflashtune//') -ldl -lm
echo "pkg-config build: ok"
LD_LIBRARY_PATH=$libdir run "$tmp/example_pc"
run "$tmp/example_pc_static"

# The CMake package finds its dependencies on the consumer's machine: no library path of this one.
cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")
if grep -nE "libnvrtc|libsqlite3|\.so[\";]|$cuda_root|$(readlink -f "$build")|$(readlink -f "$src")" \
        "$libdir"/cmake/flashtune/*.cmake; then
    echo "FAIL: the installed CMake package names paths of the machine that built it"; exit 1
fi

# find_package, as a CMake project would.
cmake -S "$src/runtime/examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/cmake" > "$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log"; exit 1; }
echo "find_package build: ok"
run "$tmp/cmake/ft_example"
run "$tmp/cmake/ft_example_static"
# The README's CMake line as written: find_package(flashtune) and target_link_libraries(app
# flashtune::flashtune), nothing else (the example's maths once needed an -lm of its own here).
grep -q 'find_package(flashtune) and target_link_libraries(app flashtune::flashtune)' "$src/README.md" ||
    { echo "FAIL: README.md lost its find_package line"; exit 1; }
mkdir -p "$tmp/readme-cmake"
cp "$src/runtime/examples/example.c" "$tmp/readme-cmake/app.c"
printf '%s\n' 'cmake_minimum_required(VERSION 3.22)' 'project(app LANGUAGES C)' 'find_package(flashtune REQUIRED)' \
    'add_executable(app app.c)' 'target_link_libraries(app flashtune::flashtune)' > "$tmp/readme-cmake/CMakeLists.txt"
cmake -S "$tmp/readme-cmake" -B "$tmp/readme-cmake/build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/readme-cmake.log" 2>&1 &&
    cmake --build "$tmp/readme-cmake/build" >> "$tmp/readme-cmake.log" 2>&1 ||
    { tail -20 "$tmp/readme-cmake.log"; echo "FAIL: the README's find_package line"; exit 1; }
LD_LIBRARY_PATH=$libdir run "$tmp/readme-cmake/build/app"
echo "README find_package build: ok"

# The library alone: neither Lua nor cmocka may be looked for, the shipped winners still embedded.
lib_only=(-DFLASHTUNE_BUILD_TOOLS=OFF -DFLASHTUNE_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Lua=ON
          -DCMAKE_BUILD_TYPE=Release)
cmake -S "$src" -B "$tmp/lib-only" "${lib_only[@]}" > "$tmp/lib-only.log" 2>&1 ||
    { cat "$tmp/lib-only.log"; echo "FAIL: library-only configure"; exit 1; }
if grep -E '^(CMOCKA|LUA)_' "$tmp/lib-only/CMakeCache.txt"; then
    echo "FAIL: the library-only configure looked for Lua or cmocka"; exit 1
fi
cmake --build "$tmp/lib-only" --parallel "$(nproc)" > "$tmp/lib-only-build.log" 2>&1 ||
    { tail -30 "$tmp/lib-only-build.log"; echo "FAIL: library-only build"; exit 1; }
nm "$tmp/lib-only/runtime/libflashtune.a" > "$tmp/lib-only.nm"
grep -q ' R rt_tuned_count$' "$tmp/lib-only.nm" ||
    { echo "FAIL: the library-only build lacks the shipped winners"; exit 1; }
[ ! -e "$tmp/lib-only/tuner" ] || { echo "FAIL: the library-only build made the tools"; exit 1; }
echo "library-only build: ok"
echo "install test: ok"
