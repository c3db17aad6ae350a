// Unary math ops: TensorIterator decides the output (unary_float_op promotes integers and bool to
// the default float dtype; unary_op keeps the dtype), unary.cu computes.
#include <ATen/ATen.h>

#include "aten/elementwise.h"
#include "kernels/unary.h"
#include "native/abs_out.h"
#include "native/cos_out.h"
#include "native/exp_out.h"
#include "native/isnan.h"
#include "native/log_out.h"
#include "native/neg_out.h"
#include "native/rsqrt_out.h"
#include "native/sgn_out.h"
#include "native/sigmoid_out.h"
#include "native/sign_out.h"
#include "native/sin_out.h"
#include "native/sqrt_out.h"
#include "native/tanh_out.h"

namespace foo::native {
namespace {

using foo::kernels::ElementwiseGeometry;
using foo::kernels::Stream;
using foo::kernels::UnaryOp;

// The functional overload passes an undefined `out`: the iterator allocates it.
at::Tensor& run_unary(const char* name, UnaryOp op, at::TensorIterator& iter, at::Tensor& out) {
  const auto common = iter.common_dtype();
  // The CPU kernels' dtype coverage, with its error kind (NotImplementedError) and wording.
  const bool supported = op == UnaryOp::Sign ? !at::isComplexType(common)
                         : op == UnaryOp::Abs || op == UnaryOp::Neg
                             ? !at::isComplexType(common) && common != at::kBool
                             : at::isFloatingType(common);
  TORCH_CHECK_NOT_IMPLEMENTED(supported, "\"", name, "\" not implemented for '", toString(common), "' on foo");
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(unary, s, op, dtype, g); });
  if (!out.defined()) out = iter.tensor(0);
  return out;
}

at::Tensor& float_op(const char* name, UnaryOp op, const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_float_op(out, self);
  return run_unary(name, op, iter, out);
}

}  // namespace

at::Tensor& neg_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  auto iter = at::TensorIterator::unary_op(out, self);
  return run_unary("neg", UnaryOp::Neg, iter, out);
}

at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_op(out, self);
  return run_unary("abs", UnaryOp::Abs, iter, out);
}

at::Tensor& exp_out(const at::Tensor& self, at::Tensor& out) { return float_op("exp", UnaryOp::Exp, self, out); }
at::Tensor& log_out(const at::Tensor& self, at::Tensor& out) { return float_op("log", UnaryOp::Log, self, out); }
at::Tensor& sqrt_out(const at::Tensor& self, at::Tensor& out) { return float_op("sqrt", UnaryOp::Sqrt, self, out); }
at::Tensor& rsqrt_out(const at::Tensor& self, at::Tensor& out) { return float_op("rsqrt", UnaryOp::Rsqrt, self, out); }
at::Tensor& sin_out(const at::Tensor& self, at::Tensor& out) { return float_op("sin", UnaryOp::Sin, self, out); }
at::Tensor& cos_out(const at::Tensor& self, at::Tensor& out) { return float_op("cos", UnaryOp::Cos, self, out); }
at::Tensor& tanh_out(const at::Tensor& self, at::Tensor& out) { return float_op("tanh", UnaryOp::Tanh, self, out); }
at::Tensor& sigmoid_out(const at::Tensor& self, at::Tensor& out) {
  return float_op("sigmoid", UnaryOp::Sigmoid, self, out);
}

at::Tensor& sign_out(const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_op(out, self);
  return run_unary("sign", UnaryOp::Sign, iter, out);
}

// sgn is sign for real dtypes (foo has no complex ones).
at::Tensor& sgn_out(const at::Tensor& self, at::Tensor& out) { return foo::native::sign_out(self, out); }

// NaN is the one value unequal to itself; the comparison kernel answers.
at::Tensor isnan(const at::Tensor& self) { return at::ne(self, self); }

}  // namespace foo::native
