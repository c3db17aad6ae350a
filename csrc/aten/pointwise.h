#pragma once
// Host helpers shared by the pointwise families (compare, bitwise, binary_math, ternary).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>

#include <cstring>

#include "kernels/scalar_arg.h"

namespace foo::native {

// `value.to<T>()` for the element type T of `dtype` (ATen's checked conversion: the same
// overflow errors), as the bytes a kernel reads back with ScalarArg::as<T>().
inline foo::kernels::ScalarArg scalar_arg(const at::Scalar& value, at::ScalarType dtype) {
  foo::kernels::ScalarArg arg;
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "foo scalar argument", [&] {
    const scalar_t converted = value.to<scalar_t>();
    std::memcpy(arg.bytes, &converted, sizeof(scalar_t));
  });
  return arg;
}

// The type ATen computes a dtype in (at::opmath_type): float for 16-bit floats.
inline at::ScalarType opmath_dtype(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// The functional overload passes an undefined `out`: the iterator allocated it.
inline at::Tensor& iterator_result(at::Tensor& out, const at::TensorIteratorBase& iter) {
  if (!out.defined()) out = iter.tensor(0);
  return out;
}

// CPU-style "not implemented for dtype" error (NotImplementedError in Python).
#define FOO_CHECK_DTYPE(cond, op, dtype) \
  TORCH_CHECK_NOT_IMPLEMENTED(cond, "\"", op, "\" not implemented for '", c10::toString(dtype), "'")

}  // namespace foo::native
