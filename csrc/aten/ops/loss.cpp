// Losses: the pointwise loss (or gradient) on loss.cu through the elementwise launcher, then the
// reduction (mean or sum) on the reduction launcher through the native mean/sum ops, as ATen's
// Loss.cpp composes them. Argument checks and operation order follow the CPU's implementation.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>

#include "native/binary_cross_entropy_backward_out.h"
#include "native/binary_cross_entropy_out.h"
#include "native/huber_loss_backward_out.h"
#include "native/huber_loss_out.h"
#include "native/log_sigmoid_forward_out.h"
#include "native/mse_loss_backward_out.h"
#include "native/mse_loss_out.h"
#include "native/smooth_l1_loss_backward_out.h"
#include "native/smooth_l1_loss_out.h"
#include "aten/core/elementwise.h"
#include "aten/core/kernel_dtype.h"
#include "aten/core/pointwise.h"
#include "kernels/ops/loss.h"
#include "runtime/device_error.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::ElementwiseGeometry;
using foo::kernels::LossBackwardOp;
using foo::kernels::LossOp;
using foo::kernels::Stream;

void check_floating(const char* op, at::ScalarType dtype) { check_kernel_dtype(op, dtype, foo::kernels::kFloatingTypes); }
void check_floating(const char* op, const at::Tensor& self) { check_floating(op, self.scalar_type()); }

// `loss` reduced into `out` (allocated when undefined) as apply_loss_reduction does.
at::Tensor& reduce_loss(const at::Tensor& loss, int64_t reduction, at::Tensor& out) {
  if (!out.defined()) out = at::empty({0}, loss.options());
  if (reduction == at::Reduction::Mean) return at::mean_out(out, loss, at::IntArrayRef{});
  return at::sum_out(out, loss, at::IntArrayRef{});
}

// f(self, target) over `iter` (loss, self, target), computed in `dtype`.
void launch_loss(const char* name, const at::TensorIteratorBase& iter, at::ScalarType dtype, LossOp op, double p,
                 const foo::kernels::DeviceErrorSite& error = {}) {
  check_floating(name, dtype);
  const auto kdtype = kernel_dtype(dtype);
  run_elementwise(iter, dtype, {dtype, dtype}, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(loss_forward, s, kdtype, g, op, p, error);
  });
}

// The structured losses (mse, smooth L1), as ATen's impl: their meta function built `meta_iter`
// over (result, self, target), which reduction None fills; otherwise it sized `result` 0-d and
// the loss goes through a temporary into mean/sum.
void structured_loss(const char* name, LossOp op, double p, const at::TensorIteratorBase& meta_iter,
                     const at::Tensor& self, const at::Tensor& target, int64_t reduction, const at::Tensor& result) {
  if (reduction == at::Reduction::None) return launch_loss(name, meta_iter, meta_iter.common_dtype(), op, p);
  at::Tensor loss;
  auto iter = at::TensorIterator::binary_op(loss, self, target);
  launch_loss(name, iter, iter.common_dtype(), op, p);
  at::Tensor out = result;
  reduce_loss(iter.output(), reduction, out);
}

// out = reduce(f(self, target)); with reduction None `out` receives f directly.
at::Tensor& pointwise_loss(const char* name, LossOp op, double p, const at::Tensor& self, const at::Tensor& target,
                           int64_t reduction, at::Tensor& out, const foo::kernels::DeviceErrorSite& error = {}) {
  TORCH_CHECK(reduction == at::Reduction::None || reduction == at::Reduction::Mean || reduction == at::Reduction::Sum,
              name, ": ", reduction, " is not a valid value for reduction");
  at::Tensor loss = reduction == at::Reduction::None ? out : at::Tensor();
  // Huber promotes as a binary op (as mse and smooth L1's structured meta functions); BCE wants one dtype.
  auto iter = op == LossOp::Bce
                  ? at::TensorIteratorConfig().add_output(loss).add_const_input(self).add_const_input(target).build()
                  : at::TensorIterator::binary_op(loss, self, target);
  const auto dtype = op == LossOp::Bce ? self.scalar_type() : iter.common_dtype();
  launch_loss(name, iter, dtype, op, p, error);
  if (reduction == at::Reduction::None) return iterator_result(out, iter);
  return reduce_loss(iter.tensor(0), reduction, out);
}

// The iterator of a loss gradient: (grad_input, self, target, grad_output), grad_input allocated
// like self when undefined.
at::TensorIterator loss_backward_iterator(const at::Tensor& grad_output, const at::Tensor& self,
                                          const at::Tensor& target, at::Tensor& grad_input) {
  if (!grad_input.defined()) grad_input = at::empty_like(self, c10::MemoryFormat::Contiguous);
  return at::TensorIteratorConfig()
      .add_output(grad_input)
      .add_const_input(self)
      .add_const_input(target)
      .add_const_input(grad_output)
      .build();
}

// grad_input = f(self, target, grad_output) * norm; grad_output broadcasts (a 0-d one after a reduction).
at::Tensor& pointwise_loss_backward(const char* name, LossBackwardOp op, double norm, double p,
                                    const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                    at::Tensor& grad_input) {
  check_floating(name, self);
  auto iter = loss_backward_iterator(grad_output, self, target, grad_input);
  const auto dtype = self.scalar_type();
  const auto kdtype = kernel_dtype(dtype);
  run_elementwise(iter, dtype, {dtype, dtype, dtype}, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(loss_backward, s, kdtype, g, op, norm, p);
  });
  return grad_input;
}

// 1 / numel for a mean (scale * 1 / numel: the CPU's `2. / input.numel()` for mse), else scale.
double loss_norm(int64_t reduction, const at::Tensor& self, double scale) {
  return reduction == at::Reduction::Mean ? scale / static_cast<double>(self.numel()) : scale;
}

}  // namespace

TORCH_IMPL_FUNC(mse_loss_out)
(const at::Tensor& self, const at::Tensor& target, int64_t reduction, const at::Tensor& out) {
  structured_loss("mse_loss", LossOp::Mse, 0.0, *this, self, target, reduction, out);
}

at::Tensor& mse_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                  int64_t reduction, at::Tensor& grad_input) {
  return pointwise_loss_backward("mse_loss_backward", LossBackwardOp::Mse, loss_norm(reduction, self, 2.0), 0.0,
                                 grad_output, self, target, grad_input);
}

// The meta function checks beta >= 0.
TORCH_IMPL_FUNC(smooth_l1_loss_out)
(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta, const at::Tensor& out) {
  structured_loss("smooth_l1_loss", LossOp::SmoothL1, beta, *this, self, target, reduction, out);
}

at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double beta, at::Tensor& grad_input) {
  return pointwise_loss_backward("smooth_l1_loss_backward", LossBackwardOp::SmoothL1, loss_norm(reduction, self, 1.0),
                                 beta, grad_output, self, target, grad_input);
}

at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                           at::Tensor& out) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.")
  return pointwise_loss("huber_loss", LossOp::Huber, delta, self, target, reduction, out);
}

at::Tensor& huber_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double delta, at::Tensor& grad_input) {
  return pointwise_loss_backward("huber_loss_backward", LossBackwardOp::Huber, loss_norm(reduction, self, 1.0), delta,
                                 grad_output, self, target, grad_input);
}

// The CPU multiplies by the weight after the pointwise loss and before reducing. An input or
// target outside [0, 1] is reported on the device (the CPU's RuntimeError at the next wait,
// runtime/device_error.h); the op does not wait.
at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out) {
  const bool weighted = weight.has_value() && weight->defined();
  at::Tensor loss = reduction == at::Reduction::None && !weighted ? out : at::Tensor();
  const c10::DeviceIndex device = self.device().index();
  foo::kernels::DeviceErrorSite error;
  if (self.numel() > 0) {
    error = foo::runtime::device_error_site(device, foo::runtime::current_native_stream(device), "binary_cross_entropy",
                                            foo::kernels::DeviceErrorKind::BceInputRange);
  }
  pointwise_loss("binary_cross_entropy", LossOp::Bce, 0.0, self, target, at::Reduction::None, loss, error);
  if (self.numel() > 0) foo::runtime::raise_device_error_if_blocking(device);
  if (weighted) {
    if (reduction != at::Reduction::None) {
      loss = at::mul(loss, *weight);
    } else {
      if (!out.defined()) out = at::empty({0}, loss.options());
      return at::mul_out(out, loss, *weight);
    }
  }
  if (reduction == at::Reduction::None) {
    if (!out.defined()) out = loss;
    return out;
  }
  return reduce_loss(loss, reduction, out);
}

at::Tensor& binary_cross_entropy_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                              const at::Tensor& target, const std::optional<at::Tensor>& weight,
                                              int64_t reduction, at::Tensor& grad_input) {
  run_binary_cross_entropy_backward_out(loss_backward_iterator(grad_output, self, target, grad_input),
                                        self.scalar_type(), reduction);  // the manifest's formula
  if (weight.has_value() && weight->defined()) grad_input.mul_(*weight);
  if (reduction == at::Reduction::Mean) grad_input.div_(self.numel());
  return grad_input;
}

// As CUDA: the buffer is not used (the backward recomputes exp(-|x|)); an undefined one is empty.
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& self, at::Tensor& output,
                                                             at::Tensor& buffer) {
  check_floating("log_sigmoid_forward", self);
  auto iter = at::TensorIterator::unary_op(output, self);
  const auto kdtype = kernel_dtype(self.scalar_type());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(log_sigmoid_forward, s, kdtype, g); });
  iterator_result(output, iter);
  if (!buffer.defined()) buffer = at::empty({0}, self.options());
  return {output, buffer};
}

}  // namespace foo::native
