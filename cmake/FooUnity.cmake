# Unity (jumbo) builds of the generated files: one compile for several files that each repeat the
# same headers and template instantiations. Measured on the 2-core machine (docs/build.md): 8
# generated pointwise host files take 19.0 s one by one and 3.7 s as one unit (torch's headers
# and TensorIterator's templates, parsed and instantiated once); 8 sim kernels 9.0 s and 6.8 s
# (their cost is mostly their own instantiations), so the sim target gets smaller units, which
# keeps the rebuild after adding one op short. Hand-written sources stay one unit each: they are
# what developers edit.

# foo_unity_groups(<target> <name> <units> <source>...): compile <source>s of <target> in <units>
# units. A file's unit is chosen by a hash of its name, not by its place in the list, so adding or
# removing an op changes one unit and only that one recompiles.
function(foo_unity_groups target name units)
  if(NOT FOO_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  foreach(_source IN LISTS ARGN)
    get_filename_component(_file "${_source}" NAME)
    string(MD5 _hash "${_file}")
    string(SUBSTRING "${_hash}" 0 6 _hash)
    math(EXPR _group "0x${_hash} % ${units}")
    set_source_files_properties("${_source}" PROPERTIES UNITY_GROUP "${name}_${_group}")
  endforeach()
endfunction()
