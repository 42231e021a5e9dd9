# WebAssembly (wasm32) for WASI, with clang-22, Debian's wasi-libc (the
# sysroot is /usr: /usr/include/wasm32-wasi, /usr/lib/wasm32-wasi) and
# libclang-rt-22-dev-wasm32; SIMD128, as `tract compile --target wasm32`
# assumes.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER clang-22)
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_AR llvm-ar-22 CACHE FILEPATH "")
set(CMAKE_RANLIB llvm-ranlib-22 CACHE FILEPATH "")
set(CMAKE_SYSROOT /usr)
set(CMAKE_C_FLAGS_INIT "-msimd128 -Wno-deprecated")
# A static library: nothing to link while CMake tries the compiler.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
