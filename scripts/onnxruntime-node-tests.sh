#!/usr/bin/env bash
# Development script: runs the ONNX backend node tests through
# onnxruntime-node, every input an input and at the tolerance of
# `tract run --approx approximate`, and writes the results that the
# conformance report (docs/onnx-conformance.md, scripts/test-full.sh)
# shows next to tract's: test/onnx/reference/onnxruntime-node-tests.txt.
# Run it again when onnxruntime-node or the test data change; commit what it
# writes. Needs node and npm, and /usr/bin/python3 with onnx and numpy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node_modules=$("$root/scripts/install-onnxruntime.sh")
exec /usr/bin/python3 "$root/scripts/reference-outputs/node_tests_onnxruntime.py" \
  --node-path "$node_modules" \
  --out "$root/test/onnx/reference/onnxruntime-node-tests.txt" "$@"
