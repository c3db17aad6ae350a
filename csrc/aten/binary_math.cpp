// maximum, minimum and pow: TensorIterator promotes and broadcasts, binary_math.cu computes.
// pow follows the CPU's structure (at::native pow_out): the checks, the result dtype and the
// special exponents of `tensor ** scalar` are decided here.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>

#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/binary_math.h"
#include "native/maximum_out.h"
#include "native/minimum_out.h"
#include "native/pow_scalar_out.h"
#include "native/pow_tensor_scalar_out.h"
#include "native/pow_tensor_tensor_out.h"

namespace foo::native {
namespace {

using foo::kernels::ElementwiseGeometry;
using foo::kernels::PowKind;
using foo::kernels::ScalarArg;
using foo::kernels::Stream;

// out = a ** exponent over a one-input iterator of dtype `dtype`.
void launch_pow_scalar(const at::TensorIteratorBase& iter, at::ScalarType dtype, PowKind kind, ScalarArg exponent) {
  const auto kernel = kernel_dtype(dtype);
  run_elementwise(iter, dtype, {dtype}, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(pow_scalar, s, kernel, g, kind, exponent);
  });
}

}  // namespace

at::Tensor& maximum_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  TORCH_CHECK(!self.is_complex() && !other.is_complex(), "maximum not implemented for complex tensors.");
  auto iter = at::TensorIterator::binary_op(out, self, other);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(maximum, s, dtype, g); });
  return iterator_result(out, iter);
}

at::Tensor& minimum_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  TORCH_CHECK(!self.is_complex() && !other.is_complex(), "minimum not implemented for complex tensors.");
  auto iter = at::TensorIterator::binary_op(out, self, other);
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(minimum, s, dtype, g); });
  return iterator_result(out, iter);
}

at::Tensor& pow_tensor_tensor_out(const at::Tensor& self, const at::Tensor& exponent, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_op(out, self, exponent);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(common != at::kBool, "pow", common);
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(pow_tensor, s, dtype, g); });
  return iterator_result(out, iter);
}

at::Tensor& pow_tensor_scalar_out(const at::Tensor& self, const at::Scalar& exponent, at::Tensor& out) {
  // NumPy's rule, as the CPU checks it: an integer tensor ** a negative integer is an error.
  TORCH_CHECK(!(at::isIntegralType(self.scalar_type(), /*includeBool=*/true) && exponent.isIntegral(true) &&
                exponent.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  const auto common = at::result_type(self, exponent);
  const at::Tensor base = self.to(common);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .enforce_safe_casting_to_output(true)
                  .add_output(out)
                  .add_const_input(base)
                  .build();
  PowKind kind = PowKind::General;
  ScalarArg arg;
  if (exponent.equal(0.0) || exponent.equal(false)) {
    kind = PowKind::One;
  } else if (exponent.equal(1.0) || exponent.equal(true)) {
    kind = PowKind::Identity;
  } else {
    FOO_CHECK_DTYPE(common != at::kBool, "pow", common);
    if (common == at::kFloat || common == at::kDouble || common == at::kBFloat16) {
      // pow_tensor_scalar_kernel's fast paths (float16 takes the general one there too).
      const double e = common == at::kDouble ? exponent.to<double>() : static_cast<double>(exponent.to<float>());
      if (exponent.equal(0.5)) {
        kind = PowKind::Sqrt;
      } else if (exponent.equal(-0.5)) {
        kind = PowKind::Rsqrt;
      } else if (exponent.equal(-1.0)) {
        kind = PowKind::Reciprocal;
      } else if (e == 2.0) {
        kind = PowKind::Square;
      } else if (e == 3.0) {
        kind = PowKind::Cube;
      } else if (e == -2.0) {
        kind = PowKind::InvSquare;
      }
    }
    // The exponent in the element type: exponent.to<scalar_t>() for integers and float16, and for
    // bfloat16 the CPU's vectorised loop makes a bfloat16 vector of it.
    arg = scalar_arg(exponent, common);
  }
  launch_pow_scalar(iter, common, kind, arg);
  return iterator_result(out, iter);
}

at::Tensor& pow_scalar_out(const at::Scalar& self, const at::Tensor& exponent, at::Tensor& out) {
  if (self.equal(1.0)) {
    // 1 ** x is 1 for every x (NaN included): the CPU fills ones of the result dtype.
    const auto dtype = out.defined() ? out.scalar_type() : at::result_type(self, exponent);
    if (!out.defined()) out = at::empty({0}, exponent.options().dtype(dtype));
    auto iter = at::TensorIteratorConfig().check_all_same_dtype(false).add_output(out).add_const_input(exponent).build();
    launch_pow_scalar(iter, dtype, PowKind::One, ScalarArg{});
    return out;
  }
  return foo::native::pow_tensor_tensor_out(at::native::wrapped_scalar_tensor(self), exponent, out);
}

}  // namespace foo::native
