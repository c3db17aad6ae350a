#pragma once
// Elementwise halves of the loss functions (loss.cu): the pointwise loss or its gradient, computed
// in opmath_t (float for 16-bit floats) with the formulas of ATen's CPU kernels. Reductions
// (mean, sum) run afterwards on the reduction launcher. Every tensor operand has `dtype`.
#include "kernels/core/device_error.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"

namespace foo::kernels {
// out = f(input, target) with parameter p (beta, delta):
enum class LossOp : int32_t {
  Mse,       // (x - y)^2
  SmoothL1,  // |d| < p ? 0.5 d^2 / p : |d| - 0.5 p
  Huber,     // |d| < p ? 0.5 d^2 : p (|d| - 0.5 p)
  Bce,       // (y - 1) max(log1p(-x), -100) - y max(log(x), -100); x or y outside [0, 1]: a device error
};
// out = f(input, target, grad) scaled by `norm`, with parameter p:
enum class LossBackwardOp : int32_t {
  Mse,       // norm (x - y) g
  SmoothL1,  // d <= -p ? -norm g : d >= p ? norm g : norm d g / p
  Huber,     // d <= -p ? -norm g p : d >= p ? norm g p : norm d g
};
}  // namespace foo::kernels

// inputs: input, target. `error` (Bce only, else unused): where an input or target outside [0, 1]
// is reported (device_error.h: BceInputRange, BceTargetRange).
FOO_DECLARE_KERNEL(void, loss_forward,
                   (Stream, DType dtype, const ElementwiseGeometry& g, LossOp op, double p,
                    const DeviceErrorSite& error))
// inputs: input, target, grad_output
FOO_DECLARE_KERNEL(void, loss_backward,
                   (Stream, DType dtype, const ElementwiseGeometry& g, LossBackwardOp op, double norm, double p))
// log_sigmoid: out = min(x, 0) - log1p(exp(-|x|)) (input: x). Its backward is a manifest formula.
FOO_DECLARE_KERNEL(void, log_sigmoid_forward, (Stream, DType dtype, const ElementwiseGeometry& g))
