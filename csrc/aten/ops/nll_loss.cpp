// nll_loss_forward / nll_loss_backward (1-D or 2-D input) and nll_loss2d_forward /
// nll_loss2d_backward (4-D input), the ops F.nll_loss and F.cross_entropy reach (3-D and >4-D
// inputs reach nll_loss2d through nll_loss_nd). The input is viewed as a contiguous
// [n, classes, spatial] array.
//
// Targets out of range: the kernels never index with one; they report the first in the device's
// error word (kernels/core/device_error.h) and the op returns without waiting. The host raises the
// CPU's IndexError("Target 7 is out of bounds.") at its next wait (runtime/device_error.h), or
// at the op under TORCH_FOO_LAUNCH_BLOCKING=1. On CUDA torch raises a device-side assert, which
// poisons the context; foo's device stays usable.
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/out_arg.h"
#include "kernels/ops/nll_loss.h"
#include "native/nll_loss2d_backward_out.h"
#include "native/nll_loss2d_forward_out.h"
#include "native/nll_loss_backward_out.h"
#include "native/nll_loss_forward_out.h"
#include "runtime/device_error.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

constexpr int64_t kNone = 0, kSum = 2;  // at::Reduction::None, Sum

struct Geometry {
  int64_t n = 1, classes = 1, spatial = 1;
  int64_t samples() const { return n * spatial; }
};

void check_dtypes(const char* op, const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight,
                  bool byte_targets) {
  check_kernel_dtype(op, self.scalar_type(), foo::kernels::kFloatingTypes);
  if (byte_targets) {
    TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte,
                "expected target dtype to be Long or Byte, but got ", target.scalar_type());
  } else {
    TORCH_CHECK(target.scalar_type() == at::kLong, op, ": expected target dtype Long, but got ", target.scalar_type());
  }
  TORCH_CHECK(!weight.defined() || weight.scalar_type() == self.scalar_type(), op, ": expected weight to have dtype ",
              self.scalar_type(), " (the dtype of self), but got ", weight.scalar_type());
}

void check_same_dtype(const char* op, const char* what, const at::Tensor& t, const at::Tensor& self) {
  TORCH_CHECK(t.scalar_type() == self.scalar_type(), op, ": expected ", what, " to have dtype ", self.scalar_type(),
              " (the dtype of self), but got ", t.scalar_type());
}

// Where the kernels of `op` report a target out of range.
foo::kernels::DeviceErrorSite target_site(const char* op, const at::Tensor& self) {
  const c10::DeviceIndex device = self.device().index();
  return foo::runtime::device_error_site(device, foo::runtime::current_native_stream(device), op,
                                         foo::kernels::DeviceErrorKind::TargetOutOfBounds);
}

at::Tensor optional_contiguous(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? t->contiguous() : at::Tensor();
}

// Outputs already sized (by ATen's meta function, or prepare_out for nll_loss2d).
void forward(const char* op, const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight,
             int64_t reduction, int64_t ignore_index, const Geometry& g, const at::Tensor& output,
             const at::Tensor& total_weight) {
  const at::Tensor x = self.contiguous(), t = target.contiguous();
  const foo::kernels::DeviceErrorSite error = target_site(op, self);
  with_contiguous_output(output, [&](const at::Tensor& out) {
    with_contiguous_output(total_weight, [&](const at::Tensor& tw) {
      FOO_CALL_KERNEL(nll_loss_forward, stream_of(self),
                      x.const_data_ptr(), t.const_data_ptr(), ptr_or_null(weight), out.mutable_data_ptr(),
                      tw.mutable_data_ptr(), error, kernel_dtype(x.scalar_type()),
                      kernel_dtype(t.scalar_type()), g.n, g.classes, g.spatial, reduction, ignore_index);
    });
  });
  foo::runtime::raise_device_error_if_blocking(self.device().index());
}

void backward(const char* op, const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
              const at::Tensor& weight, int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight,
              const Geometry& g, const at::Tensor& grad_input) {
  const at::Tensor go = grad_output.contiguous(), t = target.contiguous();
  const foo::kernels::DeviceErrorSite error = target_site(op, self);
  with_contiguous_output(grad_input, [&](const at::Tensor& gi) {
    FOO_CALL_KERNEL(nll_loss_backward, stream_of(self),
                    go.const_data_ptr(), t.const_data_ptr(), ptr_or_null(weight), total_weight.const_data_ptr(),
                    gi.mutable_data_ptr(), error, kernel_dtype(self.scalar_type()),
                    kernel_dtype(t.scalar_type()), g.n, g.classes, g.spatial, reduction, ignore_index);
  });
  foo::runtime::raise_device_error_if_blocking(self.device().index());
}

// ---- nll_loss: input [C] or [N, C] ---------------------------------------------------------

Geometry nll_geometry(const at::Tensor& self) {
  Geometry g;
  if (self.dim() == 2) g.n = self.size(0);
  g.classes = self.size(-1);
  return g;
}

// A 1-D input has one sample and a scalar loss under every reduction: "none" sums that one.
int64_t nll_kernel_reduction(const at::Tensor& self, int64_t reduction) {
  return reduction == kNone && self.dim() == 1 ? kSum : reduction;
}

// ---- nll_loss2d: input [N, C, H, W] ----------------------------------------------------------

void check_nll2d_inputs(const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight) {
  TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of dimension: ",
              target.dim());
  TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got input of dimension: ",
              self.dim());
  TORCH_CHECK(!weight.defined() || weight.numel() == self.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "size mismatch (got input: ", self.sizes(), " , target: ", target.sizes());
}

Geometry nll2d_geometry(const at::Tensor& self) {
  Geometry g;
  g.n = self.size(0);
  g.classes = self.size(1);
  g.spatial = self.size(2) * self.size(3);
  return g;
}

}  // namespace

// nll_loss_forward / nll_loss_backward are structured: ATen's meta functions check shapes and
// size the outputs; these check what the kernels support and run them.
TORCH_IMPL_FUNC(nll_loss_forward_out)(const at::Tensor& self, const at::Tensor& target,
                                      at::OptionalTensorRef weight_opt, int64_t reduction, int64_t ignore_index,
                                      const at::Tensor& output, const at::Tensor& total_weight) {
  const at::Tensor weight = weight_opt ? weight_opt->contiguous() : at::Tensor();
  check_dtypes("nll_loss_forward", self, target, weight, /*byte_targets=*/true);
  forward("nll_loss_forward", self, target, weight, nll_kernel_reduction(self, reduction), ignore_index,
          nll_geometry(self), output, total_weight);
}

TORCH_IMPL_FUNC(nll_loss_backward_out)(const at::Tensor& grad_output, const at::Tensor& self,
                                       const at::Tensor& target, at::OptionalTensorRef weight_opt, int64_t reduction,
                                       int64_t ignore_index, const at::Tensor& total_weight,
                                       const at::Tensor& grad_input) {
  const char* op = "nll_loss_backward";
  const at::Tensor weight = weight_opt ? weight_opt->contiguous() : at::Tensor();
  check_dtypes(op, self, target, weight, /*byte_targets=*/true);
  check_same_dtype(op, "grad_output", grad_output, self);
  check_same_dtype(op, "total_weight", total_weight, self);
  backward("nll_loss_backward", grad_output, self, target, weight, nll_kernel_reduction(self, reduction),
           ignore_index, total_weight, nll_geometry(self), grad_input);
}

std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                            const std::optional<at::Tensor>& weight_opt,
                                                            int64_t reduction, int64_t ignore_index,
                                                            at::Tensor& output, at::Tensor& total_weight) {
  const char* op = "nll_loss2d_forward";
  const at::Tensor weight = optional_contiguous(weight_opt);
  check_nll2d_inputs(self, target, weight);
  check_dtypes(op, self, target, weight, /*byte_targets=*/false);
  std::vector<int64_t> output_sizes;
  if (reduction == kNone) output_sizes = {self.size(0), self.size(2), self.size(3)};
  prepare_out(output, output_sizes, self.options());
  prepare_out(total_weight, {}, self.options());
  forward("nll_loss2d_forward", self, target, weight, reduction, ignore_index, nll2d_geometry(self), output, total_weight);
  return {output, total_weight};
}

at::Tensor& nll_loss2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                    const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                                    int64_t ignore_index, const at::Tensor& total_weight, at::Tensor& grad_input) {
  const char* op = "nll_loss2d_backward";
  const at::Tensor weight = optional_contiguous(weight_opt);
  check_nll2d_inputs(self, target, weight);
  TORCH_CHECK(total_weight.numel() == 1, "expected total_weight to be a single element tensor, got: ",
              total_weight.sizes(), " (", total_weight.numel(), " elements)");
  if (reduction == kNone) {
    TORCH_CHECK(grad_output.dim() == 3, "grad_output must have same dimension as target (3) but got dimension: ",
                grad_output.sizes());
    TORCH_CHECK(grad_output.sizes() == target.sizes(), "size mismatch (got grad_output: ", grad_output.sizes(),
                " target: ", target.sizes());
  } else {
    TORCH_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1,
                "Expected a single element grad_output tensor, but got: ", grad_output.sizes());
  }
  check_dtypes(op, self, target, weight, /*byte_targets=*/false);
  check_same_dtype(op, "grad_output", grad_output, self);
  check_same_dtype(op, "total_weight", total_weight, self);
  prepare_out(grad_input, self.sizes(), self.options());
  backward("nll_loss2d_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight,
           nll2d_geometry(self), grad_input);
  return grad_input;
}

}  // namespace foo::native
