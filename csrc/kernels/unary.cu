// Unary math: neg, abs, exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, sign. One functor per op,
// computing in opmath_t (float for half/bfloat16, rounded once at the end, as the CPU does) with
// the float function for float and the double one for double.
#include "kernels/elementwise.cuh"
#include "kernels/unary.h"
#include "kernels/unary_math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

// -x and |x| of integers wrap through unsigned arithmetic (-INT_MIN == INT_MIN), as the CPU's
// two's complement negation does, without signed overflow.
template <typename T>
__device__ __forceinline__ T wrapping_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(0) - static_cast<U>(x));
}

template <UnaryOp Op, typename T>
struct UnaryFn {
  __device__ T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (Op == UnaryOp::Sign) {
        if constexpr (std::is_same_v<T, bool>) return x;
        else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != T(0));  // nvcc: no `x < 0`
        else return static_cast<T>((T(0) < x) - (x < T(0)));
      }
      if constexpr (Op == UnaryOp::Neg) return wrapping_neg(x);
      if constexpr (std::is_unsigned_v<T>) return x;
      else return x < 0 ? wrapping_neg(x) : x;
    } else {
      using M = opmath_t<T>;
      const M v = static_cast<M>(x);
      return cast<T>(compute(v));
    }
  }

  template <typename M>
  __device__ __forceinline__ static M compute(M v) {
    if constexpr (Op == UnaryOp::Neg) return -v;
    if constexpr (Op == UnaryOp::Abs) return math::fabs(v);
    if constexpr (Op == UnaryOp::Exp) return math::exp(v);
    if constexpr (Op == UnaryOp::Log) return math::log(v);
    if constexpr (Op == UnaryOp::Sqrt) return math::sqrt(v);
    if constexpr (Op == UnaryOp::Rsqrt) return M(1) / math::sqrt(v);  // as the CPU: correctly rounded sqrt, then divide
    if constexpr (Op == UnaryOp::Sin) return math::sin(v);
    if constexpr (Op == UnaryOp::Cos) return math::cos(v);
    if constexpr (Op == UnaryOp::Tanh) return math::tanh(v);
    if constexpr (Op == UnaryOp::Sigmoid) return M(1) / (M(1) + math::exp(-v));
    if constexpr (Op == UnaryOp::Sign) return M((M(0) < v) - (v < M(0)));  // NaN gives 0, as on the CPU
  }
};

template <UnaryOp Op>
constexpr uint32_t kUnaryTypes = Op == UnaryOp::Sign                          ? kAllTypes
                                 : Op == UnaryOp::Neg || Op == UnaryOp::Abs ? kNumericTypes
                                                                            : kFloatingTypes;

template <UnaryOp Op>
void launch_unary(const char* name, Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kUnaryTypes<Op>>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>(name, stream, g, UnaryFn<Op, T>{});
  });
}

}  // namespace

void unary(Stream stream, UnaryOp op, DType dtype, const ElementwiseGeometry& g) {
  switch (op) {
    case UnaryOp::Neg: return launch_unary<UnaryOp::Neg>("neg", stream, dtype, g);
    case UnaryOp::Abs: return launch_unary<UnaryOp::Abs>("abs", stream, dtype, g);
    case UnaryOp::Exp: return launch_unary<UnaryOp::Exp>("exp", stream, dtype, g);
    case UnaryOp::Log: return launch_unary<UnaryOp::Log>("log", stream, dtype, g);
    case UnaryOp::Sqrt: return launch_unary<UnaryOp::Sqrt>("sqrt", stream, dtype, g);
    case UnaryOp::Rsqrt: return launch_unary<UnaryOp::Rsqrt>("rsqrt", stream, dtype, g);
    case UnaryOp::Sin: return launch_unary<UnaryOp::Sin>("sin", stream, dtype, g);
    case UnaryOp::Cos: return launch_unary<UnaryOp::Cos>("cos", stream, dtype, g);
    case UnaryOp::Tanh: return launch_unary<UnaryOp::Tanh>("tanh", stream, dtype, g);
    case UnaryOp::Sigmoid: return launch_unary<UnaryOp::Sigmoid>("sigmoid", stream, dtype, g);
    case UnaryOp::Sign: return launch_unary<UnaryOp::Sign>("sign", stream, dtype, g);
  }
  throw std::invalid_argument("unary: unknown op");
}

}  // namespace foo::kernels::FOO_TARGET
