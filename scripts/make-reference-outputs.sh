#!/usr/bin/env bash
# Development script: writes the onnxruntime reference outputs of the real
# models (test/onnx/reference/MODEL.npz, inputs and outputs under the model's
# names, and models.sha256) that the CTest onnx-real-models-run checks tract
# against. Run it after scripts/fetch-models.sh, and again when a model or
# an input changes; commit what it writes.
# Usage: scripts/make-reference-outputs.sh [MODEL.onnx...]   (default: all)
# Needs node and npm, and /usr/bin/python3 with numpy and PIL (python3-pil,
# which python3-torchvision brings).
#
# onnxruntime-node is installed by scripts/install-onnxruntime.sh into
# .cache/onnxruntime-node (not committed); its CPU library
# (bin/napi-v6/linux/x64/libonnxruntime.so.1) ships inside the npm package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models="${TRACT_MODELS_DIR:-$root/models}"
node_modules=$("$root/scripts/install-onnxruntime.sh")
package="$node_modules/onnxruntime-node"
version=$(node -p "require('$package/package.json').version")
case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
library=$(ls "$package"/bin/napi-v*/linux/$arch/libonnxruntime.so.1 2>/dev/null | head -n 1)
[ -n "$library" ] || {
  echo "make-reference-outputs: onnxruntime-node $version has no linux/$arch CPU library" >&2
  exit 1
}

exec /usr/bin/python3 "$root/scripts/reference-outputs/make_references.py" \
  --models "$models" --out "$root/test/onnx/reference" \
  --node-path "$node_modules" "$@"
