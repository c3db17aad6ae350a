// Losses: the pointwise loss (or gradient) on loss.cu through the elementwise launcher, then the
// reduction (mean or sum) on the reduction launcher through the native mean/sum ops, as ATen's
// Loss.cpp composes them. Argument checks and operation order follow the CPU's implementation.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>

#include "native/binary_cross_entropy_backward_out.h"
#include "native/binary_cross_entropy_out.h"
#include "native/huber_loss_backward_out.h"
#include "native/huber_loss_out.h"
#include "native/log_sigmoid_backward_out.h"
#include "native/log_sigmoid_forward_out.h"
#include "native/logit_backward_out.h"
#include "native/logit_out.h"
#include "native/mse_loss_backward_out.h"
#include "native/mse_loss_out.h"
#include "native/smooth_l1_loss_backward_out.h"
#include "native/smooth_l1_loss_out.h"
#include "native/xlogy_out.h"
#include "aten/device_memory.h"
#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/loss.h"

namespace foo::native {
namespace {

using foo::kernels::ElementwiseGeometry;
using foo::kernels::LossBackwardOp;
using foo::kernels::LossOp;
using foo::kernels::Stream;

void check_floating(const char* op, at::ScalarType dtype) { FOO_CHECK_DTYPE(at::isFloatingType(dtype), op, dtype); }
void check_floating(const char* op, const at::Tensor& self) { check_floating(op, self.scalar_type()); }

// `loss` reduced into `out` (allocated when undefined) as apply_loss_reduction does.
at::Tensor& reduce_loss(const at::Tensor& loss, int64_t reduction, at::Tensor& out) {
  if (!out.defined()) out = at::empty({0}, loss.options());
  if (reduction == at::Reduction::Mean) return at::mean_out(out, loss, at::IntArrayRef{});
  return at::sum_out(out, loss, at::IntArrayRef{});
}

// out = reduce(f(self, target)); with reduction None `out` receives f directly.
at::Tensor& pointwise_loss(const char* name, LossOp op, double p, const at::Tensor& self, const at::Tensor& target,
                           int64_t reduction, at::Tensor& out, const at::Tensor& error = {}) {
  TORCH_CHECK(reduction == at::Reduction::None || reduction == at::Reduction::Mean || reduction == at::Reduction::Sum,
              name, ": ", reduction, " is not a valid value for reduction");
  at::Tensor loss = reduction == at::Reduction::None ? out : at::Tensor();
  // mse, smooth L1 and Huber promote as binary ops (their structured meta); BCE wants one dtype.
  auto iter = op == LossOp::Bce
                  ? at::TensorIteratorConfig().add_output(loss).add_const_input(self).add_const_input(target).build()
                  : at::TensorIterator::binary_op(loss, self, target);
  const auto dtype = op == LossOp::Bce ? self.scalar_type() : iter.common_dtype();
  check_floating(name, dtype);
  const auto kdtype = kernel_dtype(dtype);
  int32_t* error_slot = error.defined() ? error.mutable_data_ptr<int32_t>() : nullptr;
  run_elementwise(iter, dtype, {dtype, dtype}, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(loss_forward, s, kdtype, g, op, p, error_slot);
  });
  if (reduction == at::Reduction::None) return iterator_result(out, iter);
  return reduce_loss(iter.tensor(0), reduction, out);
}

// grad_input = f(self, target, grad_output) * norm; grad_output broadcasts (a 0-d one after a reduction).
at::Tensor& pointwise_loss_backward(const char* name, LossBackwardOp op, double norm, double p,
                                    const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                    at::Tensor& grad_input) {
  check_floating(name, self);
  if (!grad_input.defined()) grad_input = at::empty_like(self, c10::MemoryFormat::Contiguous);
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_input)
                  .add_const_input(self)
                  .add_const_input(target)
                  .add_const_input(grad_output)
                  .build();
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

at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out) {
  return pointwise_loss("mse_loss", LossOp::Mse, 0.0, self, target, reduction, out);
}

at::Tensor& mse_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                  int64_t reduction, at::Tensor& grad_input) {
  return pointwise_loss_backward("mse_loss_backward", LossBackwardOp::Mse, loss_norm(reduction, self, 2.0), 0.0,
                                 grad_output, self, target, grad_input);
}

at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                               at::Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.")
  return pointwise_loss("smooth_l1_loss", LossOp::SmoothL1, beta, self, target, reduction, out);
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

// The CPU multiplies by the weight after the pointwise loss and before reducing.
at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out) {
  const at::Tensor error = at::zeros({1}, self.options().dtype(at::kInt));
  const bool weighted = weight.has_value() && weight->defined();
  at::Tensor loss = reduction == at::Reduction::None && !weighted ? out : at::Tensor();
  pointwise_loss("binary_cross_entropy", LossOp::Bce, 0.0, self, target, at::Reduction::None, loss, error);
  if (self.numel() > 0) {
    const int32_t flag = stage_to_cpu(error).item<int32_t>();  // waits for the kernel
    TORCH_CHECK(flag != 1, "binary_cross_entropy: all elements of input should be between 0 and 1");
    TORCH_CHECK(flag != 2, "binary_cross_entropy: all elements of target should be between 0 and 1");
  }
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
  pointwise_loss_backward("binary_cross_entropy_backward", LossBackwardOp::Bce, 1.0, 0.0, grad_output, self, target,
                          grad_input);
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

at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& buffer,
                                     at::Tensor& grad_input) {
  (void)buffer;
  check_floating("log_sigmoid_backward", self);
  auto iter = at::TensorIteratorConfig().add_output(grad_input).add_const_input(self).add_const_input(grad_output).build();
  const auto dtype = self.scalar_type();
  const auto kdtype = kernel_dtype(dtype);
  run_elementwise(iter, dtype, {dtype, dtype},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(log_sigmoid_backward, s, kdtype, g); });
  return iterator_result(grad_input, iter);
}

at::Tensor& xlogy_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_float_op(out, self, other);
  const auto kdtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(loss_forward, s, kdtype, g, LossOp::Xlogy, 0.0, nullptr);
  });
  return iterator_result(out, iter);
}

// binary_cross_entropy's target gradient calls logit.
at::Tensor& logit_out(const at::Tensor& self, std::optional<double> eps, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_float_op(out, self);
  const auto kdtype = kernel_dtype(iter.common_dtype());
  const double e = eps.value_or(-1.0);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(logit, s, kdtype, g, e); });
  return iterator_result(out, iter);
}

at::Tensor& logit_backward_out(const at::Tensor& grad_output, const at::Tensor& self, std::optional<double> eps,
                               at::Tensor& grad_input) {
  auto iter = at::TensorIterator::binary_op(grad_input, grad_output, self);
  const auto kdtype = kernel_dtype(iter.common_dtype());
  check_floating("logit_backward", iter.common_dtype());
  const double e = eps.value_or(-1.0);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(logit_backward, s, kdtype, g, e); });
  return iterator_result(grad_input, iter);
}

}  // namespace foo::native
