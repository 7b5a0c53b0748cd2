#!/usr/bin/env bash
# `make test` runs every test and says why each skipped one did not run. Checked on the Makefile's
# own recipe (make -n): its ctest call filters nothing out, test_gen_full is among the tests it
# runs, and run on a scratch CMake project with a test that skips (exit 77) the recipe's summary
# names that test and prints its reason.
# Usage: check_make_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d /tmp/ft_make_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The test target's recipe, from the line that enters the build folder to its end; without the
# variables of a make that may be running this test (make test CTEST_ARGS=... passes them down).
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -n -C "$src" test BUILD="$tmp/b" JOBS=1 CTEST_ARGS= \
    > "$tmp/recipe.all"
sed -n "\|^cd $tmp/b |,\$p" "$tmp/recipe.all" > "$tmp/recipe.sh"
[ -s "$tmp/recipe.sh" ] || { cat "$tmp/recipe.all"; echo "FAIL: no 'cd BUILD' step in make test's recipe"; exit 1; }
ctest_line=$(grep -o 'ctest [^;]*' "$tmp/recipe.sh") || { echo "FAIL: make test runs no ctest"; exit 1; }
if grep -qE ' -(E|L|LE|R|I|U|-exclude-regex|-label-regex|-label-exclude|-tests-regex)( |$)' <<< "$ctest_line"; then
    echo "FAIL: make test leaves tests out: $ctest_line"; exit 1
fi
grep -qF 'add_test([=[test_gen_full]=]' "$build/tests/CTestTestfile.cmake" ||
    { echo "FAIL: test_gen_full is not a ctest test"; exit 1; }

# A scratch project: one test passes, one skips with its reason.
mkdir "$tmp/p"
cat > "$tmp/p/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(scratch NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "echo fine")
add_test(NAME needs_gpu COMMAND sh -c "echo 'checking the device'; echo 'no GPU: nothing at /dev/nvidia0 & <none>'; exit 77")
set_tests_properties(needs_gpu PROPERTIES SKIP_RETURN_CODE 77)
CMAKE
cmake -S "$tmp/p" -B "$tmp/b" > "$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
(cd "$src" && sh "$tmp/recipe.sh") > "$tmp/out.log" 2>&1 || { cat "$tmp/out.log"; echo "FAIL: the recipe failed"; exit 1; }
cat "$tmp/out.log"
grep -qE '^ +needs_gpu +no GPU: nothing at /dev/nvidia0 & <none>$' "$tmp/out.log" ||
    { echo "FAIL: make test's summary does not give the skipped test's reason"; exit 1; }
if grep -qE '^ +passes ' "$tmp/out.log"; then echo "FAIL: a passed test listed as skipped"; exit 1; fi
echo "make test summary: ok"
