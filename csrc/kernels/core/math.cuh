#pragma once
// The float/double math shim of every kernel: one name per function, overloaded on float and
// double, so code templated on its compute type calls the single-precision function for float
// (expf, tanhf, erff, ...) and the double one for double, on both targets: CUDA's device math
// library under nvcc, the C library (<cmath>, through the emulation header) on sim. 16-bit
// types compute in float (opmath_t). Pointwise formulas (yaml/ops.yaml) call these as math::exp.
#include <cmath>

#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET::math {

// FOO_HD: device code and host-device helpers (reduction accumulators) both call these.
#define FOO_MATH_UNARY(name, float_fn, double_fn)            \
  FOO_HD float name(float x) { return ::float_fn(x); }      \
  FOO_HD double name(double x) { return ::double_fn(x); }
#define FOO_MATH_BINARY(name, float_fn, double_fn)                      \
  FOO_HD float name(float x, float y) { return ::float_fn(x, y); }     \
  FOO_HD double name(double x, double y) { return ::double_fn(x, y); }

FOO_MATH_UNARY(exp, expf, exp)
FOO_MATH_UNARY(exp2, exp2f, exp2)
FOO_MATH_UNARY(expm1, expm1f, expm1)
FOO_MATH_UNARY(log, logf, log)
FOO_MATH_UNARY(log2, log2f, log2)
FOO_MATH_UNARY(log10, log10f, log10)
FOO_MATH_UNARY(log1p, log1pf, log1p)
FOO_MATH_UNARY(sqrt, sqrtf, sqrt)
FOO_MATH_UNARY(cbrt, cbrtf, cbrt)
FOO_MATH_UNARY(sin, sinf, sin)
FOO_MATH_UNARY(cos, cosf, cos)
FOO_MATH_UNARY(tan, tanf, tan)
FOO_MATH_UNARY(asin, asinf, asin)
FOO_MATH_UNARY(acos, acosf, acos)
FOO_MATH_UNARY(atan, atanf, atan)
FOO_MATH_UNARY(sinh, sinhf, sinh)
FOO_MATH_UNARY(cosh, coshf, cosh)
FOO_MATH_UNARY(tanh, tanhf, tanh)
FOO_MATH_UNARY(asinh, asinhf, asinh)
FOO_MATH_UNARY(acosh, acoshf, acosh)
FOO_MATH_UNARY(atanh, atanhf, atanh)
FOO_MATH_UNARY(erf, erff, erf)
FOO_MATH_UNARY(erfc, erfcf, erfc)
FOO_MATH_UNARY(lgamma, lgammaf, lgamma)
FOO_MATH_UNARY(floor, floorf, floor)
FOO_MATH_UNARY(ceil, ceilf, ceil)
FOO_MATH_UNARY(trunc, truncf, trunc)
FOO_MATH_UNARY(nearbyint, nearbyintf, nearbyint)  // torch.round: halves to even
FOO_MATH_UNARY(fabs, fabsf, fabs)
FOO_MATH_BINARY(pow, powf, pow)
FOO_MATH_BINARY(atan2, atan2f, atan2)
FOO_MATH_BINARY(hypot, hypotf, hypot)
FOO_MATH_BINARY(fmod, fmodf, fmod)
FOO_MATH_BINARY(copysign, copysignf, copysign)
FOO_MATH_BINARY(nextafter, nextafterf, nextafter)
#undef FOO_MATH_UNARY
#undef FOO_MATH_BINARY

// A correctly rounded fused multiply-add: a * b + c with one rounding.
FOO_HD float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
FOO_HD double fma(double a, double b, double c) { return ::fma(a, b, c); }

// Constants for formulas, written as M(kSqrt2) in the compute type.
constexpr double kSqrt2 = 1.41421356237309504880;     // M_SQRT2
constexpr double kSqrt1_2 = 0.70710678118654752440;   // M_SQRT1_2
constexpr double k2_SqrtPi = 1.12837916709551257390;  // M_2_SQRTPI
constexpr double kPi = 3.14159265358979323846;        // M_PI

// ---- complex (kernels/core/dtype.h complex_t), as c10::complex / std::complex compute them, in the
// part's precision; formulas call them as for real types (math::exp(self)).

// |z| without overflow or underflow in the squares.
template <typename P>
FOO_HD P abs(complex_t<P> z) { return hypot(z.re, z.im); }

template <typename P>
FOO_HD complex_t<P> conj(complex_t<P> z) { return {z.re, -z.im}; }
template <typename M>
FOO_HD M conj(M x) { return x; }  // a real number is its own conjugate

// The argument of z in (-pi, pi]; of a real number 0 or pi, NaN staying NaN (the CPU's angle_impl).
template <typename P>
FOO_HD P angle(complex_t<P> z) { return atan2(z.im, z.re); }
FOO_HD float angle(float x) { return x != x ? x : x < 0.0f ? static_cast<float>(kPi) : 0.0f; }
FOO_HD double angle(double x) { return x != x ? x : x < 0.0 ? kPi : 0.0; }

// e^z = e^re (cos im + i sin im); a real z stays exactly real (as std::exp).
template <typename P>
FOO_HD complex_t<P> exp(complex_t<P> z) {
  if (z.im == P(0)) return {exp(z.re), z.im};
  const P e = exp(z.re);
  return {e * cos(z.im), e * sin(z.im)};
}

// The principal logarithm: log|z| + i arg z.
template <typename P>
FOO_HD complex_t<P> log(complex_t<P> z) { return {log(hypot(z.re, z.im)), atan2(z.im, z.re)}; }

// The principal square root (real part >= 0), as C99's csqrt: from |re| and |z|, avoiding the
// cancellation of (|z| - re) for negative re; sqrt(+-0 + yi) keeps y's sign for y = 0.
template <typename P>
FOO_HD complex_t<P> sqrt(complex_t<P> z) {
  const P x = z.re, y = z.im;
  if (x == P(0) && y == P(0)) return {P(0), y};
  if (y - y != P(0) && y == y) return {fabs(y), y};  // y infinite: inf + i y
  const P t = sqrt((fabs(x) + hypot(x, y)) * P(0.5));
  if (x >= P(0)) return {t, y / (P(2) * t)};
  return {fabs(y) / (P(2) * t), copysign(t, y)};
}

// z / |z|, 0 for 0 (torch.sgn).
template <typename P>
FOO_HD complex_t<P> sgn(complex_t<P> z) {
  if (z.re == P(0) && z.im == P(0)) return {P(0), P(0)};
  const P a = hypot(z.re, z.im);
  return {z.re / a, z.im / a};
}

// r (cos theta + i sin theta) (torch.polar).
template <typename M>
FOO_HD complex_of_t<M> polar(M r, M theta) { return {r * cos(theta), r * sin(theta)}; }

}  // namespace foo::kernels::FOO_TARGET::math
