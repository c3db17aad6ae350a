// Pointwise halves of the losses and log_sigmoid. Formulas and operation order follow ATen's
// CPU kernels (BinaryOpsKernel.cpp, PointwiseOpsKernel.cpp, Loss.cpp), log_sigmoid CUDA's
// (no buffer: the backward recomputes exp(-|x|)); computed in opmath_t, rounded once.
#include "kernels/elementwise.cuh"
#include "kernels/loss.h"
#include "kernels/unary_math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename M>
__device__ __forceinline__ M abs_of(M v) { return v < M(0) ? -v : v; }
template <typename M>
__device__ __forceinline__ M max_of(M a, M b) { return a < b ? b : a; }  // std::max: NaN `a` kept

template <LossOp Op, typename T>
struct LossFn {
  opmath_t<T> p;
  int32_t* error;
  __device__ T operator()(T a, T b) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    if constexpr (Op == LossOp::Mse) {
      const M d = x - y;
      return cast<T>(d * d);
    } else if constexpr (Op == LossOp::SmoothL1) {
      const M z = abs_of(x - y);
      return cast<T>(z < p ? M(0.5) * z * z / p : z - M(0.5) * p);
    } else if constexpr (Op == LossOp::Huber) {
      const M z = abs_of(x - y);
      return cast<T>(z < p ? M(0.5) * z * z : p * (z - M(0.5) * p));
    } else if constexpr (Op == LossOp::Bce) {
      // NaN fails these comparisons too, as the CPU's TORCH_CHECK does.
      if (!(x >= M(0) && x <= M(1))) *error = 1;
      else if (!(y >= M(0) && y <= M(1))) *error = 2;
      return cast<T>((y - M(1)) * max_of(math::log1p(-x), M(-100)) - y * max_of(math::log(x), M(-100)));
    } else {  // Xlogy
      if (y != y) return cast<T>(y);
      if (x == M(0)) return cast<T>(M(0));
      return cast<T>(x * math::log(y));
    }
  }
};

template <LossBackwardOp Op, typename T>
struct LossBackwardFn {
  opmath_t<T> norm, p;
  __device__ T operator()(T a, T b, T grad) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), y = static_cast<M>(b), g = static_cast<M>(grad);
    if constexpr (Op == LossBackwardOp::Mse) {
      return cast<T>(norm * (x - y) * g);
    } else if constexpr (Op == LossBackwardOp::SmoothL1) {
      const M d = x - y;
      if (d <= -p) return cast<T>(-norm * g);
      if (d >= p) return cast<T>(norm * g);
      return cast<T>(norm * d * g / p);
    } else if constexpr (Op == LossBackwardOp::Huber) {
      const M d = x - y;
      if (d <= -p) return cast<T>(-norm * g * p);
      if (d >= p) return cast<T>(norm * g * p);
      return cast<T>(norm * d * g);
    } else {  // Bce
      return cast<T>(g * (x - y) / max_of((M(1) - x) * x, M(1e-12)));
    }
  }
};

template <typename T>
struct LogSigmoidFn {
  __device__ T operator()(T a) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a);
    const M lo = x < M(0) ? x : M(0);
    return cast<T>(lo - math::log1p(math::exp(-abs_of(x))));
  }
};

template <typename T>
struct LogSigmoidBackwardFn {
  __device__ T operator()(T a, T grad) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a);
    const bool negative = x < M(0);
    const M max_deriv = negative ? M(1) : M(0);
    const M sign = negative ? M(1) : -M(1);
    const M z = math::exp(-abs_of(x));
    return cast<T>(static_cast<M>(grad) * (max_deriv - sign * (z / (M(1) + z))));
  }
};

// Rounds v to T (a no-op for float and double): the CPU's logit computes in T's arithmetic.
template <typename T, typename M>
__device__ __forceinline__ M in_t(M v) { return static_cast<M>(cast<T>(v)); }

// As ATen's CPU logit kernel: eps is converted to T, without it logit(1) is +inf, with it x is
// clamped to [eps, 1 - eps] first; 1 - x and the quotient round to T before the log.
template <typename T>
struct LogitFn {
  opmath_t<T> eps;  // < 0: no clamping; already rounded to T
  __device__ T operator()(T a) const {
    using M = opmath_t<T>;
    M x = static_cast<M>(a);
    if (eps < M(0)) {
      if (x == M(1)) return cast<T>(M(INFINITY));
    } else {
      const M lo = eps, hi = in_t<T>(M(1) - eps);
      x = x < lo ? lo : (x > hi ? hi : x);
    }
    return cast<T>(math::log(in_t<T>(x / in_t<T>(M(1) - x))));
  }
};

template <typename T>
struct LogitBackwardFn {
  opmath_t<T> eps;  // < 0: no clamping
  __device__ T operator()(T grad, T a) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), dy = static_cast<M>(grad);
    const M lo = eps < M(0) ? M(0) : eps, hi = M(1) - lo;
    if (x < lo || x > hi) return cast<T>(eps < M(0) ? M(NAN) : M(0));
    if (x == M(0) || x == M(1)) return cast<T>(dy * M(INFINITY));
    return cast<T>(dy / (x * (M(1) - x)));
  }
};

}  // namespace

void logit(Stream stream, DType dtype, const ElementwiseGeometry& g, double eps) {
  dispatch<kFloatingTypes>(dtype, "logit", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const M e = eps < 0 ? M(-1) : static_cast<M>(cast<T>(eps));
    launch_elementwise<T, T>("logit", stream, g, LogitFn<T>{e});
  });
}

void logit_backward(Stream stream, DType dtype, const ElementwiseGeometry& g, double eps) {
  dispatch<kFloatingTypes>(dtype, "logit_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("logit_backward", stream, g, LogitBackwardFn<T>{static_cast<opmath_t<T>>(eps)});
  });
}

void loss_forward(Stream stream, DType dtype, const ElementwiseGeometry& g, LossOp op, double p, int32_t* error) {
  dispatch<kFloatingTypes>(dtype, "loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const auto run = [&](auto fn) { launch_elementwise<T, T, T>("loss_forward", stream, g, fn); };
    switch (op) {
      case LossOp::Mse: run(LossFn<LossOp::Mse, T>{M(p), error}); break;
      case LossOp::SmoothL1: run(LossFn<LossOp::SmoothL1, T>{M(p), error}); break;
      case LossOp::Huber: run(LossFn<LossOp::Huber, T>{M(p), error}); break;
      case LossOp::Bce: run(LossFn<LossOp::Bce, T>{M(p), error}); break;
      case LossOp::Xlogy: run(LossFn<LossOp::Xlogy, T>{M(p), error}); break;
    }
  });
}

void loss_backward(Stream stream, DType dtype, const ElementwiseGeometry& g, LossBackwardOp op, double norm, double p) {
  dispatch<kFloatingTypes>(dtype, "loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const auto run = [&](auto fn) { launch_elementwise<T, T, T, T>("loss_backward", stream, g, fn); };
    switch (op) {
      case LossBackwardOp::Mse: run(LossBackwardFn<LossBackwardOp::Mse, T>{M(norm), M(p)}); break;
      case LossBackwardOp::SmoothL1: run(LossBackwardFn<LossBackwardOp::SmoothL1, T>{M(norm), M(p)}); break;
      case LossBackwardOp::Huber: run(LossBackwardFn<LossBackwardOp::Huber, T>{M(norm), M(p)}); break;
      case LossBackwardOp::Bce: run(LossBackwardFn<LossBackwardOp::Bce, T>{M(norm), M(p)}); break;
    }
  });
}

void log_sigmoid_forward(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kFloatingTypes>(dtype, "log_sigmoid_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>("log_sigmoid_forward", stream, g, LogSigmoidFn<T>{});
  });
}

void log_sigmoid_backward(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kFloatingTypes>(dtype, "log_sigmoid_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("log_sigmoid_backward", stream, g, LogSigmoidBackwardFn<T>{});
  });
}

}  // namespace foo::kernels::FOO_TARGET
