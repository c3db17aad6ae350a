// maximum / minimum (NaN-propagating) and pow. Integer pow never traps: it only multiplies, in
// unsigned arithmetic (wrapping as the CPU's does, without signed-overflow UB).
#include "kernels/binary_math.h"
#include "kernels/elementwise.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <bool kMax, typename T>
struct MaxMinFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return kMax ? (a || b) : (a && b);
    } else {
      using M = opmath_t<T>;
      const M x = static_cast<M>(a), y = static_cast<M>(b);
      if constexpr (!std::is_integral_v<T>) {
        if (x != x) return a;
        if (y != y) return b;
      }
      // std::max / std::min: the first operand on ties.
      return kMax ? (x < y ? b : a) : (y < x ? b : a);
    }
  }
};

__device__ __forceinline__ float pow_math(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow_math(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float sqrt_math(float a) { return sqrtf(a); }
__device__ __forceinline__ double sqrt_math(double a) { return sqrt(a); }

// c10's powi: square-and-multiply; a negative exponent gives 1, -1 or 0 as integer division would.
template <typename T>
__device__ __forceinline__ T powi(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  // Narrow types would promote to int (and could overflow it): multiply in >= 32-bit unsigned.
  using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  U result = 1, b = static_cast<U>(base);
  for (U e = static_cast<U>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <typename T>
struct PowTensorFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return powi(a, b);
    } else {
      using M = opmath_t<T>;
      return cast<T>(pow_math(static_cast<M>(a), static_cast<M>(b)));
    }
  }
};

template <typename T>
struct PowScalarFn {
  PowKind kind;
  ScalarArg exponent;
  __device__ T operator()(T a) const {
    if (kind == PowKind::One) return cast<T>(1);
    if (kind == PowKind::Identity) return a;
    if constexpr (std::is_same_v<T, bool>) {
      return a;  // unreachable: the host refuses other kinds for bool
    } else if constexpr (std::is_integral_v<T>) {
      return powi(a, exponent.as<T>());
    } else {
      using M = opmath_t<T>;
      const M x = static_cast<M>(a);
      switch (kind) {
        case PowKind::Sqrt: return cast<T>(sqrt_math(x));
        case PowKind::Rsqrt: return cast<T>(M(1) / sqrt_math(x));
        case PowKind::Reciprocal: return cast<T>(M(1) / x);
        case PowKind::Square: return cast<T>(x * x);
        // The CPU multiplies in T: a 16-bit square is rounded before the next operation.
        case PowKind::Cube: return cast<T>(static_cast<M>(cast<T>(x * x)) * x);
        case PowKind::InvSquare: return cast<T>(M(1) / static_cast<M>(cast<T>(x * x)));
        default: break;
      }
      return cast<T>(pow_math(x, static_cast<M>(exponent.as<T>())));
    }
  }
};

}  // namespace

void maximum(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kAllTypes>(dtype, "maximum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("maximum", stream, g, MaxMinFn<true, T>{});
  });
}

void minimum(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kAllTypes>(dtype, "minimum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("minimum", stream, g, MaxMinFn<false, T>{});
  });
}

void pow_tensor(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kNumericTypes>(dtype, "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("pow", stream, g, PowTensorFn<T>{});
  });
}

void pow_scalar(Stream stream, DType dtype, const ElementwiseGeometry& g, PowKind kind, ScalarArg exponent) {
  dispatch<kAllTypes>(dtype, "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>("pow", stream, g, PowScalarFn<T>{kind, exponent});
  });
}

}  // namespace foo::kernels::FOO_TARGET
