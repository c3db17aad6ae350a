# Decides whether the cuda target is built (FOO_USE_CUDA = AUTO | ON | OFF) and sets it up.
# Defines FOO_WITH_CUDA and, when set, the CUDA language and CUDA::cudart_static.
#   AUTO: only where it can run: nvcc found and an NVIDIA GPU visible (nvidia-smi lists one). nvcc
#         is 47% of a full build's compile time (docs/build.md), wasted on a machine with no GPU.
#   ON:   wherever nvcc is (CI compiles every kernel with nvcc this way, docs/build.md).
# FOO_CUDA_ARCHITECTURES empty: the visible GPUs' architectures, or 80;90 when none is visible.
set(FOO_WITH_CUDA OFF)
string(TOUPPER "${FOO_USE_CUDA}" _foo_use_cuda)
if(_foo_use_cuda STREQUAL "OFF")
  message(STATUS "cuda target: off (FOO_USE_CUDA=OFF)")
  return()
endif()

# The compute capabilities of the visible GPUs, as CMake architectures ("9.0" -> 90); empty
# when there is no GPU or no driver.
set(_foo_gpu_archs "")
find_program(FOO_NVIDIA_SMI nvidia-smi)
if(FOO_NVIDIA_SMI)
  execute_process(COMMAND "${FOO_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _foo_caps RESULT_VARIABLE _foo_smi_rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_foo_smi_rc EQUAL 0)
    string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _foo_caps "${_foo_caps}")
    foreach(_cap IN LISTS _foo_caps)
      string(REPLACE "." "" _cap "${_cap}")
      list(APPEND _foo_gpu_archs "${_cap}")
    endforeach()
    list(REMOVE_DUPLICATES _foo_gpu_archs)
  endif()
endif()
if(_foo_use_cuda STREQUAL "AUTO" AND NOT _foo_gpu_archs)
  message(STATUS "cuda target: off (no NVIDIA GPU visible; FOO_USE_CUDA=AUTO). "
                 "FOO_USE_CUDA=ON builds it anyway.")
  return()
endif()

include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER)
  foreach(_candidate /usr/local/cuda/bin/nvcc)
    if(EXISTS "${_candidate}")
      set(CMAKE_CUDA_COMPILER "${_candidate}")
    endif()
  endforeach()
endif()
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  if(_foo_use_cuda STREQUAL "ON")
    message(FATAL_ERROR "FOO_USE_CUDA=ON but no nvcc was found: put nvcc on PATH or set CUDACXX")
  endif()
  message(STATUS "cuda target: off (a GPU is visible but no nvcc was found; FOO_USE_CUDA=AUTO)")
  return()
endif()

if(NOT FOO_CUDA_ARCHITECTURES)
  if(_foo_gpu_archs)
    set(FOO_CUDA_ARCHITECTURES "${_foo_gpu_archs}")
  else()
    set(FOO_CUDA_ARCHITECTURES "80;90")
  endif()
endif()
set(CMAKE_CUDA_ARCHITECTURES "${FOO_CUDA_ARCHITECTURES}")
set(CMAKE_CUDA_STANDARD 17)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(FOO_WITH_CUDA ON)
message(STATUS "cuda target: on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
