#!/usr/bin/env bash
# Every binary the build produces starts without a CUDA driver or NVRTC: none may need libcuda
# or libnvrtc (both are opened at run time: runtime/cuda_driver.c, generator/gen_nvrtc_open.c).
# Usage: check_no_libcuda.sh BUILD_DIR
set -u
found=0 checked=0
while IFS= read -r f; do
    checked=$((checked + 1))
    if readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*libcuda\.so'; then
        echo "FAIL: $f needs libcuda"; found=1
    fi
    if readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*libnvrtc'; then
        echo "FAIL: $f needs libnvrtc"; found=1
    fi
done < <(find "$1" -type f \( -perm -u+x -o -name '*.so*' \) ! -name '*.sh' -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
echo "checked $checked binaries"
[ "$checked" -gt 0 ] && [ "$found" = 0 ]
