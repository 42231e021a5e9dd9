#!/usr/bin/env bash
# Builds the VAD page into OUT_DIR: Silero VAD v5 compiled for wasm32 by
# `tract compile`, linked with vad_web.c, examples/silero-vad/vad.c and the
# wasm32 runtime into vad.wasm (a WASI reactor), next to index.html and
# vad.js. Serve OUT_DIR over HTTP (python3 -m http.server) and open it.
#
# Usage: build.sh TRACT TARGETS_DIR MODEL OUT_DIR
#   TRACT        build/bin/tract
#   TARGETS_DIR  build/targets (scripts/build-targets.sh builds the runtimes)
#   MODEL        models/silero_vad_v5.onnx (scripts/fetch-models.sh)
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 TRACT TARGETS_DIR MODEL OUT_DIR" >&2
  exit 2
fi
tract=$1
targets=$2
model=$3
out=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"

"$tract" -i input:1,576,f32 -i state:2,1,128,f32 -i sr:i64=16000 "$model" \
  compile --target wasm32 -o "$out/silero.o" --header "$out/silero.h" \
  --name silero
clang-22 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 \
  -msimd128 -Wno-deprecated -fuse-ld=lld -Wl,-z,stack-size=1048576 \
  -I"$root/runtime" -I"$root/examples/silero-vad" -I"$out" \
  "$here/vad_web.c" "$root/examples/silero-vad/vad.c" "$out/silero.o" \
  "$targets/wasm32/libtract_runtime.a" -lm -o "$out/vad.wasm"
cp "$here/index.html" "$here/vad.js" "$out/"
echo "built $out/vad.wasm ($(stat -c %s "$out/vad.wasm") bytes)"
