// Activations and their backward: the iterators (and so dtypes, broadcasting, out= rules) are the
// ones ATen's structured meta functions build; activation.cu computes.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include "aten/elementwise.h"
#include "kernels/activation.h"
#include "native/gelu_backward_out.h"
#include "native/gelu_out.h"
#include "native/relu.h"
#include "native/relu_.h"
#include "native/sigmoid_backward_out.h"
#include "native/silu_backward_out.h"
#include "native/silu_out.h"
#include "native/tanh_backward_out.h"
#include "native/threshold_backward_out.h"
#include "native/threshold_out.h"

namespace foo::native {
namespace {

using foo::kernels::Activation;
using foo::kernels::ActivationBackward;
using foo::kernels::ElementwiseGeometry;
using foo::kernels::Stream;
using foo::kernels::ThresholdScalars;

at::Tensor& finish(at::Tensor& out, const at::TensorIteratorBase& iter) {
  if (!out.defined()) out = iter.tensor(0);
  return out;
}

// The CPU kernels of these ops take floating types only, and say so with NotImplementedError.
void check_floating(const char* name, at::ScalarType dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(dtype), "\"", name, "\" not implemented for '", toString(dtype),
                              "' on foo");
}

at::Tensor& run_activation(const char* name, Activation op, const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIterator::unary_op(out, self);
  const auto common = iter.common_dtype();
  if (op == Activation::Relu) {
    TORCH_CHECK_NOT_IMPLEMENTED(!at::isComplexType(common), "\"relu\" not implemented for '", toString(common), "' on foo");
  } else {
    check_floating(name, common);
  }
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(activation, s, op, dtype, g); });
  return finish(out, iter);
}

// (grad_output, y) -> grad_input, promoted as binary ops are (ATen's meta functions use binary_op).
at::Tensor& run_backward(const char* name, ActivationBackward op, const at::Tensor& grad_output, const at::Tensor& y,
                         at::Tensor& grad_input) {
  auto iter = at::TensorIterator::binary_op(grad_input, grad_output, y);
  check_floating(name, iter.common_dtype());
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(activation_backward, s, op, dtype, g); });
  return finish(grad_input, iter);
}

bool gelu_is_tanh(c10::string_view approximate) {
  if (approximate == "none") return false;
  TORCH_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return true;
}

// out = x <= threshold ? value : other, iterated as ATen's threshold meta functions do.
at::Tensor& run_threshold(const at::Tensor& x, const at::Tensor& other, const at::Scalar& threshold,
                          const at::Scalar& value, at::Tensor& out) {
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)  // idempotent: overlap is fine, as on the CPU
                  .add_output(out)
                  .add_const_input(x)
                  .add_const_input(other)
                  .allow_cpu_scalars(true)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .enforce_safe_casting_to_output(true)
                  .build();
  const auto common = iter.common_dtype();
  ThresholdScalars scalars;
  // Converted as the CPU kernel converts them (threshold to the compute type, value to the
  // element type), with its overflow checks.
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, common, "threshold", [&] {
    if constexpr (std::is_integral_v<scalar_t>) {
      scalars.threshold_int = threshold.to<scalar_t>();
      scalars.value_int = value.to<scalar_t>();
    } else {
      using opmath_t = at::opmath_type<scalar_t>;
      scalars.threshold = static_cast<double>(threshold.to<opmath_t>());
      scalars.value = static_cast<double>(static_cast<opmath_t>(value.to<scalar_t>()));
    }
  });
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(threshold, s, dtype, g, scalars); });
  return finish(out, iter);
}

}  // namespace

// relu has no out= overload; the CPU computes clamp_min(self, 0), which keeps integer dtypes.
at::Tensor relu(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  at::Tensor out;
  return run_activation("relu", Activation::Relu, self, out);
}

at::Tensor& relu_(at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return run_activation("relu", Activation::Relu, self, self);
}

at::Tensor& threshold_out(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value, at::Tensor& out) {
  return run_threshold(self, self, threshold, value, out);
}

at::Tensor& threshold_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Scalar& threshold,
                                   at::Tensor& grad_input) {
  return run_threshold(self, grad_output, threshold, 0, grad_input);
}

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  const auto op = gelu_is_tanh(approximate) ? Activation::GeluTanh : Activation::GeluErf;
  return run_activation("gelu", op, self, out);
}

at::Tensor& gelu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, c10::string_view approximate,
                              at::Tensor& grad_input) {
  const auto op = gelu_is_tanh(approximate) ? ActivationBackward::GeluTanh : ActivationBackward::GeluErf;
  return run_backward("gelu_backward", op, grad_output, self, grad_input);
}

at::Tensor& silu_out(const at::Tensor& self, at::Tensor& out) { return run_activation("silu", Activation::Silu, self, out); }

at::Tensor& silu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::Tensor& grad_input) {
  return run_backward("silu_backward", ActivationBackward::Silu, grad_output, self, grad_input);
}

at::Tensor& sigmoid_backward_out(const at::Tensor& grad_output, const at::Tensor& output, at::Tensor& grad_input) {
  return run_backward("sigmoid_backward", ActivationBackward::Sigmoid, grad_output, output, grad_input);
}

at::Tensor& tanh_backward_out(const at::Tensor& grad_output, const at::Tensor& output, at::Tensor& grad_input) {
  return run_backward("tanh_backward", ActivationBackward::Tanh, grad_output, output, grad_input);
}

}  // namespace foo::native
