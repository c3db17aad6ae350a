#pragma once
// Host helpers of the softmax family (softmax.cpp, nll_loss.cpp): output handling as structured
// ATen kernels do it.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include "aten/kernel_dtype.h"

namespace foo::native::softmax_common {

inline bool is_kernel_float(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// The tensor a kernel writes for output `out` (contiguous, `sizes`, `options`):
// - functional call (`out` undefined): a new tensor, assigned to `out`;
// - out= call: dtype checked and `out` resized as a structured kernel's out; if `out` is then
//   not contiguous, a temporary the caller copies back with finish_output.
inline at::Tensor prepare_output(at::Tensor& out, at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!out.defined()) {
    out = at::empty(sizes, options);
    return out;
  }
  TORCH_CHECK(out.scalar_type() == c10::typeMetaToScalarType(options.dtype()), "Expected out tensor to have dtype ",
              options.dtype(), ", but got ", out.dtype(), " instead");
  at::native::resize_output(out, sizes);
  return out.is_contiguous() ? out : at::empty(sizes, options);
}

inline void finish_output(const at::Tensor& out, const at::Tensor& written) {
  if (!written.is_same(out)) out.copy_(written);
}

}  // namespace foo::native::softmax_common
