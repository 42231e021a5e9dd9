#!/usr/bin/env bash
# Configures (once) and builds tract-mlir incrementally in ./build.
# Usage: scripts/build.sh [TARGET...]   (default: everything)
# TRACT_BUILD_DIR names another build folder, TRACT_CMAKE_ARGS adds options
# to its first configuration (scripts/fuzz.sh: -DTRACT_FUZZ=ON).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
llvm_prefix=$(llvm-config-22 --prefix 2>/dev/null || echo /usr/lib/llvm-22)

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 \
    -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DTRACT_WERROR=ON \
    -DMLIR_DIR="$llvm_prefix/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm_prefix/bin/lit" ${TRACT_CMAKE_ARGS:-}
fi

if (($# == 0)); then
  cmake --build "$build"
else
  cmake --build "$build" --target "$@"
fi
