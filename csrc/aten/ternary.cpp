// where, masked_fill_, lerp, addcmul, addcdiv, clamp: argument checks, type promotion and the
// iterator as the CPU's implementations build them; ternary.cu (and binary_math.cu's
// maximum/minimum for one-sided tensor clamps) computes.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/TypeProperties.h>

#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/binary_math.h"
#include "kernels/ternary.h"
#include "native/addcdiv_out.h"
#include "native/addcmul_out.h"
#include "native/clamp_max_out.h"
#include "native/clamp_max_tensor_out.h"
#include "native/clamp_min_out.h"
#include "native/clamp_min_tensor_out.h"
#include "native/clamp_out.h"
#include "native/clamp_tensor_out.h"
#include "native/lerp_scalar_out.h"
#include "native/lerp_tensor_out.h"
#include "native/masked_fill_scalar_.h"
#include "native/masked_fill_tensor_.h"
#include "native/where_self_out.h"

namespace foo::native {
namespace {

using foo::kernels::ClampMode;
using foo::kernels::ElementwiseGeometry;
using foo::kernels::ScalarArg;
using foo::kernels::Stream;

// The device of the first operand that is not a CPU scalar: where a functional result lives.
c10::Device result_device(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors) {
    if (!t->is_cpu()) return t->device();
  }
  return tensors.begin()[0]->device();
}

// Structured clamp's iterator config (TensorCompare.cpp CLAMP_CONFIG).
at::TensorIteratorConfig clamp_config(const at::Tensor& out, const at::Tensor& self) {
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true)
      .add_output(out)
      .add_const_input(self)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true);
  return config;
}

// clamp / clamp_min / clamp_max with scalar bounds: the bounds take part in type promotion;
// an in-place clamp may not change self's dtype.
at::Tensor& clamp_scalar_impl(const at::Tensor& self, const std::optional<at::Scalar>& min,
                              const std::optional<at::Scalar>& max, at::Tensor& out) {
  auto result_type = self.scalar_type();
  TORCH_CHECK(!at::isComplexType(result_type), "clamp is not supported for complex types");
  TORCH_CHECK(!(min && min->isComplex()) && !(max && max->isComplex()), "clamp is not supported for complex types");
  if (!at::isFloatingType(result_type)) {
    at::native::ResultTypeState state = {};
    state = at::native::update_result_type_state(self, state);
    if (min) state = at::native::update_result_type_state(*min, state);
    if (max) state = at::native::update_result_type_state(*max, state);
    result_type = at::native::result_type(state);
    TORCH_CHECK(result_type == self.scalar_type() || !out.defined() || !out.is_same(self), "result type ",
                result_type, " can't be cast to the desired output type ", self.dtype());
  }
  auto iter = at::TensorIterator::unary_op(out, self.to(result_type));
  ClampMode mode = min && max ? ClampMode::Both : (min ? ClampMode::Min : ClampMode::Max);
  const auto is_nan = [](const std::optional<at::Scalar>& bound) {
    return bound && bound->toDouble() != bound->toDouble();
  };
  if (is_nan(min) || is_nan(max)) mode = ClampMode::Nan;  // a NaN bound makes every element NaN on the CPU
  FOO_CHECK_DTYPE(result_type != at::kBool, mode == ClampMode::Min ? "clamp_min_scalar" : "clamp_scalar", result_type);
  const ScalarArg lo = min && mode != ClampMode::Nan ? scalar_arg(*min, result_type) : ScalarArg{};
  const ScalarArg hi = max && mode != ClampMode::Nan ? scalar_arg(*max, result_type) : ScalarArg{};
  const auto dtype = kernel_dtype(result_type);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(clamp_scalar, s, dtype, g, mode, lo, hi);
  });
  return iterator_result(out, iter);
}

// max(self, bound) or min(self, bound): a one-sided clamp by a tensor is maximum / minimum.
void clamp_one_sided(const at::TensorIteratorBase& iter, bool is_min_bound) {
  const auto dtype = kernel_dtype(iter.common_dtype());
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) {
    if (is_min_bound) {
      FOO_CALL_KERNEL(maximum, s, dtype, g);
    } else {
      FOO_CALL_KERNEL(minimum, s, dtype, g);
    }
  });
}

}  // namespace

at::Tensor& where_self_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other,
                           at::Tensor& out) {
  const auto result_type = at::result_type(self, other);
  if (out.defined()) {
    TORCH_CHECK(out.scalar_type() == result_type, "Expected out type to be ", result_type, " but got ",
                out.scalar_type());
  } else {
    out = at::empty({0}, self.options().dtype(result_type).device(result_device({&self, &other, &condition})));
  }
  at::Tensor condition_ = condition;
  if (condition_.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE(
        "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future "
        "version of PyTorch. Use a boolean condition instead.");
    condition_ = condition_.to(at::kBool);
  }
  TORCH_CHECK(condition_.scalar_type() == at::kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              condition_.scalar_type());
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .allow_cpu_scalars(true)
                  .add_output(out)
                  .add_const_input(condition_)
                  .add_const_input(self)
                  .add_const_input(other)
                  .build();
  const auto dtype = kernel_dtype(result_type);
  run_elementwise(iter, result_type, {at::kBool, result_type, result_type},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(where, s, dtype, g); });
  return out;
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN(
        "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing this "
        "operation. This also applies to advanced indexing e.g. tensor[mask] = scalar");
  }
  at::assert_no_partial_overlap(self, mask);
  const auto result_type = self.scalar_type();
  // The CPU converts the value with value.to<scalar_t>() (checked: int8 with 300 is an error).
  const ScalarArg fill = scalar_arg(value, result_type);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)  // deprecated, not an error (see the warning)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .add_output(self)
                  .add_const_input(self)
                  .add_const_input(mask)
                  .build();
  const auto dtype = kernel_dtype(result_type);
  run_elementwise(iter, result_type, {result_type, at::kBool},
                  [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(masked_fill, s, dtype, g, fill); });
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
  return foo::native::masked_fill_scalar_(self, mask, value.item());
}

at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight, at::Tensor& out) {
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  auto iter = at::TensorIterator::binary_op(out, self, end);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(at::isFloatingType(common), "lerp_kernel_scalar", common);
  const ScalarArg w = scalar_arg(weight, opmath_dtype(common));
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(lerp_scalar, s, dtype, g, w); });
  return iterator_result(out, iter);
}

at::Tensor& lerp_tensor_out(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight,
                            at::Tensor& out) {
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  TORCH_CHECK(self.dtype() == weight.dtype(), "expected dtype ", self.dtype(), " for `weight` but got dtype ",
              weight.dtype());
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(end).add_const_input(weight).build();
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(at::isFloatingType(common), "lerp_kernel_tensor", common);
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(lerp_tensor, s, dtype, g); });
  return iterator_result(out, iter);
}

at::Tensor& addcmul_out(const at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2,
                        const at::Scalar& value, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_ternary_op(out, self, tensor1, tensor2);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(common != at::kBool, "addcmul_cpu_out", common);
  const ScalarArg v = scalar_arg(value, opmath_dtype(common));
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(addcmul, s, dtype, g, v); });
  return iterator_result(out, iter);
}

at::Tensor& addcdiv_out(const at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2,
                        const at::Scalar& value, at::Tensor& out) {
  TORCH_CHECK(!(at::isIntegralType(tensor1.scalar_type(), /*includeBool=*/true) &&
                at::isIntegralType(tensor2.scalar_type(), /*includeBool=*/true)),
              "Integer division with addcdiv is no longer supported, and in a future  ",
              "release addcdiv will perform a true division of tensor1 and tensor2. ",
              "The historic addcdiv behavior can be implemented as ",
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) ",
              "for integer inputs and as ",
              "(input + value * tensor1 / tensor2) for float inputs. ",
              "The future addcdiv behavior is just the latter implementation: ",
              "(input + value * tensor1 / tensor2), for all dtypes.");
  at::TensorIterator iter;
  iter.build_ternary_op(out, self, tensor1, tensor2);
  const auto common = iter.common_dtype();
  FOO_CHECK_DTYPE(at::isFloatingType(common), "addcdiv_cpu_out", common);
  const ScalarArg v = scalar_arg(value, opmath_dtype(common));
  const auto dtype = kernel_dtype(common);
  run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(addcdiv, s, dtype, g, v); });
  return iterator_result(out, iter);
}

at::Tensor& clamp_out(const at::Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max, at::Tensor& out) {
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  return clamp_scalar_impl(self, min, max, out);
}

at::Tensor& clamp_min_out(const at::Tensor& self, const at::Scalar& min, at::Tensor& out) {
  return clamp_scalar_impl(self, min, std::nullopt, out);
}

at::Tensor& clamp_max_out(const at::Tensor& self, const at::Scalar& max, at::Tensor& out) {
  return clamp_scalar_impl(self, std::nullopt, max, out);
}

at::Tensor& clamp_tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max, at::Tensor& out) {
  const bool has_min = min.has_value() && min->defined();
  const bool has_max = max.has_value() && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), "clamp is not supported for complex types");
  if (has_min && has_max) {
    auto iter = clamp_config(out, self).add_const_input(*min).add_const_input(*max).build();
    const auto common = iter.common_dtype();
    FOO_CHECK_DTYPE(common != at::kBool, "clamp", common);
    const auto dtype = kernel_dtype(common);
    run_elementwise(iter, [&](Stream s, const ElementwiseGeometry& g) { FOO_CALL_KERNEL(clamp_tensor, s, dtype, g); });
    return iterator_result(out, iter);
  }
  auto iter = clamp_config(out, self).add_const_input(has_min ? *min : *max).build();
  clamp_one_sided(iter, has_min);
  return iterator_result(out, iter);
}

at::Tensor& clamp_min_tensor_out(const at::Tensor& self, const at::Tensor& min, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_op(out, self, min);
  clamp_one_sided(iter, /*is_min_bound=*/true);
  return iterator_result(out, iter);
}

at::Tensor& clamp_max_tensor_out(const at::Tensor& self, const at::Tensor& max, at::Tensor& out) {
  auto iter = at::TensorIterator::binary_op(out, self, max);
  clamp_one_sided(iter, /*is_min_bound=*/false);
  return iterator_result(out, iter);
}

}  // namespace foo::native
