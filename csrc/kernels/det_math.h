#pragma once
// log, exp and sin/cos for the random kernels, built only from IEEE-exact steps (exact_math.h's
// correctly rounded operations, exact scalings and splits), so sim, cuda and the NumPy model in
// tests/philox_reference.py compute the same bits. libm and CUDA's math library differ in their
// last bits, which would make a seed draw different numbers on the two drivers. Accuracy: a few
// ulp of double, far below what any random fill rounds to.
#include <cstdint>
#include <cstring>

#include "kernels/exact_math.h"
#include "kernels/kernel.h"

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
  double p = 0.04;  // 1/(2k+1), k = 12 .. 1, then 1
  p = add_rn(mul_rn(p, z), 0.043478260869565216);
  p = add_rn(mul_rn(p, z), 0.047619047619047616);
  p = add_rn(mul_rn(p, z), 0.05263157894736842);
  p = add_rn(mul_rn(p, z), 0.058823529411764705);
  p = add_rn(mul_rn(p, z), 0.06666666666666667);
  p = add_rn(mul_rn(p, z), 0.07692307692307693);
  p = add_rn(mul_rn(p, z), 0.09090909090909091);
  p = add_rn(mul_rn(p, z), 0.1111111111111111);
  p = add_rn(mul_rn(p, z), 0.14285714285714285);
  p = add_rn(mul_rn(p, z), 0.2);
  p = add_rn(mul_rn(p, z), 0.3333333333333333);
  p = add_rn(mul_rn(p, z), 1.0);
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
  double p = 1.1470745597729725e-11;  // 1/14!, then 1/13! .. 1/1!, 1
  p = add_rn(mul_rn(p, r), 1.6059043836821613e-10);
  p = add_rn(mul_rn(p, r), 2.08767569878681e-09);
  p = add_rn(mul_rn(p, r), 2.505210838544172e-08);
  p = add_rn(mul_rn(p, r), 2.755731922398589e-07);
  p = add_rn(mul_rn(p, r), 2.7557319223985893e-06);
  p = add_rn(mul_rn(p, r), 2.48015873015873e-05);
  p = add_rn(mul_rn(p, r), 0.0001984126984126984);
  p = add_rn(mul_rn(p, r), 0.001388888888888889);
  p = add_rn(mul_rn(p, r), 0.008333333333333333);
  p = add_rn(mul_rn(p, r), 0.041666666666666664);
  p = add_rn(mul_rn(p, r), 0.16666666666666666);
  p = add_rn(mul_rn(p, r), 0.5);
  p = add_rn(mul_rn(p, r), 1.0);
  p = add_rn(mul_rn(p, r), 1.0);
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
  double q = -8.22063524662433e-18;  // (-1)^k / (2k+1)!, k = 9 .. 1
  q = add_rn(mul_rn(q, z), 2.8114572543455206e-15);
  q = add_rn(mul_rn(q, z), -7.647163731819816e-13);
  q = add_rn(mul_rn(q, z), 1.6059043836821613e-10);
  q = add_rn(mul_rn(q, z), -2.505210838544172e-08);
  q = add_rn(mul_rn(q, z), 2.7557319223985893e-06);
  q = add_rn(mul_rn(q, z), -0.0001984126984126984);
  q = add_rn(mul_rn(q, z), 0.008333333333333333);
  q = add_rn(mul_rn(q, z), -0.16666666666666666);
  double r = 4.110317623312165e-19;  // (-1)^k / (2k)!, k = 10 .. 1
  r = add_rn(mul_rn(r, z), -1.5619206968586225e-16);
  r = add_rn(mul_rn(r, z), 4.779477332387385e-14);
  r = add_rn(mul_rn(r, z), -1.1470745597729725e-11);
  r = add_rn(mul_rn(r, z), 2.08767569878681e-09);
  r = add_rn(mul_rn(r, z), -2.755731922398589e-07);
  r = add_rn(mul_rn(r, z), 2.48015873015873e-05);
  r = add_rn(mul_rn(r, z), -0.001388888888888889);
  r = add_rn(mul_rn(r, z), 0.041666666666666664);
  r = add_rn(mul_rn(r, z), -0.5);
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
