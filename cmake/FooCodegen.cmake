# Runs `python -m codegen` whenever the manifest, codegen itself or the torch version changes.
# Codegen writes a file only when its content changes; Ninja's restat then recompiles only the
# translation units whose generated inputs really changed.

# Where it writes. generated/ is committed for one torch version (generated/TORCH_VERSION); a
# build against another supported version (pyproject.toml: 2.11, 2.12) generates into the build
# directory instead, so the committed files stay as they are.
string(REGEX MATCH "^[0-9]+\\.[0-9]+" FOO_TORCH_MINOR_VERSION "${FOO_TORCH_VERSION}")
set(_foo_committed_torch "")
if(EXISTS "${PROJECT_SOURCE_DIR}/generated/TORCH_VERSION")
  file(STRINGS "${PROJECT_SOURCE_DIR}/generated/TORCH_VERSION" _foo_committed_torch REGEX "^[0-9]")
endif()
if(NOT FOO_GENERATED_DIR)
  if(_foo_committed_torch STREQUAL FOO_TORCH_MINOR_VERSION)
    set(FOO_GENERATED_DIR "${PROJECT_SOURCE_DIR}/generated")
    set(FOO_PYI "${PROJECT_SOURCE_DIR}/torch_foo/ops.pyi")
  else()
    set(FOO_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")
    message(STATUS "codegen: generated/ is for torch ${_foo_committed_torch}; "
                   "torch ${FOO_TORCH_MINOR_VERSION} generates into ${FOO_GENERATED_DIR}")
  endif()
endif()
if(NOT FOO_PYI)
  set(FOO_PYI "${FOO_GENERATED_DIR}/ops.pyi")
endif()

# The aten registrations come in REGISTER_SHARDS files (codegen/gen_register.py says how many).
file(STRINGS "${PROJECT_SOURCE_DIR}/codegen/gen_register.py" _foo_shards REGEX "^REGISTER_SHARDS = [0-9]+$")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/codegen/gen_register.py")
string(REGEX REPLACE "^REGISTER_SHARDS = " "" _foo_shards "${_foo_shards}")
set(FOO_REGISTER_SOURCES)
math(EXPR _foo_last_shard "${_foo_shards} - 1")
foreach(_i RANGE ${_foo_last_shard})
  list(APPEND FOO_REGISTER_SOURCES "${FOO_GENERATED_DIR}/RegisterFoo_${_i}.cpp")
endforeach()

# Every output must be a byproduct, so that Ninja re-checks the files including one after
# codegen ran. The per-kernel headers (native/<kernel>.h) are the ones that exist now; a header
# codegen adds is only included by files new in the same build, and the glob picks it up when
# CMake next configures.
file(GLOB _foo_kernel_headers CONFIGURE_DEPENDS "${FOO_GENERATED_DIR}/native/*.h")
set(FOO_GENERATED_FILES
  "${FOO_GENERATED_DIR}/FooNativeFunctions.h"
  "${FOO_GENERATED_DIR}/FooStructured.h"
  ${_foo_kernel_headers}
  ${FOO_REGISTER_SOURCES}
  "${FOO_GENERATED_DIR}/FooCustomOps.cpp"
  "${FOO_GENERATED_DIR}/FooPythonOps.cpp"
  "${FOO_GENERATED_DIR}/TORCH_VERSION"
  "${FOO_PYI}")
file(GLOB_RECURSE _foo_codegen_inputs CONFIGURE_DEPENDS
  "${PROJECT_SOURCE_DIR}/codegen/*.py" "${PROJECT_SOURCE_DIR}/codegen/templates/*")

add_custom_command(
  OUTPUT "${CMAKE_BINARY_DIR}/codegen.stamp"
  BYPRODUCTS ${FOO_GENERATED_FILES}
  COMMAND ${FOO_PYTHON} -m codegen
          --manifest "${FOO_MANIFEST}" --out "${FOO_GENERATED_DIR}" --pyi "${FOO_PYI}"
  COMMAND "${CMAKE_COMMAND}" -E touch "${CMAKE_BINARY_DIR}/codegen.stamp"
  DEPENDS "${FOO_MANIFEST}" ${_foo_codegen_inputs} "${CMAKE_BINARY_DIR}/torch_version.txt"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "codegen: ${FOO_MANIFEST} -> ${FOO_GENERATED_DIR}"
  VERBATIM)
add_custom_target(foo_codegen DEPENDS "${CMAKE_BINARY_DIR}/codegen.stamp")

# Pointwise entries of the manifest are one generated kernel (.cu) and host (.cpp) file each
# (generated/pointwise/). CMake must know that list when it writes the build, so codegen also
# runs here, at configure time, when its inputs are newer than the stamp, and a manifest or
# codegen edit reconfigures (CMAKE_CONFIGURE_DEPENDS). The stamp it touches keeps the build-time
# command above from running it a second time.
set(_foo_stamp "${CMAKE_BINARY_DIR}/codegen.stamp")
set(_foo_codegen_stale FALSE)
foreach(_input IN LISTS _foo_codegen_inputs FOO_MANIFEST)
  if(NOT EXISTS "${_foo_stamp}" OR "${_input}" IS_NEWER_THAN "${_foo_stamp}")
    set(_foo_codegen_stale TRUE)
  endif()
endforeach()
if("${CMAKE_BINARY_DIR}/torch_version.txt" IS_NEWER_THAN "${_foo_stamp}")
  set(_foo_codegen_stale TRUE)
endif()
if(_foo_codegen_stale)
  execute_process(
    COMMAND ${FOO_PYTHON} -m codegen --manifest "${FOO_MANIFEST}" --out "${FOO_GENERATED_DIR}" --pyi "${FOO_PYI}"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    RESULT_VARIABLE _foo_codegen_rc
    ERROR_VARIABLE _foo_codegen_error)
  if(NOT _foo_codegen_rc EQUAL 0)
    message(FATAL_ERROR "codegen failed:\n${_foo_codegen_error}")
  endif()
  file(TOUCH "${_foo_stamp}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${FOO_MANIFEST}" ${_foo_codegen_inputs})
file(GLOB FOO_POINTWISE_KERNELS "${FOO_GENERATED_DIR}/pointwise/*.cu")
file(GLOB FOO_POINTWISE_SOURCES "${FOO_GENERATED_DIR}/pointwise/*.cpp")
