#!/usr/bin/env bash
# The CUDA path on a machine with an NVIDIA GPU and its driver: the ONNX
# node tests and the real models through `tract --gpu cuda`, against the
# CPU path (the conformance report's "cuda" column) and onnxruntime's
# outputs; every kernel's PTX through ptxas where the CUDA toolkit is.
# Without a driver, it says so and stops (the parts that need none, PTX
# and linking, run in scripts/test.sh).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" || exit 1
"$root/scripts/build.sh" || exit 1
"$root/scripts/fetch-models.sh" || exit 1

if ! "$build/bin/tract" "$root/examples/tiny/model.mlir" --set S=1 \
    --gpu cuda run -q --allow-random-input; then
  echo "test-cuda: no CUDA device here: nothing run"
  exit 1
fi

status=0
/usr/bin/python3 "$root/test/onnx/run_node_tests.py" \
  --tract "$build/bin/tract" --translate "$build/bin/tract-translate" \
  --gpu-column cuda --min-gpu 883 \
  --report "$build/onnx-conformance-cuda.md" || status=1
# The real models of the CPU's real-model tests (test/CMakeLists.txt).
models=$(sed -n '/^set(real_models$/,/)/{/^set(real_models$/d;s/)//;p}' \
  "$root/test/CMakeLists.txt" | tr -d '"')
# shellcheck disable=SC2086
/usr/bin/python3 "$root/test/onnx/run_real_models.py" --gpu cuda \
  --tract "$build/bin/tract" --models "$root/models" \
  --references "$root/test/onnx/reference" \
  --report "$build/onnx-real-models-cuda.txt" $models || status=1
# The benchmark's GPU column: Silero VAD v5 per window on the device.
"$build/bin/tract" "$root/models/silero_vad_v5.onnx" -i 1,512,f32 \
  -i state:2,1,128,f32 -i sr:i64=16000 --gpu cuda bench || status=1
exit $status
