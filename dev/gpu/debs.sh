# Sourced by the scripts here, from the repository's root: unpacks the Debian packages in
# .deps/debs (if any; README.md says how to make them) into /tmp/prefix, and points the compiler,
# the linker, pkg-config and the loader there. Sets P to the prefix.
P=/tmp/prefix; mkdir -p $P
for f in .deps/debs/*.deb; do [ -e "$f" ] && dpkg -x "$f" $P; done
export CPATH=$P/usr/include:$P/usr/include/x86_64-linux-gnu
export LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$P/usr/lib/x86_64-linux-gnu/pkgconfig
