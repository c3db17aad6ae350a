// where, masked_fill, lerp, addcmul, addcdiv, clamp: formulas as the CPU kernels write them, computed in
// opmath_t (float for 16-bit floats).
#include <cmath>

#include "kernels/elementwise.cuh"
#include "kernels/ternary.h"

namespace foo::kernels::FOO_TARGET {
namespace {

__device__ __forceinline__ float fma_math(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_math(double a, double b, double c) { return fma(a, b, c); }

template <typename T>
struct WhereFn {
  __device__ T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

template <typename T>
struct MaskedFillFn {
  T value;
  __device__ T operator()(T a, bool mask) const { return mask ? value : a; }
};

// at::lerp: from whichever end is nearer the weight (fused, as the CPU's vectorised loop).
template <typename M>
__device__ __forceinline__ M lerp_math(M self, M end, M weight) {
  const M diff = end - self;
  const bool small = (weight < M(0) ? -weight : weight) < M(0.5);
  return small ? fma_math(weight, diff, self) : fma_math(weight - M(1), diff, end);
}

template <typename T>
struct LerpScalarFn {
  opmath_t<T> weight;
  __device__ T operator()(T a, T b) const {
    using M = opmath_t<T>;
    return cast<T>(lerp_math<M>(static_cast<M>(a), static_cast<M>(b), weight));
  }
};

template <typename T>
struct LerpTensorFn {
  __device__ T operator()(T a, T b, T w) const {
    using M = opmath_t<T>;
    return cast<T>(lerp_math<M>(static_cast<M>(a), static_cast<M>(b), static_cast<M>(w)));
  }
};

// a + value * b * c, fused as the CPU's compiled loop computes it: fma(value * b, c, a).
template <typename T>
struct AddcmulFn {
  opmath_t<T> value;
  __device__ T operator()(T a, T b, T c) const {
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(a + value * b * c);
    } else {
      return cast<T>(fma_math(value * static_cast<M>(b), static_cast<M>(c), static_cast<M>(a)));
    }
  }
};

template <typename T>
struct AddcdivFn {
  opmath_t<T> value;
  __device__ T operator()(T a, T b, T c) const {
    using M = opmath_t<T>;
    return cast<T>(static_cast<M>(a) + value * static_cast<M>(b) / static_cast<M>(c));
  }
};

// std::max / std::min: a NaN `x` survives either; a NaN bound is ignored.
template <typename M>
__device__ __forceinline__ M max_of(M x, M lo) { return x < lo ? lo : x; }
template <typename M>
__device__ __forceinline__ M min_of(M x, M hi) { return hi < x ? hi : x; }

template <typename T>
struct ClampScalarFn {
  ClampMode mode;
  opmath_t<T> lo, hi;
  __device__ T operator()(T a) const {
    using M = opmath_t<T>;
    if constexpr (!std::is_integral_v<T>) {
      if (mode == ClampMode::Nan) return cast<T>(static_cast<M>(NAN));
    }
    M x = static_cast<M>(a);
    if (mode != ClampMode::Max) x = max_of(x, lo);
    if (mode != ClampMode::Min) x = min_of(x, hi);
    return cast<T>(x);
  }
};

template <typename T>
struct ClampTensorFn {
  __device__ T operator()(T a, T lo, T hi) const {
    using M = opmath_t<T>;
    const M l = static_cast<M>(lo), h = static_cast<M>(hi);
    if constexpr (!std::is_integral_v<T>) {
      if (l != l || h != h) return cast<T>(static_cast<M>(NAN));
    }
    return cast<T>(min_of(max_of(static_cast<M>(a), l), h));
  }
};

}  // namespace

void where(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kAllTypes>(dtype, "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, bool, T, T>("where", stream, g, WhereFn<T>{});
  });
}

void masked_fill(Stream stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value) {
  dispatch<kAllTypes>(dtype, "masked_fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, bool>("masked_fill_", stream, g, MaskedFillFn<T>{value.as<T>()});
  });
}

void lerp_scalar(Stream stream, DType dtype, const ElementwiseGeometry& g, ScalarArg weight) {
  dispatch<kFloatingTypes>(dtype, "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("lerp", stream, g, LerpScalarFn<T>{weight.as<opmath_t<T>>()});
  });
}

void lerp_tensor(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kFloatingTypes>(dtype, "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T, T>("lerp", stream, g, LerpTensorFn<T>{});
  });
}

void addcmul(Stream stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value) {
  dispatch<kNumericTypes>(dtype, "addcmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T, T>("addcmul", stream, g, AddcmulFn<T>{value.as<opmath_t<T>>()});
  });
}

void addcdiv(Stream stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value) {
  dispatch<kFloatingTypes>(dtype, "addcdiv", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T, T>("addcdiv", stream, g, AddcdivFn<T>{value.as<opmath_t<T>>()});
  });
}

void clamp_scalar(Stream stream, DType dtype, const ElementwiseGeometry& g, ClampMode mode, ScalarArg lo,
                  ScalarArg hi) {
  dispatch<kNumericTypes>(dtype, "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const ClampScalarFn<T> f{mode, static_cast<M>(lo.as<T>()), static_cast<M>(hi.as<T>())};
    launch_elementwise<T, T>("clamp", stream, g, f);
  });
}

void clamp_tensor(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kNumericTypes>(dtype, "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T, T>("clamp", stream, g, ClampTensorFn<T>{});
  });
}

}  // namespace foo::kernels::FOO_TARGET
