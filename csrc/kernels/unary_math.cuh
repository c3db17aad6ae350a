#pragma once
// Math functions of the unary and activation kernels, overloaded on float and double so a functor
// templated on its compute type calls the single-precision function for float (expf, tanhf, erff,
// ...) and the double one for double, on both targets: CUDA's device math library under nvcc, the
// C library (<cmath>, through the emulation header) on sim. 16-bit types compute in float.
#include "kernels/kernel.h"

namespace foo::kernels::FOO_TARGET::math {

#define FOO_UNARY_MATH(name, float_fn, double_fn)                              \
  __device__ __forceinline__ float name(float x) { return ::float_fn(x); }    \
  __device__ __forceinline__ double name(double x) { return ::double_fn(x); }

FOO_UNARY_MATH(exp, expf, exp)
FOO_UNARY_MATH(log, logf, log)
FOO_UNARY_MATH(log1p, log1pf, log1p)
FOO_UNARY_MATH(sqrt, sqrtf, sqrt)
FOO_UNARY_MATH(sin, sinf, sin)
FOO_UNARY_MATH(cos, cosf, cos)
FOO_UNARY_MATH(tanh, tanhf, tanh)
FOO_UNARY_MATH(erf, erff, erf)
FOO_UNARY_MATH(fabs, fabsf, fabs)
#undef FOO_UNARY_MATH

}  // namespace foo::kernels::FOO_TARGET::math
