// Comparison and logical ops: TensorIterator::comparison_op promotes the inputs to their common
// dtype and broadcasts; the result is bool unless out= (or in-place) says otherwise, in which
// case run_elementwise casts it. compare.cu computes.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>

#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/compare.h"
#include "native/eq_scalar_out.h"
#include "native/eq_tensor_out.h"
#include "native/ge_scalar_out.h"
#include "native/ge_tensor_out.h"
#include "native/gt_scalar_out.h"
#include "native/gt_tensor_out.h"
#include "native/le_scalar_out.h"
#include "native/le_tensor_out.h"
#include "native/logical_and_out.h"
#include "native/logical_not_out.h"
#include "native/logical_or_out.h"
#include "native/logical_xor_out.h"
#include "native/lt_scalar_out.h"
#include "native/lt_tensor_out.h"
#include "native/ne_scalar_out.h"
#include "native/ne_tensor_out.h"

namespace foo::native {
namespace {

using foo::kernels::CompareOp;
using foo::kernels::ElementwiseGeometry;
using foo::kernels::LogicalOp;
using foo::kernels::Stream;

at::Tensor& compare_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out, CompareOp op) {
  auto iter = at::TensorIterator::comparison_op(out, self, other);
  const auto common = iter.common_dtype();
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, at::kBool, {common, common},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(compare, s, dtype, g, op); });
  return iterator_result(out, iter);
}

at::Tensor& logical_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out, LogicalOp op) {
  auto iter = at::TensorIterator::comparison_op(out, self, other);
  const auto common = iter.common_dtype();
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, at::kBool, {common, common},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(logical, s, dtype, g, op); });
  return iterator_result(out, iter);
}

}  // namespace

#define FOO_COMPARISON(name, op)                                                                         \
  at::Tensor& name##_tensor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {      \
    return compare_out(self, other, out, op);                                                            \
  }                                                                                                      \
  at::Tensor& name##_scalar_out(const at::Tensor& self, const at::Scalar& other, at::Tensor& out) {      \
    return compare_out(self, at::native::wrapped_scalar_tensor(other), out, op);                         \
  }

FOO_COMPARISON(eq, CompareOp::Eq)
FOO_COMPARISON(ne, CompareOp::Ne)
FOO_COMPARISON(lt, CompareOp::Lt)
FOO_COMPARISON(le, CompareOp::Le)
FOO_COMPARISON(gt, CompareOp::Gt)
FOO_COMPARISON(ge, CompareOp::Ge)
#undef FOO_COMPARISON

at::Tensor& logical_and_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return logical_out(self, other, out, LogicalOp::And);
}

at::Tensor& logical_or_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return logical_out(self, other, out, LogicalOp::Or);
}

at::Tensor& logical_xor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return logical_out(self, other, out, LogicalOp::Xor);
}

at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& out) {
  // The functional form returns bool (aten's logical_not allocates a bool result, then calls out=).
  if (!out.defined()) out = at::empty({0}, self.options().dtype(at::kBool));
  auto iter = at::TensorIteratorConfig().check_all_same_dtype(false).add_output(out).add_const_input(self).build();
  const auto dtype = kernel_dtype(self.scalar_type());
  run_elementwise(iter, at::kBool, {self.scalar_type()},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(logical_not, s, dtype, g); });
  return out;
}

}  // namespace foo::native
