// Binary arithmetic: add, sub, mul, div. Each is a functor over opmath_t (float for 16-bit
// floats) instantiated by the elementwise launcher for every dtype the op supports.
#include "kernels/binary.h"
#include "kernels/elementwise.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
struct AddFn {
  opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const {
    return cast<T>(static_cast<opmath_t<T>>(a) + alpha * static_cast<opmath_t<T>>(b));
  }
};

template <typename T>
struct MulFn {
  __device__ T operator()(T a, T b) const {
    return cast<T>(static_cast<opmath_t<T>>(a) * static_cast<opmath_t<T>>(b));
  }
};

// Integer division never traps: x / 0 gives 0 (the CPU raises, CUDA returns garbage) and
// MIN / -1 wraps, where the host CPU's divide instruction would fault.
template <typename T>
__device__ __forceinline__ T safe_int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}

// Floor division as c10::div_floor_floating / div_floor_integer compute it, so results match the
// CPU; every step rounds to T, as the CPU's arithmetic in T does (a no-op for float and double).
template <typename T, typename M>
__device__ __forceinline__ M floor_div_float(M a, M b) {
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

template <typename T>
struct DivFn {
  DivMode mode;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      const T quotient = safe_int_div(a, b);
      if constexpr (std::is_signed_v<T>) {  // an unsigned quotient is already floored
        if (mode == DivMode::Floor && b != 0 && (a < 0) != (b < 0) && static_cast<T>(quotient * b) != a) {
          return static_cast<T>(quotient - 1);
        }
      }
      return quotient;
    } else {
      using M = opmath_t<T>;
      const M x = static_cast<M>(a), y = static_cast<M>(b);
      if (mode == DivMode::True) return cast<T>(x / y);
      // The CPU rounds a 16-bit quotient to T before truncating; so do we, to agree with it.
      if (mode == DivMode::Trunc) return cast<T>(trunc(static_cast<M>(cast<T>(x / y))));
      return cast<T>(floor_div_float<T>(x, y));
    }
  }
};

}  // namespace

void add(Stream stream, DType dtype, const ElementwiseGeometry& g, double alpha) {
  dispatch<kAllTypes>(dtype, "add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("add", stream, g, AddFn<T>{static_cast<opmath_t<T>>(alpha)});
  });
}

void sub(Stream stream, DType dtype, const ElementwiseGeometry& g, double alpha) {
  dispatch<kNumericTypes>(dtype, "sub", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("sub", stream, g, AddFn<T>{static_cast<opmath_t<T>>(-alpha)});
  });
}

void mul(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kAllTypes>(dtype, "mul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("mul", stream, g, MulFn<T>{});
  });
}

void div(Stream stream, DType dtype, const ElementwiseGeometry& g, DivMode mode) {
  dispatch<kNumericTypes>(dtype, "div", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("div", stream, g, DivFn<T>{mode});
  });
}

}  // namespace foo::kernels::FOO_TARGET
