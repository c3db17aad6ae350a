// Binary arithmetic ops: TensorIterator promotes and broadcasts, binary.cu computes.
#include <ATen/ATen.h>
#include <ATen/native/BinaryOps.h>

#include "aten/elementwise.h"
#include "kernels/binary.h"
#include "native/add_out.h"
#include "native/div_out.h"
#include "native/div_out_mode.h"
#include "native/mul_out.h"
#include "native/rsub_tensor.h"
#include "native/sub_out.h"

namespace foo::native {
namespace {

using foo::kernels::DivMode;
using foo::kernels::ElementwiseGeometry;
using foo::kernels::Stream;

// The functional overload passes an undefined `out`: the iterator allocates it.
at::Tensor& finish(at::Tensor& out, const at::TensorIteratorBase& iter) {
  if (!out.defined()) out = iter.tensor(0);
  return out;
}

}  // namespace

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_op(out, self, other);
  at::native::alpha_check(iter.dtype(), alpha);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(add, s, dtype, g, alpha.toDouble()); });
  return finish(out, iter);
}

at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  at::native::sub_check(self, other);
  auto iter = at::TensorIterator::binary_op(out, self, other);
  at::native::alpha_check(iter.dtype(), alpha);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(sub, s, dtype, g, alpha.toDouble()); });
  return finish(out, iter);
}

at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_op(out, self, other);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(mul, s, dtype, g); });
  return finish(out, iter);
}

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_float_op(out, self, other);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(div, s, dtype, g, DivMode::True); });
  return finish(out, iter);
}

at::Tensor& div_out_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> rounding_mode,
                         at::Tensor& out) {
  if (!rounding_mode.has_value()) return foo::native::div_out(self, other, out);
  const auto mode = *rounding_mode;
  TORCH_CHECK(mode == "trunc" || mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'");
  auto iter = at::TensorIterator::binary_op(out, self, other);
  const auto dtype = kernel_dtype(iter.common_dtype());
  TORCH_CHECK(iter.common_dtype() != at::kBool, "div: foo has no kernel for dtype bool with rounding_mode='", mode, "'");
  const DivMode div_mode = mode == "trunc" ? DivMode::Trunc : DivMode::Floor;
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(div, s, dtype, g, div_mode); });
  return finish(out, iter);
}

// rsub(self, other, alpha) = other - alpha * self, on the sub kernel.
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor out;
  return foo::native::sub_out(other, self, alpha, out);
}

}  // namespace foo::native
