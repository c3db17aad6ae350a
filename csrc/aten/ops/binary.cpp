// Binary ops defined in terms of other native ops, as the CPU defines them; every other binary
// op is generated from its manifest formula (generated/pointwise/).
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>

#include "native/pow_scalar_out.h"
#include "native/rsub_tensor.h"

namespace foo::native {

// rsub(self, other, alpha) = other - alpha * self: sub with its operands swapped (its checks
// and messages included).
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return at::sub(other, self, alpha);
}

// base ** exponent for a scalar base: 1 ** x is 1 for every x (NaN included), so the CPU fills
// ones; otherwise the tensor-tensor pow with the base as a scalar operand. ATen's meta function
// has checked and allocated `out`.
TORCH_IMPL_FUNC(pow_scalar_out)(const at::Scalar& base, const at::Tensor& exponent, const at::Tensor& out) {
  if (base.equal(1.0)) {
    out.fill_(1);
  } else {
    at::pow_out(const_cast<at::Tensor&>(out), at::native::wrapped_scalar_tensor(base), exponent);
  }
}

}  // namespace foo::native
