# What the build checks on torch_foo's own code.

# foo_target_warnings(<target>): -Wall -Wextra on our sources, C++ and CUDA (nvcc passes them to
# the host compiler). FOO_WERROR=ON makes them errors (CI); it is off by default because a
# compiler or torch version the project was not built with may warn where ours did not. Torch,
# Python and CUDA headers come from imported targets, whose include directories CMake passes as
# -isystem: their warnings do not count.
function(foo_target_warnings target)
  set(_cxx -Wall -Wextra)
  set(_cuda -Xcompiler=-Wall,-Wextra)
  if(FOO_WERROR)
    # Except -Wmaybe-uninitialized: GCC 12 reports it inside torch's SmallVector (DimVector(n, 0))
    # once inlined into our code, where -isystem no longer hides it; a false positive that
    # depends on the optimiser's inlining, so it stays a warning.
    # Likewise -Wstringop-overflow: with torch 2.14 (C++20) GCC 12 reports a memcpy "bound
    # exceeding the maximum object size" inside libstdc++'s char_traits once std::string code is
    # inlined into csrc/runtime/profiler.cpp: a false positive of the same kind.
    list(APPEND _cxx -Werror -Wno-error=maybe-uninitialized -Wno-error=stringop-overflow)
    list(APPEND _cuda -Xcompiler=-Werror,-Wno-error=maybe-uninitialized --Werror=all-warnings)
  endif()
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${_cxx}>"
    "$<$<COMPILE_LANGUAGE:CUDA>:${_cuda}>")
endfunction()

# foo_complete_link(<shared library>): every symbol must resolve when the library links. A kernel
# declared but never defined, or defined with other parameter types than its declaration (another
# mangled name), then fails the build naming the symbol, instead of failing `import torch`
# through autoload. Not for Python extension modules, which take libpython's symbols from the
# interpreter at load time. tests/test_build_checks.py proves it on a small broken library.
function(foo_complete_link target)
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
endfunction()
