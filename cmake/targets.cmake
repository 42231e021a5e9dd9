# The runtime library for each target `tract compile --target` writes
# objects for, cross-built with the toolchain files in cmake/toolchains/ into
# <build>/targets/<target>/libtract_runtime.a: what the tests link compiled
# models with before running them under qemu-user or Node's WASI. A target
# whose compiler is missing is left out, and says so (scripts/setup.sh
# installs them all).
include(ExternalProject)

set(TRACT_TARGETS_DIR ${CMAKE_BINARY_DIR}/targets)
add_custom_target(tract-runtimes)

function(tract_cross_runtime target toolchain compiler)
  find_program(compiler_path ${compiler} NO_CACHE)
  if(NOT compiler_path)
    message(STATUS "Runtime for ${target}: left out (no ${compiler})")
    return()
  endif()
  ExternalProject_Add(tract-runtime-${target}
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/runtime
    BINARY_DIR ${TRACT_TARGETS_DIR}/${target}
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/toolchains/${toolchain}.cmake
      -DCMAKE_BUILD_TYPE=Release
    INSTALL_COMMAND ""
    # Rebuilds when a runtime source changes.
    BUILD_ALWAYS ON
    USES_TERMINAL_BUILD OFF)
  add_dependencies(tract-runtimes tract-runtime-${target})
endfunction()

tract_cross_runtime(aarch64 aarch64-linux-gnu aarch64-linux-gnu-gcc)
tract_cross_runtime(armv7 armv7-linux-gnueabihf arm-linux-gnueabihf-gcc)
# wasi-libc's crt1.o tells whether the WebAssembly sysroot is there.
if(EXISTS /usr/lib/wasm32-wasi/crt1.o)
  tract_cross_runtime(wasm32 wasm32-wasi clang-22)
else()
  message(STATUS "Runtime for wasm32: left out (no wasi-libc)")
endif()
