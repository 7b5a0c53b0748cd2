#!/usr/bin/env bash
# Installs what the build needs on Debian/Ubuntu when it is missing (as root), or says exactly
# what to install. The CUDA toolkit (nvcc, NVRTC, cuda.h) must already be there.
set -euo pipefail

missing=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/local/include/$1" ]; }
have_header lua5.4/lua.h || missing+=(liblua5.4-dev)
have_header sqlite3.h    || missing+=(libsqlite3-dev)
have_header cmocka.h     || missing+=(libcmocka-dev)
command -v cmake >/dev/null || missing+=(cmake)
command -v pkg-config >/dev/null || missing+=(pkg-config)

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "deps: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "deps: missing ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "deps: the CUDA toolkit (NVRTC and cuda.h) is missing; install it from NVIDIA (no GPU needed)" >&2
    exit 1
fi
