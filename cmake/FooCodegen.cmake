# Runs `python -m codegen` whenever the manifest, codegen itself or the torch version changes.
# Codegen writes a file only when its content changes; Ninja's restat then recompiles only the
# translation units whose generated inputs really changed.
set(FOO_GENERATED_FILES
  "${FOO_GENERATED_DIR}/FooNativeFunctions.h"
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
