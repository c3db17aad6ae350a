# Finds the installed torch through its own CMake config and reads the facts the build must match
# (C++ ABI, version, library dir) from that torch, never hard-coding them.
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
find_package(Threads REQUIRED)

# Every Python the build runs has torch's backend autoload off: otherwise `import torch` would
# import the torch_foo being rebuilt (possibly half-installed) through its entry point.
set(FOO_PYTHON "${CMAKE_COMMAND}" -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0 "${Python_EXECUTABLE}")

execute_process(
  COMMAND ${FOO_PYTHON} -c
    "import torch, os; print(torch.utils.cmake_prefix_path); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__); print(os.path.join(os.path.dirname(torch.__file__), 'lib'))"
  OUTPUT_VARIABLE _foo_torch_info
  RESULT_VARIABLE _foo_torch_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _foo_torch_rc EQUAL 0)
  message(FATAL_ERROR "torch is not importable by ${Python_EXECUTABLE}: install torch==2.13.0 "
                      "first and build with pip install --no-build-isolation")
endif()
string(REPLACE "\n" ";" _foo_torch_info "${_foo_torch_info}")
list(GET _foo_torch_info 0 _foo_torch_prefix)
list(GET _foo_torch_info 1 FOO_TORCH_CXX11_ABI)
list(GET _foo_torch_info 2 FOO_TORCH_VERSION)
list(GET _foo_torch_info 3 FOO_TORCH_LIB_DIR)
message(STATUS "torch ${FOO_TORCH_VERSION} (C++11 ABI=${FOO_TORCH_CXX11_ABI}) from ${FOO_TORCH_LIB_DIR}")

list(APPEND CMAKE_PREFIX_PATH "${_foo_torch_prefix}")
find_package(Torch REQUIRED CONFIG)
set(FOO_TORCH_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=${FOO_TORCH_CXX11_ABI}")

# TorchConfig does not export libtorch_python, which the Python bindings need.
find_library(FOO_TORCH_PYTHON_LIBRARY torch_python PATHS "${FOO_TORCH_LIB_DIR}" NO_DEFAULT_PATH REQUIRED)

# The torch version is an input of codegen (its native_functions.yaml); configure_file rewrites
# this stamp only when the version changes, so only then does codegen rerun.
configure_file("${CMAKE_CURRENT_LIST_DIR}/torch_version.txt.in" "${CMAKE_BINARY_DIR}/torch_version.txt" @ONLY)
