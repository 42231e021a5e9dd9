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
# onnxruntime-node is installed from npm into .cache/onnxruntime-node (not
# committed) with ONNXRUNTIME_NODE_INSTALL=skip: its install script would
# only fetch the optional CUDA/TensorRT libraries, while the CPU library
# (bin/napi-v6/linux/x64/libonnxruntime.so.1) ships inside the npm package.
# (--ignore-scripts too: nothing needed comes from install scripts.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models="${TRACT_MODELS_DIR:-$root/models}"
version=1.30.0
prefix="$root/.cache/onnxruntime-node"
package="$prefix/node_modules/onnxruntime-node"

command -v node >/dev/null || { echo "make-reference-outputs: node is needed" >&2; exit 1; }
installed=$(node -p "require('$package/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  command -v npm >/dev/null || { echo "make-reference-outputs: npm is needed" >&2; exit 1; }
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$prefix" --no-audit \
    --no-fund --ignore-scripts --silent "onnxruntime-node@$version"
fi
case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
library=$(ls "$package"/bin/napi-v*/linux/$arch/libonnxruntime.so.1 2>/dev/null | head -n 1)
[ -n "$library" ] || {
  echo "make-reference-outputs: onnxruntime-node $version has no linux/$arch CPU library" >&2
  exit 1
}

exec /usr/bin/python3 "$root/scripts/reference-outputs/make_references.py" \
  --models "$models" --out "$root/test/onnx/reference" \
  --node-path "$prefix/node_modules" "$@"
