# `cmake --install build --prefix P`: what a program that embeds tract-mlir
# needs, and the tools.
#   P/bin/        tract, tract-opt, tract-translate
#   P/include/    tract.h (the C API), tract.hpp (C++ over it), and the
#                 runtime's headers that compiled objects include
#   P/lib/        libtract.so; libtract_runtime.a (and the GPU runtimes)
#                 that objects from `tract compile` link
#   P/lib/cmake/TractMLIR/   find_package(TractMLIR): TractMLIR::tract,
#                 TractMLIR::runtime
#   P/lib/pkgconfig/tract.pc
#   P/lib/python3/dist-packages/tract_mlir/   the Python package
# The project's static libraries are not installed: tract.h is the interface.
include(CMakePackageConfigHelpers)

install(TARGETS tract tract-opt tract-translate RUNTIME DESTINATION bin)
install(TARGETS libtract LIBRARY DESTINATION lib)
install(FILES lib/tract.h lib/tract.hpp DESTINATION include)
install(FILES runtime/tract_runtime.h runtime/tract_gpu.h runtime/tract_cuda.h
              runtime/tract_metal.h runtime/tract_profile.h
        DESTINATION include)
install(TARGETS tract_runtime ARCHIVE DESTINATION lib)
foreach(gpu tract_runtime_vulkan tract_runtime_cuda)
  if(TARGET ${gpu})
    install(TARGETS ${gpu} ARCHIVE DESTINATION lib)
  endif()
endforeach()

configure_file(cmake/TractMLIRConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/TractMLIRConfig.cmake @ONLY)
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/TractMLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/TractMLIRConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/TractMLIRConfigVersion.cmake
        DESTINATION lib/cmake/TractMLIR)
# The prefix is known when installing, not when configuring.
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/cmake/tract.pc.in\" pc)
  string(REPLACE \"@PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" pc \"\${pc}\")
  string(REPLACE \"@VERSION@\" \"${PROJECT_VERSION}\" pc \"\${pc}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/pkgconfig/tract.pc\" \"\${pc}\")
  message(STATUS \"Installing: \${CMAKE_INSTALL_PREFIX}/lib/pkgconfig/tract.pc\")
")
