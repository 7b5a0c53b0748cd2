#!/usr/bin/env bash
# On a GPU machine (README.md here): the PyTorch drop-in in one call. Builds; runs test_runtime_gpu
# (the _ws calls beside the others) and the Python GPU tests of torch.compile, torch.export, CUDA
# graph capture, the fallback to SDPA and the C hot path against the Python path (test_gpu.py
# DropIn), with the older tests the workspace change touches; then the MHA example; then (BENCH=1,
# the default) bench/host_time.py twice and bench/train_step.py --profile. Logs in $OUT; a summary
# printed last.
# Env: PYTHON_TESTS (default: DropIn and five AgainstPyTorch tests); BENCH=0 skips the benchmarks.
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
ls /tmp/build/runtime/_hotpath.abi3.so >> "$OUT/device.txt" 2>&1
if [ "${BENCH:-1}" = 1 ]; then
  for i in 1 2; do timeout 120 python3 bench/host_time.py >> "$OUT/host_time.log" 2>&1; done
  summary+=("host_time rc=$?")
  timeout 240 python3 bench/train_step.py --profile > "$OUT/train_step.log" 2>&1; summary+=("train_step rc=$?")
fi
echo "== test_runtime_gpu"; grep -E "FAIL|tests passed|\[  (PASSED|FAILED) \]" "$OUT/gpu-tests.log" | tail -8
echo "== python"; grep -E "ok$|FAIL|ERROR|Error|^Ran|^OK|FAILED" "$OUT/python.log" | tail -30
if [ "${BENCH:-1}" = 1 ]; then
  echo "== host time"; grep -E "^\| flashtune|^\| SDPA" "$OUT/host_time.log"
  echo "== training step"; grep -E "^\| |per step" "$OUT/train_step.log" | head -6
  grep -E "flash_fprop|flash_bprop|elementwise_kernel|ft_|Self CUDA time total|== " "$OUT/train_step.log" | head -30
fi
printf '%s\n' "${summary[@]}"
