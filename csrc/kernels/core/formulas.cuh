#pragma once
// Helpers the pointwise formulas of yaml/ops.yaml call (math::...), for what one expression
// cannot say: integer arithmetic that must wrap or never trap, and the CPU's own formulas
// (NaN rules, fused steps, rounding to T between steps) that results must match bit for bit.
// Each takes and returns the compute type M (opmath_t<T>: float for 16-bit floats).
#include <cfloat>
#include <cmath>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET::math {

// -x and |x| of integers through unsigned arithmetic (-INT_MIN == INT_MIN), as the CPU's two's
// complement negation does, without signed overflow.
template <typename M>
__device__ __forceinline__ M neg(M x) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
    using U = std::make_unsigned_t<M>;
    return static_cast<M>(static_cast<U>(0) - static_cast<U>(x));
  } else {
    return -x;
  }
}

template <typename M>
__device__ __forceinline__ M abs(M x) {
  if constexpr (std::is_unsigned_v<M>) {
    return x;
  } else if constexpr (std::is_integral_v<M>) {
    return x < 0 ? neg(x) : x;
  } else {
    return fabs(x);
  }
}

// -1, 0 or 1; NaN gives 0, as on the CPU.
template <typename M>
__device__ __forceinline__ M sign(M x) {
  if constexpr (std::is_unsigned_v<M>) {
    return static_cast<M>(M(0) < x);
  } else {
    return static_cast<M>((M(0) < x) - (x < M(0)));
  }
}

// max(x, y) / min(x, y) propagating NaN (torch.maximum); the first operand on ties (std::max).
template <typename M>
__device__ __forceinline__ M maximum(M x, M y) {
  if constexpr (!std::is_integral_v<M>) {
    if (x != x) return x;
    if (y != y) return y;
  }
  return x < y ? y : x;
}

template <typename M>
__device__ __forceinline__ M minimum(M x, M y) {
  if constexpr (!std::is_integral_v<M>) {
    if (x != x) return x;
    if (y != y) return y;
  }
  return y < x ? y : x;
}

// clamp with optional bounds, as the CPU's clamp kernels: a NaN bound makes the result NaN;
// a NaN x stays NaN (std::max / std::min keep their first operand).
template <typename M>
__device__ __forceinline__ M clamp(M x, bool has_lo, M lo, bool has_hi, M hi) {
  if constexpr (!std::is_integral_v<M>) {
    if ((has_lo && lo != lo) || (has_hi && hi != hi)) return static_cast<M>(NAN);
  }
  if (has_lo) x = x < lo ? lo : x;
  if (has_hi) x = hi < x ? hi : x;
  return x;
}

template <typename M>
__device__ __forceinline__ M clamp_min(M x, M lo) { return clamp(x, true, lo, false, lo); }
template <typename M>
__device__ __forceinline__ M clamp_max(M x, M hi) { return clamp(x, false, hi, true, hi); }

// Integer division never traps: x / 0 gives 0 (the CPU raises, CUDA returns garbage) and
// MIN / -1 wraps, where the host CPU's divide instruction would fault.
template <typename M>
__device__ __forceinline__ M div_trunc_int(M a, M b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<M>) {
    if (b == -1) return neg(a);
  }
  return static_cast<M>(a / b);
}

template <typename M>
__device__ __forceinline__ M div_floor_int(M a, M b) {
  const M q = div_trunc_int(a, b);
  if constexpr (std::is_signed_v<M>) {  // unsigned quotients are already floored
    if (b != 0 && (a < 0) != (b < 0) && static_cast<M>(q * b) != a) return static_cast<M>(q - 1);
  }
  return q;
}

// remainder: Python's modulo, the result takes the divisor's sign (c10's remainder); x % 0 gives 0
// (the CPU raises) and x % -1 gives 0 without the MIN % -1 fault.
template <typename M>
__device__ __forceinline__ M remainder_int(M a, M b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<M>) {
    if (b == -1) return 0;
    const M mod = static_cast<M>(a % b);
    return mod != 0 && (b < 0) != (mod < 0) ? static_cast<M>(mod + b) : mod;
  } else {
    return static_cast<M>(a % b);
  }
}

// fmod: C's remainder, the result takes the dividend's sign; the same guards as remainder_int.
template <typename M>
__device__ __forceinline__ M fmod_int(M a, M b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<M>) {
    if (b == -1) return 0;
  }
  return static_cast<M>(a % b);
}

// remainder of floats as the CPU computes it: fmod, then the divisor added when the signs differ,
// each step rounded to T as the CPU's arithmetic in T does (a no-op for float and double).
template <typename T, typename M>
__device__ __forceinline__ M remainder_float(M a, M b) {
  const auto r = [](M v) { return static_cast<M>(cast<T>(v)); };
  const M mod = r(fmod(a, b));
  return mod != 0 && (b < 0) != (mod < 0) ? r(mod + b) : mod;
}

// Floor division as c10::div_floor_floating computes it, every step rounded to T as the CPU's
// arithmetic in T does (a no-op for float and double).
template <typename T, typename M>
__device__ __forceinline__ M div_floor_float(M a, M b) {
  const auto r = [](M v) { return static_cast<M>(cast<T>(v)); };
  if (b == 0) return a / b;
  const M mod = r(fmod(a, b));
  M div = r(r(a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = r(div - M(1));
  if (div == 0) return copysign(M(0), r(a / b));
  M floored = floor(div);
  if (r(div - floored) > M(0.5)) floored = r(floored + M(1));
  return floored;
}

// c10's powi: square-and-multiply; a negative exponent gives 1, -1 or 0 as integer division would.
template <typename M>
__device__ __forceinline__ M powi(M base, M exponent) {
  if constexpr (std::is_signed_v<M>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? M(-1) : M(1);
      return 0;
    }
  }
  // Narrow types would promote to int (and could overflow it): multiply in >= 32-bit unsigned.
  using U = std::conditional_t<(sizeof(M) < 4), uint32_t, std::make_unsigned_t<M>>;
  U result = 1, b = static_cast<U>(base);
  for (U e = static_cast<U>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<M>(result);
}

// at::lerp: from whichever end is nearer the weight (fused, as the CPU's vectorised loop).
template <typename M>
__device__ __forceinline__ M lerp(M self, M end, M weight) {
  const M diff = end - self;
  const bool small = (weight < M(0) ? -weight : weight) < M(0.5);
  return small ? fma(weight, diff, self) : fma(weight - M(1), diff, end);
}

// A value rounded to the element type T and back, for formulas that replay the CPU's arithmetic
// in T (16-bit floats round after each step there).
template <typename T, typename M>
__device__ __forceinline__ M round_to(M v) {
  return static_cast<M>(cast<T>(v));
}

// x is +inf / -inf (torch.isposinf, isneginf, nan_to_num); integers have neither.
template <typename M>
__device__ __forceinline__ bool is_posinf(M x) {
  if constexpr (std::is_floating_point_v<M>) return x == M(INFINITY);
  else return false;
}
template <typename M>
__device__ __forceinline__ bool is_neginf(M x) {
  if constexpr (std::is_floating_point_v<M>) return x == M(-INFINITY);
  else return false;
}

// +inf and a quiet NaN in the compute type, for formulas (logit, logit_backward): INFINITY and NAN
// are macros, which a formula cannot name.
template <typename M>
__device__ __forceinline__ M infinity() { return static_cast<M>(INFINITY); }
template <typename M>
__device__ __forceinline__ M quiet_nan() { return static_cast<M>(NAN); }

// The largest finite value of the element type T, in the compute type M: what nan_to_num puts
// for +inf by default (its negation, the lowest value, for -inf), as numeric_limits<T>::max().
template <typename T, typename M>
__device__ __forceinline__ M finite_max() {
  if constexpr (std::is_same_v<T, half_t>) return M(0x1.FFCp15f);         // 65504
  else if constexpr (std::is_same_v<T, bfloat16_t>) return M(0x1.FEp127f);  // 3.3895e38
  else if constexpr (std::is_same_v<T, float>) return M(FLT_MAX);
  else return M(DBL_MAX);
}

}  // namespace foo::kernels::FOO_TARGET::math
