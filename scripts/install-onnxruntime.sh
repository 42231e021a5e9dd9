#!/usr/bin/env bash
# Installs onnxruntime-node (the peer engine of the reference outputs and of
# the benchmark) into .cache/onnxruntime-node when it is missing, and prints
# its node_modules folder (for NODE_PATH). Development only.
#
# ONNXRUNTIME_NODE_INSTALL=skip and --ignore-scripts: the install script
# would only fetch the optional CUDA/TensorRT libraries, while the CPU
# library ships inside the npm package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=1.30.0
prefix="$root/.cache/onnxruntime-node"
command -v node >/dev/null || { echo "install-onnxruntime: node is needed" >&2; exit 1; }
installed=$(node -p "require('$prefix/node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  command -v npm >/dev/null || { echo "install-onnxruntime: npm is needed" >&2; exit 1; }
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$prefix" --no-audit \
    --no-fund --ignore-scripts --silent "onnxruntime-node@$version" >&2
fi
echo "$prefix/node_modules"
