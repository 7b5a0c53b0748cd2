#!/usr/bin/env bash
# On a GPU machine (README.md here): the PyTorch drop-in in one call. Builds; runs test_runtime_gpu
# (the _ws calls beside the others) and the Python GPU tests of torch.compile, torch.export, CUDA
# graph capture and the fallback to SDPA (test_gpu.py DropIn), with the older tests the workspace
# change touches; then the MHA example. Logs in $OUT; a summary printed last.
# Env: PYTHON_TESTS (default: DropIn and five AgainstPyTorch tests).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source dev/gpu/build.sh
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())" >> "$OUT/device.txt" 2>&1
summary=()
(cd /tmp/build && timeout 240 ctest --output-on-failure -R "test_runtime_gpu" 2>&1) > "$OUT/gpu-tests.log"
summary+=("test_runtime_gpu rc=$?")
PYTHON_TESTS=${PYTHON_TESTS:-DropIn AgainstPyTorch.test_variable_length_batches AgainstPyTorch.test_decode_shapes \
AgainstPyTorch.test_deterministic_backward_repeats_bitwise AgainstPyTorch.test_masks AgainstPyTorch.test_strided_inputs}
timeout 400 python3 python/tests/test_gpu.py -v $PYTHON_TESTS > "$OUT/python.log" 2>&1
summary+=("python tests rc=$?")
timeout 120 python3 python/examples/mha.py > "$OUT/mha.log" 2>&1; summary+=("mha example rc=$?")
echo "== test_runtime_gpu"; grep -E "FAIL|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" | tail -8
echo "== python"; grep -E "ok$|FAIL|ERROR|Error|^Ran|^OK|FAILED" "$OUT/python.log" | tail -30
printf '%s\n' "${summary[@]}"
