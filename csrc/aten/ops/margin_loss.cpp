// multi_margin_loss, multilabel_margin_loss and their backward (kernels/ops/margin_loss.cu). Shapes and
// their errors are ATen's own (multi_margin_loss_shape_check, multilabel_margin_loss_shape_check);
// the CPU's other checks (p, dtypes) are repeated here with its messages, the target range on the
// device (runtime/device_error.h). The forward kernel writes per-sample losses; mean and sum are
// the reduction launcher's (at::mean / at::sum on foo).
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/LossMulti.h>
#include <ATen/native/Resize.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/out_arg.h"
#include "kernels/ops/margin_loss.h"
#include "native/multi_margin_loss_backward_out.h"
#include "native/multi_margin_loss_out.h"
#include "native/multilabel_margin_loss_backward_out.h"
#include "native/multilabel_margin_loss_forward_out.h"
#include "runtime/device_error.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

constexpr uint32_t kMarginTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

// Contiguous operands and the kernel's arguments (pointers into them).
struct MarginOperands {
  at::Tensor input, target, weight;
  foo::kernels::MultiMarginArgs args{};
};

foo::kernels::DeviceErrorSite target_site(const char* op, const at::Tensor& self, foo::kernels::DeviceErrorKind kind) {
  return foo::runtime::device_error_site(self.device().index(), stream_of(self), op, kind);
}

MarginOperands prepare(const char* name, const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                       const at::Scalar& margin, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(p.equal(1) || p.equal(2), "only p == 1 and p == 2 supported");
  int64_t nframe = 0, dim = 0;
  const int64_t ndims = self.dim();
  at::native::multi_margin_loss_shape_check(nframe, dim, ndims, self, target, weight);
  check_kernel_dtype(name, self.scalar_type(), kMarginTypes);
  // The CPU's error (its kernel reads the target as int64_t).
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ", target.scalar_type());
  MarginOperands o;
  o.input = self.contiguous();
  o.target = target.contiguous();
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(), name, ": expected weight of dtype ", self.scalar_type(),
                ", but got ", weight->scalar_type());
    o.weight = weight->contiguous();
  }
  o.args = {o.input.const_data_ptr(), o.target.const_data_ptr<int64_t>(),
            ptr_or_null(o.weight), self.numel() > 0 ? nframe : 0, dim,
            static_cast<int32_t>(p.toLong()), margin.toDouble(), {}};
  // The CPU checks each target as it reads it; the kernels report one out of range on the device
  // (raised at the next host wait, runtime/device_error.h): the op does not wait.
  if (self.numel() > 0) o.args.error = target_site(name, self, foo::kernels::DeviceErrorKind::MultiMarginTarget);
  return o;
}


// multilabel: targets are rows of class indices, -1 ending a row; the CPU checks their range first.
MarginOperands prepare_multilabel(const char* name, const at::Tensor& self, const at::Tensor& target) {
  int64_t nframe = 0, dim = 0;
  const int64_t ndims = self.dim();
  at::native::multilabel_margin_loss_shape_check(nframe, dim, ndims, self, target);
  check_kernel_dtype(name, self.scalar_type(), kMarginTypes);
  // The CPU's error (its kernel reads the target as int64_t).
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ", target.scalar_type());
  MarginOperands o;
  o.input = self.contiguous();
  o.target = target.contiguous();
  o.args = {o.input.const_data_ptr(), o.target.const_data_ptr<int64_t>(), nullptr, self.numel() > 0 ? nframe : 0,
            dim, 1, 1.0, {}};
  if (self.numel() > 0) {
    o.args.error = target_site(name, self, foo::kernels::DeviceErrorKind::MultilabelMarginTarget);
  }
  return o;
}

// out (0-d, or the per-sample losses when `per_sample`) from the kernel's per-sample `losses`.
void reduce_margin_losses(const at::Tensor& losses, int64_t reduction, bool per_sample, at::Tensor& out) {
  if (per_sample) {
    if (!losses.is_same(out)) out.copy_(losses);
  } else if (reduction == at::Reduction::Mean) {
    out.copy_(losses.mean());
  } else {
    out.copy_(losses.sum());  // sum, or None with a single (0-d) target
  }
}

}  // namespace

at::Tensor& multi_margin_loss_out(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                                  const at::Scalar& margin, const std::optional<at::Tensor>& weight, int64_t reduction,
                                  at::Tensor& out) {
  const char* name = "multi_margin_loss";
  const MarginOperands o = prepare(name, self, target, p, margin, weight);
  const int64_t nframe = o.args.nframe;
  // As the CPU: a loss per sample without reduction (for a batch of targets), else a 0-d result.
  const bool per_sample = reduction == at::Reduction::None && target.dim() > 0;
  const std::vector<int64_t> shape = per_sample ? std::vector<int64_t>{target.numel()} : std::vector<int64_t>{};
  prepare_out(out, shape, self.options());
  if (self.numel() == 0) return out;
  const at::Tensor losses = per_sample && out.is_contiguous() ? out : at::empty({nframe}, self.options());
  FOO_CALL_KERNEL(multi_margin_loss_forward, stream_of(self), kernel_dtype(self.scalar_type()), o.args,
                  losses.mutable_data_ptr());
  foo::runtime::raise_device_error_if_blocking(self.device().index());
  reduce_margin_losses(losses, reduction, per_sample, out);
  return out;
}

at::Tensor& multi_margin_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                           const at::Tensor& target, const at::Scalar& p, const at::Scalar& margin,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           at::Tensor& grad_input) {
  const char* name = "multi_margin_loss_backward";
  const MarginOperands o = prepare(name, self, target, p, margin, weight);
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), name, ": expected grad_output of dtype ",
              self.scalar_type(), ", but got ", grad_output.scalar_type());
  prepare_out(grad_input, self.sizes(), self.options());
  if (self.numel() == 0) return grad_input;
  const int64_t nframe = o.args.nframe, dim = o.args.dim;
  const bool per_sample = reduction == at::Reduction::None && grad_output.dim() > 0;
  const double scale = 1.0 / static_cast<double>(reduction == at::Reduction::Mean ? nframe * dim : dim);
  const at::Tensor g = grad_output.contiguous();
  with_contiguous_output(grad_input, [&](const at::Tensor& result) {
    FOO_CALL_KERNEL(multi_margin_loss_backward, stream_of(self), kernel_dtype(self.scalar_type()), o.args,
                    g.const_data_ptr(), per_sample, scale, result.mutable_data_ptr());
  });
  foo::runtime::raise_device_error_if_blocking(self.device().index());
  return grad_input;
}

std::tuple<at::Tensor&, at::Tensor&> multilabel_margin_loss_forward_out(const at::Tensor& self,
                                                                        const at::Tensor& target, int64_t reduction,
                                                                        at::Tensor& output, at::Tensor& is_target) {
  const char* name = "multilabel_margin_loss_forward";
  const MarginOperands o = prepare_multilabel(name, self, target);
  // As the CPU: per-sample losses only without reduction on a batch (2-d target).
  const bool per_sample = reduction == at::Reduction::None && target.dim() > 1;
  const std::vector<int64_t> shape = per_sample ? std::vector<int64_t>{target.size(0)} : std::vector<int64_t>{};
  prepare_out(output, shape, self.options());
  prepare_out(is_target, target.sizes(), self.options());
  TORCH_CHECK(is_target.is_contiguous(), "is_target must be contiguous");
  if (self.numel() == 0) {
    is_target.zero_();
    return {output, is_target};
  }
  const at::Tensor losses = per_sample && output.is_contiguous() ? output : at::empty({o.args.nframe}, self.options());
  FOO_CALL_KERNEL(multilabel_margin_loss_forward, stream_of(self), kernel_dtype(self.scalar_type()), o.args,
                  losses.mutable_data_ptr(), is_target.mutable_data_ptr());
  foo::runtime::raise_device_error_if_blocking(self.device().index());
  reduce_margin_losses(losses, reduction, per_sample, output);
  return {output, is_target};
}

at::Tensor& multilabel_margin_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                const at::Tensor& target, int64_t reduction,
                                                const at::Tensor& is_target, at::Tensor& grad_input) {
  const char* name = "multilabel_margin_loss_backward";
  const MarginOperands o = prepare_multilabel(name, self, target);
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && is_target.scalar_type() == self.scalar_type(), name,
              ": expected grad_output and is_target of dtype ", self.scalar_type());
  TORCH_CHECK(is_target.sizes() == target.sizes(), name, ": is_target must have the target's size ", target.sizes(),
              ", got ", is_target.sizes());
  prepare_out(grad_input, self.sizes(), self.options());
  if (self.numel() == 0) return grad_input;
  const int64_t nframe = o.args.nframe, dim = o.args.dim;
  const bool per_sample = reduction == at::Reduction::None && grad_output.dim() > 0;
  if (per_sample) {
    TORCH_CHECK(grad_output.numel() == nframe, name, ": expected grad_output of ", nframe, " elements, got ",
                grad_output.numel());
  }
  const double scale = 1.0 / static_cast<double>(reduction == at::Reduction::Mean ? nframe * dim : dim);
  const at::Tensor g = grad_output.contiguous(), marks = is_target.contiguous();
  with_contiguous_output(grad_input, [&](const at::Tensor& result) {
    FOO_CALL_KERNEL(multilabel_margin_loss_backward, stream_of(self), kernel_dtype(self.scalar_type()), o.args,
                    marks.const_data_ptr(), g.const_data_ptr(), per_sample, scale, result.mutable_data_ptr());
  });
  foo::runtime::raise_device_error_if_blocking(self.device().index());
  return grad_input;
}

}  // namespace foo::native
