# What an extension of the foo device builds against, installed in the torch_foo package
# (docs/extensions.md): the headers under torch_foo/include and the CMake package TorchFoo under
# torch_foo/share/cmake (torch_foo.utils.cmake_prefix_path).

# libtorch_foo implements torch_foo/c_abi.h (csrc/runtime/c_abi.cpp).
target_include_directories(torch_foo PRIVATE "${PROJECT_SOURCE_DIR}/csrc/extension")

# Headers keep the source tree's layout (kernels/, sim/, runtime/, aten/), so the installed
# headers include each other exactly as in csrc/; torch_foo/*.h is the public entry point.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/csrc/extension/" DESTINATION torch_foo/include)
foreach(_dir kernels sim runtime)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/csrc/${_dir}" DESTINATION torch_foo/include
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh" PATTERN "tests" EXCLUDE)
endforeach()
# The host halves of the launchers an extension may call (elementwise), and the dtype mapping
# they include.
file(GLOB _foo_public_aten "${PROJECT_SOURCE_DIR}/csrc/aten/core/elementwise.h" "${PROJECT_SOURCE_DIR}/csrc/aten/core/kernel_dtype.h")
install(FILES ${_foo_public_aten} DESTINATION torch_foo/include/aten/core)

configure_file("${CMAKE_CURRENT_LIST_DIR}/TorchFooConfig.cmake.in"
               "${CMAKE_BINARY_DIR}/TorchFooConfig.cmake" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/TorchFooConfig.cmake" "${CMAKE_CURRENT_LIST_DIR}/TorchFooKernels.cmake"
        DESTINATION torch_foo/share/cmake/TorchFoo)
