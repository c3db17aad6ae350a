// glu_backward: the CPU's argument checks and its three steps over the halves of grad_input (the
// forward is the manifest's formula over the iterator ATen's meta function builds).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>

#include "native/glu_backward_out.h"

namespace foo::native {

// The functional overload passes an undefined `grad_input`.
at::Tensor& glu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                             at::Tensor& grad_input) {
  TORCH_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t wrap_dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(wrap_dim);
  TORCH_CHECK(size % 2 == 0, "Halving dimension must be even, but dimension ", wrap_dim, " is size ", size);
  if (!grad_input.defined()) grad_input = at::empty({0}, self.options());
  grad_input.resize_as_(self);
  const int64_t half = size / 2;
  const at::Tensor first = self.narrow(wrap_dim, 0, half);
  const at::Tensor second = self.narrow(wrap_dim, half, half);
  at::Tensor grad_first = grad_input.narrow(wrap_dim, 0, half);
  at::Tensor grad_second = grad_input.narrow(wrap_dim, half, half);
  at::sigmoid_out(grad_first, second);
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_second)
                  .add_const_input(grad_first)
                  .add_const_input(first)
                  .add_const_input(grad_output)
                  .build();
  run_glu_backward_out(iter, iter.common_dtype(), wrap_dim);  // the manifest's formula
  grad_first.mul_(grad_output);
  return grad_input;
}

}  // namespace foo::native
