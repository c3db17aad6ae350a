// PReLU's kernels as the CPU's _prelu_kernel and _prelu_kernel_backward: the forward and grad_input
// are the manifest's formula over the CPU's iterators. prelu() itself is CompositeImplicitAutograd:
// it checks weight and reshapes it to broadcast against self.
#include <ATen/ATen.h>

#include "native/_prelu_kernel.h"
#include "native/_prelu_kernel_backward.h"

namespace foo::native {
namespace {

// self > 0 ? factor : weight * factor, into out.
void run_prelu(const at::Tensor& out, const at::Tensor& self, const at::Tensor& weight, const at::Tensor& factor) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(self)
                  .add_const_input(weight)
                  .add_const_input(factor)
                  .build();
  run__prelu_kernel(iter, iter.common_dtype());
}

}  // namespace

at::Tensor _prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  at::Tensor result = at::empty_like(self);
  run_prelu(result, self, weight, self);
  return result;
}

std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                          const at::Tensor& weight) {
  at::Tensor grad_self = at::empty({0}, self.options());
  run_prelu(grad_self, self, weight, grad_output);
  // self > 0 ? 0 : self * grad_output, the CPU's second output (same shape as grad_self).
  at::Tensor grad_weight = at::where(self > 0, at::zeros({}, self.options()), self * grad_output);
  return {grad_self, grad_weight};
}

}  // namespace foo::native
