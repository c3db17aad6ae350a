# Compiling CUDA kernel sources (.cu) for both targets of the foo device. Included by torch_foo's
# own build (FooKernels.cmake) and installed with TorchFooConfig.cmake for extensions
# (docs/extensions.md).

# The sim target's checked mode (docs/emulation.md, "Checked mode"): GCC's kernel-address
# instrumentation in its out-of-line form, so that every load and store of a kernel calls the
# checks libtorch_foo defines (csrc/sim/checked.cpp); none of ASan's runtime is used. -g1 gives
# the line tables the reports name source lines from. Mirrored in torch_foo/utils/cpp_extension.py.
set(TORCH_FOO_SIM_CHECK_FLAGS -DFOO_SIM_CHECKED -fsanitize=kernel-address
    --param=asan-instrumentation-with-call-threshold=0 --param=asan-stack=0 --param=asan-globals=0 -g1)

# torch_foo_sim_wrappers(<out_var> <dir> <file.cu>...): for each .cu file a one-line C++ source
# in <dir> that includes it. A source file's language is per directory in CMake, so the sim target
# compiles the wrapper as C++ instead of the .cu file itself; errors still name the .cu file.
function(torch_foo_sim_wrappers out_var dir)
  set(_wrappers)
  foreach(_cu IN LISTS ARGN)
    get_filename_component(_abs "${_cu}" ABSOLUTE)
    # Named after the path below the calling directory, so a/x.cu and b/x.cu cannot collide
    # (torch_foo's generated/pointwise/x.cu and csrc/kernels/x.cu).
    file(RELATIVE_PATH _name "${CMAKE_CURRENT_SOURCE_DIR}" "${_abs}")
    string(MAKE_C_IDENTIFIER "${_name}" _name)
    set(_wrapper "${dir}/${_name}.cpp")
    file(CONFIGURE OUTPUT "${_wrapper}" CONTENT "#include \"${_abs}\"\n")
    list(APPEND _wrappers "${_wrapper}")
  endforeach()
  set(${out_var} ${_wrappers} PARENT_SCOPE)
endfunction()

# torch_foo_add_kernels(<target> <file.cu>...): compiles the kernel sources into <target> (an
# extension module or library that links TorchFoo::torch_foo): always as host C++ for the sim
# target, and by nvcc for the cuda target when the project enabled the CUDA language and
# TORCH_FOO_EXTENSION_CUDA is not OFF. <target> then sees FOO_WITH_CUDA when the cuda build is in,
# so FOO_CALL_KERNEL_IN picks the launcher of the running driver.
function(torch_foo_add_kernels target)
  torch_foo_sim_wrappers(_wrappers "${CMAKE_CURRENT_BINARY_DIR}/torch_foo_sim/${target}" ${ARGN})
  add_library(${target}_foo_sim OBJECT ${_wrappers})
  # Kernels include no torch header: only torch_foo's, so each compile stays fast.
  target_include_directories(${target}_foo_sim PRIVATE ${TORCH_FOO_INCLUDE_DIRS})
  # Outside libtorch_foo, the emulated threads' built-ins are read through exported functions.
  target_compile_definitions(${target}_foo_sim PRIVATE FOO_KERNEL_TARGET_SIM FOO_SIM_EXTENSION)
  # FOO_SIM_SANITIZE=ON: the kernels can be checked (TORCH_FOO_SIM_CHECK at run time).
  if(FOO_SIM_SANITIZE)
    target_compile_options(${target}_foo_sim PRIVATE ${TORCH_FOO_SIM_CHECK_FLAGS})
  endif()
  target_compile_features(${target}_foo_sim PRIVATE cxx_std_17)
  set_target_properties(${target}_foo_sim PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PRIVATE ${target}_foo_sim)

  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("CUDA" IN_LIST _languages AND NOT TORCH_FOO_EXTENSION_CUDA STREQUAL "OFF")
    find_package(CUDAToolkit REQUIRED)
    add_library(${target}_foo_cuda OBJECT ${ARGN})
    target_include_directories(${target}_foo_cuda PRIVATE ${TORCH_FOO_INCLUDE_DIRS})
    target_compile_definitions(${target}_foo_cuda PRIVATE FOO_KERNEL_TARGET_CUDA)
    target_compile_options(${target}_foo_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    set_target_properties(${target}_foo_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 17)
    target_link_libraries(${target} PRIVATE ${target}_foo_cuda CUDA::cudart_static)
    target_compile_definitions(${target} PRIVATE FOO_WITH_CUDA)
  endif()
endfunction()
