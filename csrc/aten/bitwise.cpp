// Bitwise and/or/xor/not on integers and bool: binary_op / unary_op iterators, bitwise.cu
// computes. The Scalar overloads are composite in aten (they wrap the scalar and call these).
#include <ATen/ATen.h>

#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/bitwise.h"
#include "native/bitwise_and_out.h"
#include "native/bitwise_not_out.h"
#include "native/bitwise_or_out.h"
#include "native/bitwise_xor_out.h"

namespace foo::native {
namespace {

using foo::kernels::BitwiseOp;
using foo::kernels::ElementwiseGeometry;
using foo::kernels::Stream;

at::Tensor& bitwise_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out, BitwiseOp op,
                        const char* name) {
  auto iter = at::TensorIterator::binary_op(out, self, other);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(at::isIntegralType(common, /*includeBool=*/true), name, common);
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(bitwise, s, dtype, g, op); });
  return iterator_result(out, iter);
}

}  // namespace

at::Tensor& bitwise_and_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return bitwise_out(self, other, out, BitwiseOp::And, "bitwise_and");
}

at::Tensor& bitwise_or_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return bitwise_out(self, other, out, BitwiseOp::Or, "bitwise_or");
}

at::Tensor& bitwise_xor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return bitwise_out(self, other, out, BitwiseOp::Xor, "bitwise_xor");
}

at::Tensor& bitwise_not_out(const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_op(out, self);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(at::isIntegralType(common, /*includeBool=*/true), "bitwise_not", common);
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(bitwise_not, s, dtype, g); });
  return iterator_result(out, iter);
}

}  // namespace foo::native
