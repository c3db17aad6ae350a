# Finds the installed torch through its own CMake config and reads the facts the build must match
# (C++ ABI, version, library dir) from that torch, never hard-coding them.
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
find_package(Threads REQUIRED)

# Every Python the build runs has torch's backend autoload off: otherwise `import torch` would
# import the torch_foo being rebuilt (possibly half-installed) through its entry point.
set(FOO_PYTHON "${CMAKE_COMMAND}" -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0 "${Python_EXECUTABLE}")

# The supported torch versions, [first, last]: pyproject.toml's range says the same.
set(FOO_TORCH_SUPPORTED_FIRST 2.11)
set(FOO_TORCH_SUPPORTED_LAST 2.14)

execute_process(
  COMMAND ${FOO_PYTHON} -c
    "import torch, os; print(torch.utils.cmake_prefix_path); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__); print(os.path.join(os.path.dirname(torch.__file__), 'lib')); print(torch.version.cuda or '')"
  OUTPUT_VARIABLE _foo_torch_info
  RESULT_VARIABLE _foo_torch_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _foo_torch_rc EQUAL 0)
  message(FATAL_ERROR "torch is not importable by ${Python_EXECUTABLE}: install torch (2.11 to 2.14) "
                      "first and build with pip install --no-build-isolation")
endif()
string(REPLACE "\n" ";" _foo_torch_info "${_foo_torch_info}")
list(GET _foo_torch_info 0 _foo_torch_prefix)
list(GET _foo_torch_info 1 FOO_TORCH_CXX11_ABI)
list(GET _foo_torch_info 2 FOO_TORCH_VERSION)
list(GET _foo_torch_info 3 FOO_TORCH_LIB_DIR)
list(LENGTH _foo_torch_info _foo_n)
set(FOO_TORCH_CUDA "")
if(_foo_n GREATER 4)
  list(GET _foo_torch_info 4 FOO_TORCH_CUDA)
endif()
if(FOO_TORCH_CUDA)
  set(_foo_build "CUDA ${FOO_TORCH_CUDA} build")
else()
  set(_foo_build "CPU build")
endif()
message(STATUS "torch ${FOO_TORCH_VERSION} (${_foo_build}, C++11 ABI=${FOO_TORCH_CXX11_ABI}) from ${FOO_TORCH_LIB_DIR}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _foo_torch_minor "${FOO_TORCH_VERSION}")
if(_foo_torch_minor VERSION_LESS FOO_TORCH_SUPPORTED_FIRST OR _foo_torch_minor VERSION_GREATER FOO_TORCH_SUPPORTED_LAST)
  message(FATAL_ERROR "torch ${FOO_TORCH_VERSION} is not supported: torch_foo builds against torch "
                      "${FOO_TORCH_SUPPORTED_FIRST} to ${FOO_TORCH_SUPPORTED_LAST} (docs/decisions.md, "
                      "\"Supported torch versions\")")
endif()

# The C++ standard of code that includes torch's headers: torch 2.14's ATen requires C++20
# (ATen.h: "#error C++20 or later"); earlier ones build with C++17. The torch-free layers
# (emulator, drivers, kernels) stay C++17 whatever the torch.
if(_foo_torch_minor VERSION_GREATER_EQUAL 2.14)
  set(FOO_TORCH_CXX_STANDARD 20)
else()
  set(FOO_TORCH_CXX_STANDARD 17)
endif()

# A CUDA build of torch (pip's default wheel) makes its CMake config look for the CUDA toolkit and
# fail without one ("Your installed Caffe2 version uses CUDA but I cannot find the CUDA
# libraries"), even where a toolkit is installed but laid out otherwise. torch_foo uses none of
# torch's CUDA code: its cuda target links the toolkit's static runtime itself (FooCuda.cmake).
# torch's config skips its CUDA search when `torch::cudart` exists, so an empty one stands in; the
# libraries of torch's CUDA build are still linked, and loaded by `import torch` anyway.
if(FOO_TORCH_CUDA AND NOT TARGET torch::cudart)
  add_library(torch::cudart INTERFACE IMPORTED)
endif()

list(APPEND CMAKE_PREFIX_PATH "${_foo_torch_prefix}")
find_package(Torch REQUIRED CONFIG)
set(FOO_TORCH_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=${FOO_TORCH_CXX11_ABI}")

# TorchConfig does not export libtorch_python, which the Python bindings need.
find_library(FOO_TORCH_PYTHON_LIBRARY torch_python PATHS "${FOO_TORCH_LIB_DIR}" NO_DEFAULT_PATH REQUIRED)

# The torch version is an input of codegen (its native_functions.yaml); configure_file rewrites
# this stamp only when the version changes, so only then does codegen rerun.
configure_file("${CMAKE_CURRENT_LIST_DIR}/torch_version.txt.in" "${CMAKE_BINARY_DIR}/torch_version.txt" @ONLY)
