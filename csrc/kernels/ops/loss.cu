// Pointwise halves of the losses and log_sigmoid's forward. Formulas and operation order follow
// ATen's CPU kernels (BinaryOpsKernel.cpp, PointwiseOpsKernel.cpp, Loss.cpp), log_sigmoid CUDA's
// (no buffer); computed in opmath_t, rounded once. Not manifest formulas (docs/kernels.md,
// Losses): the losses reduce afterwards or scale by 1/numel, BCE flags bad inputs on the device,
// and log_sigmoid_forward has two outputs. xlogy, logit(_backward), log_sigmoid_backward and BCE's
// backward are.
#include "kernels/core/device_error.cuh"
#include "kernels/core/elementwise.cuh"
#include "kernels/ops/loss.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename M>
__device__ __forceinline__ M abs_of(M v) { return v < M(0) ? -v : v; }
template <typename M>
__device__ __forceinline__ M max_of(M a, M b) { return a < b ? b : a; }  // std::max: NaN `a` kept

template <LossOp Op, typename T>
struct LossFn {
  opmath_t<T> p;
  DeviceErrorSite error;  // Bce only
  using M = opmath_t<T>;
  __device__ T operator()(M x, M y) const {  // operands arrive in opmath_t (elementwise.cuh)
    if constexpr (Op == LossOp::Mse) {
      const M d = x - y;
      return cast<T>(d * d);
    } else if constexpr (Op == LossOp::SmoothL1) {
      const M z = abs_of(x - y);
      return cast<T>(z < p ? M(0.5) * z * z / p : z - M(0.5) * p);
    } else if constexpr (Op == LossOp::Huber) {
      const M z = abs_of(x - y);
      return cast<T>(z < p ? M(0.5) * z * z : p * (z - M(0.5) * p));
    } else {  // Bce
      // NaN fails these comparisons too, as the CPU's TORCH_CHECK does.
      if (!(x >= M(0) && x <= M(1))) report_device_error(error, DeviceErrorKind::BceInputRange, 0, 0, 0);
      else if (!(y >= M(0) && y <= M(1))) report_device_error(error, DeviceErrorKind::BceTargetRange, 0, 0, 0);
      return cast<T>((y - M(1)) * max_of(math::log1p(-x), M(-100)) - y * max_of(math::log(x), M(-100)));
    }
  }
};

template <LossBackwardOp Op, typename T>
struct LossBackwardFn {
  opmath_t<T> norm, p;
  using M = opmath_t<T>;
  __device__ T operator()(M x, M y, M g) const {
    if constexpr (Op == LossBackwardOp::Mse) {
      return cast<T>(norm * (x - y) * g);
    } else if constexpr (Op == LossBackwardOp::SmoothL1) {
      const M d = x - y;
      if (d <= -p) return cast<T>(-norm * g);
      if (d >= p) return cast<T>(norm * g);
      return cast<T>(norm * d * g / p);
    } else {  // Huber
      const M d = x - y;
      if (d <= -p) return cast<T>(-norm * g * p);
      if (d >= p) return cast<T>(norm * g * p);
      return cast<T>(norm * d * g);
    }
  }
};

template <typename T>
struct LogSigmoidFn {
  using M = opmath_t<T>;
  __device__ T operator()(M x) const {
    const M lo = x < M(0) ? x : M(0);
    return cast<T>(lo - math::log1p(math::exp(-abs_of(x))));
  }
};

}  // namespace

void loss_forward(Stream stream, DType dtype, const ElementwiseGeometry& g, LossOp op, double p,
                  const DeviceErrorSite& error) {
  dispatch<kFloatingTypes>(dtype, "loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const auto run = [&](auto fn) { launch_elementwise<T, T, T>("loss_forward", stream, g, fn); };
    switch (op) {
      case LossOp::Mse: run(LossFn<LossOp::Mse, T>{M(p), error}); break;
      case LossOp::SmoothL1: run(LossFn<LossOp::SmoothL1, T>{M(p), error}); break;
      case LossOp::Huber: run(LossFn<LossOp::Huber, T>{M(p), error}); break;
      case LossOp::Bce: run(LossFn<LossOp::Bce, T>{M(p), error}); break;
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
    }
  });
}

void log_sigmoid_forward(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kFloatingTypes>(dtype, "log_sigmoid_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>("log_sigmoid_forward", stream, g, LogSigmoidFn<T>{});
  });
}

}  // namespace foo::kernels::FOO_TARGET
