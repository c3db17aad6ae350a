# Runs `python -m codegen` whenever the manifest, codegen itself or the torch version changes.
# Codegen writes a file only when its content changes; Ninja's restat then recompiles only the
# translation units whose generated inputs really changed.
set(FOO_GENERATED_FILES
  "${FOO_GENERATED_DIR}/FooNativeFunctions.h"
  "${FOO_GENERATED_DIR}/FooStructured.h"
  "${FOO_GENERATED_DIR}/RegisterFoo.cpp"
  "${FOO_GENERATED_DIR}/FooCustomOps.cpp"
  "${FOO_GENERATED_DIR}/FooPythonOps.cpp"
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
