#!/usr/bin/env bash
# Builds the tract runtime for every target `tract compile --target` writes
# objects for (aarch64, armv7, wasm32), with the toolchain files in
# cmake/toolchains/, into <build>/targets/<target>/libtract_runtime.a; the
# default build does the same. Installs the cross compilers first.
#
# A program for a target links the object `tract compile --target T` wrote
# with that library, for example:
#   aarch64-linux-gnu-gcc -static app.c model.o build/targets/aarch64/libtract_runtime.a -lm
#   clang-22 --target=wasm32-wasi --sysroot=/usr -fuse-ld=lld app.c model.o \
#     build/targets/wasm32/libtract_runtime.a -lm -o app.wasm
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tract-runtimes
ls "$build"/targets/*/libtract_runtime.a
