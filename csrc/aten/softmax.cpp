// _softmax, _log_softmax and their backward ops (*_backward_data), out= overloads registered as
// the primaries of their groups. Any dim: a contiguous tensor is viewed as [outer, dim, inner]
// and reduced in place (no copy); a non-contiguous one is made contiguous first.
// half_to_float follows CUDA: a Float16 input may produce a Float32 output (the CPU refuses it).
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>

#include "aten/softmax_common.h"
#include "kernels/softmax.h"
#include "native/log_softmax_backward_data_out.h"
#include "native/log_softmax_out.h"
#include "native/softmax_backward_data_out.h"
#include "native/softmax_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using softmax_common::finish_output;
using softmax_common::prepare_output;

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

void check_floating(at::ScalarType t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(softmax_common::is_kernel_float(t), "\"", op, "\" not implemented for '", t, "'");
}

at::Tensor& softmax_forward_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out, bool log) {
  const char* op = log ? "_log_softmax" : "_softmax";
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  check_floating(self.scalar_type(), op);
  TORCH_CHECK(!half_to_float || self.scalar_type() == at::kHalf, op,
              ": conversion (half_to_float) is supported for Half type only, got ", self.scalar_type());
  const auto out_type = half_to_float ? at::kFloat : self.scalar_type();
  at::Tensor result = prepare_output(out, self.sizes(), self.options().dtype(out_type));
  if (self.numel() == 0) return out;
  const at::Tensor in = self.contiguous();
  const Geometry g = geometry(in.sizes(), d);
  FOO_CALL_KERNEL(softmax_forward, foo::runtime::current_native_stream(self.device().index()), in.const_data_ptr(),
                  result.mutable_data_ptr(), kernel_dtype(in.scalar_type()), kernel_dtype(out_type), g.outer, g.dim,
                  g.inner, log);
  finish_output(out, result);
  return out;
}

at::Tensor& softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                 at::ScalarType input_dtype, at::Tensor& grad_input, bool log) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  at::checkSameSize(log ? "log_softmax_backward" : "softmax_backward", at::TensorArg(grad_output, "grad", 1),
                    at::TensorArg(output, "output", 2));
  const int64_t d = at::maybe_wrap_dim(dim, grad_output.dim());
  check_floating(grad_output.scalar_type(), op);
  TORCH_CHECK(output.scalar_type() == grad_output.scalar_type(), op, ": expected output to have dtype ",
              grad_output.scalar_type(), " (the dtype of grad_output), but got ", output.scalar_type());
  // The gradient of a half_to_float forward: Float32 gradients, a Float16 grad_input. Otherwise
  // grad_input has grad_output's dtype, as on the CPU.
  const bool half_to_float = grad_output.scalar_type() == at::kFloat && input_dtype == at::kHalf;
  const auto grad_input_type = half_to_float ? at::kHalf : grad_output.scalar_type();
  at::Tensor result = prepare_output(grad_input, grad_output.sizes(), grad_output.options().dtype(grad_input_type));
  if (grad_output.numel() == 0) return grad_input;
  const at::Tensor go = grad_output.contiguous(), y = output.contiguous();
  const Geometry g = geometry(go.sizes(), d);
  FOO_CALL_KERNEL(softmax_backward, foo::runtime::current_native_stream(grad_output.device().index()),
                  go.const_data_ptr(), y.const_data_ptr(), result.mutable_data_ptr(), kernel_dtype(go.scalar_type()),
                  kernel_dtype(grad_input_type), g.outer, g.dim, g.inner, log);
  finish_output(grad_input, result);
  return grad_input;
}

}  // namespace

at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return softmax_forward_out(self, dim, half_to_float, out, /*log=*/false);
}

at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return softmax_forward_out(self, dim, half_to_float, out, /*log=*/true);
}

at::Tensor& softmax_backward_data_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                      at::ScalarType input_dtype, at::Tensor& grad_input) {
  return softmax_backward_out(grad_output, output, dim, input_dtype, grad_input, /*log=*/false);
}

at::Tensor& log_softmax_backward_data_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                          at::ScalarType input_dtype, at::Tensor& out) {
  return softmax_backward_out(grad_output, output, dim, input_dtype, out, /*log=*/true);
}

}  // namespace foo::native
