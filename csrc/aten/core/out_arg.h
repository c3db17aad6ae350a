#pragma once
// Outputs of hand-written kernels, one convention for all of csrc/aten.
// - Structured kernels get their outputs from ATen's meta function (allocated, or resized
//   out= tensors that may be strided): with_contiguous_output gives a kernel that writes dense
//   memory a contiguous target.
// - Out-as-primary kernels of unstructured ops get an undefined `out` from their functional
//   overload: prepare_out allocates it, or checks and resizes a given one; with a TensorIterator
//   (which allocates an undefined output itself), iterator_result hands its result back.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>

namespace foo::native {

// write(target) with target `out` when contiguous, else a contiguous temporary copied into out.
template <typename Write>
void with_contiguous_output(const at::Tensor& out, Write&& write) {
  if (out.is_contiguous()) {
    write(out);
    return;
  }
  const at::Tensor target = at::empty(out.sizes(), out.options().memory_format(at::MemoryFormat::Contiguous));
  write(target);
  out.copy_(target);
}

// `out` allocated (undefined: the functional overload) or dtype-checked and resized as a
// structured kernel's out= would be; returns it.
inline at::Tensor& prepare_out(at::Tensor& out, at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!out.defined()) {
    out = at::empty(sizes, options);
    return out;
  }
  TORCH_CHECK(out.dtype() == options.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
              out.dtype(), " instead");
  at::native::resize_output(out, sizes);
  return out;
}

inline at::Tensor& iterator_result(at::Tensor& out, const at::TensorIteratorBase& iter) {
  if (!out.defined()) out = iter.tensor(0);
  return out;
}

}  // namespace foo::native
