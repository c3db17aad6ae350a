// Activations and their backward: relu, silu, gelu ('none' and 'tanh'), sigmoid/tanh/silu/gelu
// backward, threshold (which also serves relu's backward). Formulas, operation order and
// constants follow ATen's CPU kernels, in opmath_t (float for half/bfloat16, rounded once).
#include "kernels/activation.h"
#include "kernels/elementwise.cuh"
#include "kernels/unary_math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr double kSqrt2 = 1.41421356237309504880;      // M_SQRT2
constexpr double kSqrt1_2 = 0.70710678118654752440;    // M_SQRT1_2
constexpr double k2_SqrtPi = 1.12837916709551257390;   // M_2_SQRTPI

template <Activation Op, typename T>
struct ActivationFn {
  __device__ T operator()(T x) const {
    using M = opmath_t<T>;
    const M v = static_cast<M>(x);
    if constexpr (Op == Activation::Relu) {
      // clamp_min(x, 0): NaN and -0.0 pass through unchanged.
      if constexpr (std::is_unsigned_v<T>) return x;
      else return v < M(0) ? cast<T>(M(0)) : x;
    } else if constexpr (Op == Activation::Silu) {
      return cast<T>(v / (M(1) + math::exp(-v)));
    } else if constexpr (Op == Activation::GeluErf) {
      const M kAlpha = M(kSqrt1_2);
      return cast<T>(v * M(0.5) * (M(1) + math::erf(v * kAlpha)));
    } else {  // GeluTanh
      const M kBeta = M(kSqrt2 * k2_SqrtPi * 0.5);
      const M kKappa = M(0.044715);
      const M cube = v * v * v;
      const M inner = kBeta * (v + kKappa * cube);
      return cast<T>(M(0.5) * v * (M(1) + math::tanh(inner)));
    }
  }
};

template <ActivationBackward Op, typename T>
struct ActivationBackwardFn {
  __device__ T operator()(T grad, T y) const {
    using M = opmath_t<T>;
    const M dy = static_cast<M>(grad), v = static_cast<M>(y);
    if constexpr (Op == ActivationBackward::Sigmoid) {
      if constexpr (std::is_same_v<T, half_t>) {
        // The CPU computes float16 sigmoid_backward in float16 arithmetic (bfloat16 goes through
        // float): every operation rounds to float16. Rounding the same way keeps it bit-identical.
        const M one_minus_y = static_cast<M>(cast<T>(M(1) - v));
        const M scaled = static_cast<M>(cast<T>(dy * one_minus_y));
        return cast<T>(scaled * v);
      } else {
        return cast<T>(dy * (M(1) - v) * v);
      }
    } else if constexpr (Op == ActivationBackward::Tanh) {
      return cast<T>(dy * (M(1) - v * v));
    } else if constexpr (Op == ActivationBackward::Silu) {
      const M sigmoid = M(1) / (M(1) + math::exp(-v));
      return cast<T>(dy * sigmoid * (M(1) + v * (M(1) - sigmoid)));
    } else if constexpr (Op == ActivationBackward::GeluErf) {
      const M kAlpha = M(kSqrt1_2);
      const M kBeta = M(k2_SqrtPi * kSqrt1_2 * 0.5);
      const M cdf = M(0.5) * (M(1) + math::erf(v * kAlpha));
      const M pdf = kBeta * math::exp(v * v * M(-0.5));
      return cast<T>(dy * (cdf + v * pdf));
    } else {  // GeluTanh
      const M kBeta = M(kSqrt2 * k2_SqrtPi * 0.5);
      const M kKappa = M(0.044715);
      const M sq = v * v;
      const M cube = sq * v;
      const M tanh_inner = math::tanh(kBeta * (v + kKappa * cube));
      const M left = M(0.5) * v;
      const M right = M(1) + tanh_inner;
      const M left_derivative = M(0.5) * right;
      const M tanh_derivative = M(1) - tanh_inner * tanh_inner;
      const M inner_derivative = kBeta * (M(1) + M(3) * kKappa * sq);
      const M right_derivative = left * tanh_derivative * inner_derivative;
      return cast<T>(dy * (left_derivative + right_derivative));
    }
  }
};

template <typename T>
struct ThresholdFn {
  opmath_t<T> threshold;
  T value;
  __device__ T operator()(T x, T other) const {
    return static_cast<opmath_t<T>>(x) <= threshold ? value : other;
  }
};

template <Activation Op>
void launch_activation(const char* name, Stream stream, DType dtype, const ElementwiseGeometry& g) {
  constexpr uint32_t types = Op == Activation::Relu ? kNumericTypes : kFloatingTypes;
  dispatch<types>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>(name, stream, g, ActivationFn<Op, T>{});
  });
}

template <ActivationBackward Op>
void launch_backward(const char* name, Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kFloatingTypes>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>(name, stream, g, ActivationBackwardFn<Op, T>{});
  });
}

}  // namespace

void activation(Stream stream, Activation op, DType dtype, const ElementwiseGeometry& g) {
  switch (op) {
    case Activation::Relu: return launch_activation<Activation::Relu>("relu", stream, dtype, g);
    case Activation::Silu: return launch_activation<Activation::Silu>("silu", stream, dtype, g);
    case Activation::GeluErf: return launch_activation<Activation::GeluErf>("gelu", stream, dtype, g);
    case Activation::GeluTanh: return launch_activation<Activation::GeluTanh>("gelu_tanh", stream, dtype, g);
  }
  throw std::invalid_argument("activation: unknown op");
}

void activation_backward(Stream stream, ActivationBackward op, DType dtype, const ElementwiseGeometry& g) {
  using B = ActivationBackward;
  switch (op) {
    case B::Sigmoid: return launch_backward<B::Sigmoid>("sigmoid_backward", stream, dtype, g);
    case B::Tanh: return launch_backward<B::Tanh>("tanh_backward", stream, dtype, g);
    case B::Silu: return launch_backward<B::Silu>("silu_backward", stream, dtype, g);
    case B::GeluErf: return launch_backward<B::GeluErf>("gelu_backward", stream, dtype, g);
    case B::GeluTanh: return launch_backward<B::GeluTanh>("gelu_tanh_backward", stream, dtype, g);
  }
  throw std::invalid_argument("activation_backward: unknown op");
}

void threshold(Stream stream, DType dtype, const ElementwiseGeometry& g, ThresholdScalars s) {
  dispatch<kNumericTypes>(dtype, "threshold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    ThresholdFn<T> fn;
    if constexpr (std::is_integral_v<T>) {
      fn.threshold = static_cast<M>(s.threshold_int);
      fn.value = static_cast<T>(s.value_int);
    } else {
      fn.threshold = static_cast<M>(s.threshold);
      fn.value = cast<T>(static_cast<M>(s.value));
    }
    launch_elementwise<T, T, T>("threshold", stream, g, fn);
  });
}

}  // namespace foo::kernels::FOO_TARGET
