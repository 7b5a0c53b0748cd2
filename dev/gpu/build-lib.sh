# Sourced by the scripts here that time through the Python package, from the repository's root,
# with OUT set: the Debian packages unpacked (debs.sh), libflashtune built alone in /tmp/build
# (its log in $OUT/build-lib.log; on failure the log's end is printed and the script exits),
# FLASHTUNE_LIBRARY pointed at it, and FlashAttention-4 on Python's path where its parts were
# installed on this machine (the developers' peers kit puts it in /tmp/fa4site: a peer to measure,
# never a dependency); FA4_STAGED is then 1, else 0.
source dev/gpu/debs.sh
cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$P/usr -DCMAKE_BUILD_TYPE=Release > "$OUT/build-lib.log" 2>&1 &&
  cmake --build /tmp/build --target flashtune_shared >> "$OUT/build-lib.log" 2>&1 || { tail -40 "$OUT/build-lib.log"; exit 1; }
export FLASHTUNE_LIBRARY=/tmp/build/runtime/libflashtune.so
FA4_STAGED=0
[ -f /tmp/fa4site/env.sh ] && . /tmp/fa4site/env.sh && FA4_STAGED=1
