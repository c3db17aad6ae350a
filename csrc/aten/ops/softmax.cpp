// _softmax, _log_softmax and their backward ops (*_backward_data): structured, so ATen's meta
// functions check the arguments and size the output; impl() runs the kernel. Any dim: a
// contiguous tensor is viewed as [outer, dim, inner] and reduced in place (no copy); a
// non-contiguous one is made contiguous first. half_to_float follows CUDA: a Float16 input may
// produce a Float32 output (the CPU refuses it).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/out_arg.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/softmax.h"
#include "native/log_softmax_backward_data_out.h"
#include "native/log_softmax_out.h"
#include "native/softmax_backward_data_out.h"
#include "native/softmax_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

struct Geometry {
  int64_t outer = 1, dim = 1, inner = 1;
};

// [outer, dim, inner] of `sizes` around dimension d (a 0-d tensor is one row of one element).
Geometry geometry(at::IntArrayRef sizes, int64_t d) {
  Geometry g;
  if (sizes.empty()) return g;
  for (int64_t i = 0; i < d; ++i) g.outer *= sizes[i];
  g.dim = sizes[d];
  for (int64_t i = d + 1; i < static_cast<int64_t>(sizes.size()); ++i) g.inner *= sizes[i];
  return g;
}

void softmax_forward(const at::Tensor& self, int64_t dim, const at::Tensor& out, bool log) {
  check_kernel_dtype(log ? "_log_softmax" : "_softmax", self.scalar_type(), foo::kernels::kFloatingTypes);
  if (self.numel() == 0) return;
  const at::Tensor in = self.contiguous();
  const Geometry g = geometry(in.sizes(), at::maybe_wrap_dim(dim, self.dim()));
  with_contiguous_output(out, [&](const at::Tensor& result) {
    FOO_CALL_KERNEL(softmax_forward, stream_of(self), in.const_data_ptr(),
                    result.mutable_data_ptr(), kernel_dtype(in.scalar_type()), kernel_dtype(out.scalar_type()),
                    g.outer, g.dim, g.inner, log);
  });
}

void softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                      const at::Tensor& grad_input, bool log) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  check_kernel_dtype(op, grad_output.scalar_type(), foo::kernels::kFloatingTypes);
  TORCH_CHECK(output.scalar_type() == grad_output.scalar_type(), op, ": expected output to have dtype ",
              grad_output.scalar_type(), " (the dtype of grad_output), but got ", output.scalar_type());
  if (grad_output.numel() == 0) return;
  const at::Tensor go = grad_output.contiguous(), y = output.contiguous();
  const Geometry g = geometry(go.sizes(), at::maybe_wrap_dim(dim, grad_output.dim()));
  with_contiguous_output(grad_input, [&](const at::Tensor& result) {
    FOO_CALL_KERNEL(softmax_backward, stream_of(grad_output),
                    go.const_data_ptr(), y.const_data_ptr(), result.mutable_data_ptr(), kernel_dtype(go.scalar_type()),
                    kernel_dtype(grad_input.scalar_type()), g.outer, g.dim, g.inner, log);
  });
}

void check_half_to_float(const at::Tensor& self, bool half_to_float, const char* op) {
  TORCH_CHECK(!half_to_float || self.scalar_type() == at::kHalf, op,
              ": conversion (half_to_float) is supported for Half type only, got ", self.scalar_type());
}

}  // namespace

TORCH_IMPL_FUNC(softmax_out)(const at::Tensor& self, int64_t dim, bool half_to_float, const at::Tensor& out) {
  check_half_to_float(self, half_to_float, "_softmax");
  softmax_forward(self, dim, out, /*log=*/false);
}

TORCH_IMPL_FUNC(log_softmax_out)(const at::Tensor& self, int64_t dim, bool half_to_float, const at::Tensor& out) {
  check_half_to_float(self, half_to_float, "_log_softmax");
  softmax_forward(self, dim, out, /*log=*/true);
}

// The gradient of a half_to_float forward has Float32 gradients and a Float16 grad_input (ATen's
// meta function picks that dtype); otherwise grad_input has grad_output's dtype.
TORCH_IMPL_FUNC(softmax_backward_data_out)(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                           at::ScalarType /*input_dtype*/, const at::Tensor& grad_input) {
  softmax_backward(grad_output, output, dim, grad_input, /*log=*/false);
}

TORCH_IMPL_FUNC(log_softmax_backward_data_out)(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                               at::ScalarType /*input_dtype*/, const at::Tensor& out) {
  softmax_backward(grad_output, output, dim, out, /*log=*/true);
}

}  // namespace foo::native
