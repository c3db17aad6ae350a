include(TorchFooKernels)  # torch_foo_sim_wrappers, shared with extensions

# foo_add_kernels(<target> <file.cu>...): sets <target>_TARGETS (object libraries to link); compiles
# each kernel source twice from the same file — as C++ for the sim target (the host emulation of
# CUDA's execution model in csrc/sim) and, when FOO_WITH_CUDA, by nvcc for the cuda target. The two
# land in different namespaces (foo::kernels::sim / ::cuda; see csrc/kernels/core/kernel.h), so both
# live in one library. Neither compile sees torch's include directories: kernels include no ATen.
# Sources after UNITY are compiled in unity units for the sim target (cmake/FooUnity.cmake).
function(foo_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 _arg "" "" "UNITY")
  set(_all ${_arg_UNPARSED_ARGUMENTS} ${_arg_UNITY})
  torch_foo_sim_wrappers(_sim_sources "${CMAKE_BINARY_DIR}/sim_kernels" ${_arg_UNPARSED_ARGUMENTS})
  torch_foo_sim_wrappers(_sim_unity "${CMAKE_BINARY_DIR}/sim_kernels" ${_arg_UNITY})
  add_library(${target}_sim OBJECT ${_sim_sources} ${_sim_unity})
  foo_unity_groups(${target}_sim sim_pointwise 32 ${_sim_unity})
  target_include_directories(${target}_sim PRIVATE "${PROJECT_SOURCE_DIR}/csrc")
  foo_target_warnings(${target}_sim)
  # CUDA's `#pragma unroll` means nothing to the host compiler.
  target_compile_options(${target}_sim PRIVATE -Wno-unknown-pragmas)
  if(FOO_SIM_SANITIZE)  # checked mode: every load and store calls csrc/sim/checked.cpp
    target_compile_options(${target}_sim PRIVATE ${TORCH_FOO_SIM_CHECK_FLAGS})
  endif()
  set(_targets ${target}_sim)

  if(FOO_WITH_CUDA AND _all)
    add_library(${target}_cuda OBJECT ${_all})
    target_include_directories(${target}_cuda PRIVATE "${PROJECT_SOURCE_DIR}/csrc")
    target_compile_options(${target}_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    foo_target_warnings(${target}_cuda)
    # nvcc's fixed cost per file (cudafe++, two host compiles) dominates a generated kernel's
    # compile; CMake unity-builds CUDA sources from 3.31 on.
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.31)
      foo_unity_groups(${target}_cuda cuda_pointwise 16 ${_arg_UNITY})
    endif()
    list(APPEND _targets ${target}_cuda)
  endif()
  # Object libraries: linking them puts their objects straight into the linking library.
  set(${target}_TARGETS ${_targets} PARENT_SCOPE)
endfunction()
