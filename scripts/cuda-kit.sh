#!/usr/bin/env bash
# Packs what `scripts/test-cuda.sh --kit` needs on a machine with an NVIDIA
# GPU that has neither LLVM nor this project's build: tract and
# tract-translate linked with LLVM's static libraries (the build links the
# shared libLLVM, 150 MB with its dependencies), the shared libraries they
# still need, the runtime libraries and headers that a compiled program
# links, the example compiled for CUDA (sm_80 and sm_90 objects), the real
# models small enough to carry and the ONNX node tests. One xz archive,
# about 56 MB: with the working tree, within the 64 MiB that travels.
#
# Usage: scripts/cuda-kit.sh OUT_DIR     (writes OUT_DIR/kit.tar.xz)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
out=${1:?usage: scripts/cuda-kit.sh OUT_DIR}
llvm_lib=$(llvm-config-22 --libdir 2>/dev/null || echo /usr/lib/llvm-22/lib)

"$root/scripts/build.sh" tract tract-translate tract_runtime tract_runtime_cuda
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kit="$work/kit"
mkdir -p "$kit/bin" "$kit/lib" "$kit/runtime" "$kit/tiny" "$kit/models"

# The build's own link line, with LLVM's static component libraries (the
# linker takes only what is used) in place of the shared libLLVM.
static_llvm=$(ls "$llvm_lib"/libLLVM*.a |
  grep -v -E 'libLLVM(gtest|gtest_main|TestingSupport|TableGen.*|LineEditor|FuzzMutate|FuzzerCLI)\.a$' |
  tr '\n' ' ')
zstd=$(ls /usr/lib/x86_64-linux-gnu/libzstd.so.1 2>/dev/null || echo -lzstd)
for tool in tract tract-translate; do
  line=$(cd "$build" && ninja -t commands "bin/$tool" | tail -1)
  case "$line" in
  *libLLVM.so*) ;;
  *) echo "cuda-kit: bin/$tool is not linked with libLLVM.so: $line" >&2
     exit 1 ;;
  esac
  line=$(sed -e "s# [^ ]*libLLVM\.so[.0-9]*# -Wl,--start-group $static_llvm -Wl,--end-group -lz $zstd -lpthread -ldl#" \
    -e "s# -o bin/$tool # -o $kit/bin/$tool #" <<<"$line")
  (cd "$build" && eval "$line")
  strip "$kit/bin/$tool"
done

# The shared libraries that a newer distribution may lack (not the C and
# C++ runtimes, which it has in newer versions); the rpath $ORIGIN/../lib
# finds them.
for tool in tract tract-translate; do
  ldd "$kit/bin/$tool" | awk '/=> \//{print $3}' |
    grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so' |
    while read -r library; do
      [ -e "$kit/lib/${library##*/}" ] || cp -L "$library" "$kit/lib/"
    done
done

cp "$build/runtime/libtract_runtime.a" "$build/runtime/libtract_runtime_cuda.a" \
  "$root"/runtime/*.h "$kit/runtime/"
cp "$root/test/tools/Inputs/run-tiny.c" "$kit/tiny/"
for chip in sm_80 sm_90; do
  mkdir -p "$kit/tiny/$chip"
  "$build/bin/tract" "$root/examples/tiny/model.mlir" compile --target cuda \
    --cpu "$chip" -o "$kit/tiny/$chip/tiny.o" --header "$kit/tiny/$chip/tiny.h"
done

# The real models of the CPU's tests that fit (mobilenet_v2 and resnet18
# are exported from torchvision on the GPU machine instead).
for model in silero_vad_v5 silero_vad_legacy silero_vad_jjhbw ppocr_det \
  ppocr_cls ppocr_rec blazeface_front blazeface_back; do
  cp "$root/models/$model.onnx" "$kit/models/"
done

# The ONNX node tests (Debian's libonnx-testdata; onnx's wheels lack them),
# but the pytorch-converted group, whose weights would not fit.
mkdir -p "$kit/onnx-data"
for group in node simple pytorch-operator; do
  cp -r "/usr/share/libonnx-testdata/data/$group" "$kit/onnx-data/"
done

mkdir -p "$out"
tar -C "$work" -cf - kit | xz -T0 -6 >"$out/kit.tar.xz"
ls -l "$out/kit.tar.xz"
