#pragma once
// log, exp and sin/cos for the random kernels, built only from IEEE-exact steps (exact_math.h's
// correctly rounded operations, exact scalings and splits), so sim, cuda and the NumPy model in
// tests/philox_reference.py compute the same bits. libm and CUDA's math library differ in their
// last bits, which would make a seed draw different numbers on the two drivers. Accuracy: a few
// ulp of double, far below what any random fill rounds to.
#include <cstdint>
#include <cstring>

#include "kernels/core/exact_math.h"
#include "kernels/core/kernel.h"

namespace foo::kernels {

// 2^e for -1022 <= e <= 1023, from its bits.
FOO_HD double pow2(int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

// c[0] * z^(N-1) + ... + c[N-1] by Horner's rule, each step rounded separately.
template <int N>
__device__ inline double horner(double z, const double (&c)[N]) {
  double p = c[0];
#pragma unroll
  for (int j = 1; j < N; ++j) p = add_rn(mul_rn(p, z), c[j]);
  return p;
}

// log(w) for w in (0, 1], from IEEE-exact steps only: w = m * 2^e with m in [sqrt(1/2), sqrt(2)),
// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), as a series in s^2 (|s| < 0.172: 13 terms reach
// double precision).
__device__ inline double det_log(double w) {
  int e;
  double m = frexp(w, &e);  // exact; m in [0.5, 1)
  if (m < 0.7071067811865476) {
    m = m * 2.0;  // exact
    e -= 1;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = div_rn(f, add_rn(2.0, f));
  const double z = mul_rn(s, s);
  // 1/(2k+1), k = 12 .. 1, then 1
  const double atanh_series[] = {0.04, 0.043478260869565216, 0.047619047619047616, 0.05263157894736842,
                                 0.058823529411764705, 0.06666666666666667, 0.07692307692307693,
                                 0.09090909090909091, 0.1111111111111111, 0.14285714285714285, 0.2,
                                 0.3333333333333333, 1.0};
  const double p = horner(z, atanh_series);
  const double log_m = mul_rn(s, p) * 2.0;  // exact scaling
  return add_rn(mul_rn(static_cast<double>(e), 0.6931471805599453), log_m);
}

// exp(x): x = k ln2 + r with k = rint(x / ln2), ln2 split in two (Cody-Waite: k * kLn2Hi is
// exact), exp(r) for |r| <= 0.35 by its Taylor series to r^14 (error below 2^-53), then scaled by
// 2^k in steps that are exact except a final correctly rounded one (subnormal results).
__device__ inline double det_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return static_cast<double>(INFINITY);
  if (x < -745.1332191019412) return 0.0;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 trailing zero bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double k = rint(mul_rn(x, 1.4426950408889634));
  const double r = sub_rn(sub_rn(x, mul_rn(k, kLn2Hi)), mul_rn(k, kLn2Lo));
  // 1/14!, 1/13!, ..., 1/1!, 1/0!
  const double exp_series[] = {1.1470745597729725e-11, 1.6059043836821613e-10, 2.08767569878681e-09,
                               2.505210838544172e-08, 2.755731922398589e-07, 2.7557319223985893e-06,
                               2.48015873015873e-05, 0.0001984126984126984, 0.001388888888888889,
                               0.008333333333333333, 0.041666666666666664, 0.16666666666666666, 0.5, 1.0, 1.0};
  const double p = horner(r, exp_series);
  const int e = static_cast<int>(k);  // in [-1075, 1024]
  if (e < -1022) return mul_rn(mul_rn(p, pow2(e + 64)), pow2(-64));
  if (e > 1023) return mul_rn(mul_rn(p, pow2(e - 1)), 2.0);
  return mul_rn(p, pow2(e));
}

// sin and cos of 2*pi*u for u in [0, 1), from IEEE-exact steps only: 8u splits exactly into an
// octant o and a fraction f; phi = f * pi/4 (or (1 - f) * pi/4 in odd octants) is in [0, pi/4],
// where Taylor series to phi^19 / phi^20 reach double precision; quarter turns are exact swaps.
__device__ inline void det_sincos_2pi(double u, double* sin_out, double* cos_out) {
  const double t = u * 8.0;  // exact
  const int o = static_cast<int>(t);
  const double f = t - static_cast<double>(o);  // exact
  const bool odd = (o & 1) != 0;
  const double phi = mul_rn(odd ? 1.0 - f : f, 0.7853981633974483);  // 1 - f is exact
  const double z = mul_rn(phi, phi);
  // (-1)^k / (2k+1)!, k = 9 .. 1, and (-1)^k / (2k)!, k = 10 .. 1
  const double sin_series[] = {-8.22063524662433e-18, 2.8114572543455206e-15, -7.647163731819816e-13,
                               1.6059043836821613e-10, -2.505210838544172e-08, 2.7557319223985893e-06,
                               -0.0001984126984126984, 0.008333333333333333, -0.16666666666666666};
  const double cos_series[] = {4.110317623312165e-19, -1.5619206968586225e-16, 4.779477332387385e-14,
                               -1.1470745597729725e-11, 2.08767569878681e-09, -2.755731922398589e-07,
                               2.48015873015873e-05, -0.001388888888888889, 0.041666666666666664, -0.5};
  const double q = horner(z, sin_series), r = horner(z, cos_series);
  double s = add_rn(phi, mul_rn(mul_rn(phi, z), q));
  const double c = add_rn(1.0, mul_rn(z, r));
  // angle = quarter * pi/2 + phi (even octant) or quarter * pi/2 - phi (odd octant)
  const int quarter = (odd ? o + 1 : o) / 2;
  if (odd) s = -s;
  switch (quarter & 3) {
    case 0: *sin_out = s; *cos_out = c; break;
    case 1: *sin_out = c; *cos_out = -s; break;
    case 2: *sin_out = -s; *cos_out = -c; break;
    default: *sin_out = -c; *cos_out = s; break;
  }
}

}  // namespace foo::kernels
