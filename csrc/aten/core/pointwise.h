#pragma once
// Host side of the pointwise ops generated from the manifest (generated/pointwise/*.cpp) and of
// the elementwise ops written by hand: scalar arguments as kernels read them, and the launch of a
// generated kernel over a TensorIterator (promotion, broadcasting and the output are the
// iterator's; run_elementwise casts mismatched operands).
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/TensorMeta.h>
#include <ATen/native/Gelu.h>  // get_gelutype_enum, for the manifest's `when:` conditions

#include <optional>

#include "aten/core/elementwise.h"
#include "aten/core/kernel_dtype.h"
#include "aten/core/out_arg.h"
#include "kernels/core/pointwise.h"

namespace foo::native {

using PointwiseFn = void (*)(foo::kernels::Stream, foo::kernels::DType, const foo::kernels::ElementwiseGeometry&,
                             const foo::kernels::PointwiseArgs&);

// A generated kernel's launcher for each target (cuda null without the cuda target).
struct PointwiseLauncher {
  PointwiseFn sim;
  PointwiseFn cuda;
};

#ifdef FOO_WITH_CUDA
#define FOO_POINTWISE_LAUNCHER(name) \
  (::foo::native::PointwiseLauncher{&::foo::kernels::sim::name, &::foo::kernels::cuda::name})
#else
#define FOO_POINTWISE_LAUNCHER(name) (::foo::native::PointwiseLauncher{&::foo::kernels::sim::name, nullptr})
#endif

// Runs the launcher over iter computing in `dtype`, once the output has `output_dtype` and input
// i has input_dtypes[i] (else run_elementwise casts through temporaries). A host scalar input i
// with bit i of `unrounded_inputs` set reaches the kernel unrounded (the manifest's
// `wrapped_numbers: {<input>: compute}`).
void run_pointwise(const at::TensorIteratorBase& iter, const char* op, PointwiseLauncher launcher,
                   const foo::kernels::PointwiseArgs& args, at::ScalarType dtype, at::ScalarType output_dtype,
                   c10::ArrayRef<at::ScalarType> input_dtypes, uint32_t unrounded_inputs = 0);

// The type ATen computes a dtype in (at::opmath_type): float for 16-bit floats.
inline at::ScalarType opmath_dtype(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// A scalar as the CPU's float and double kernels compare it: in double for double, else in float.
inline double compute_value(const at::Scalar& value, at::ScalarType dtype) {
  return dtype == at::kDouble ? value.to<double>() : static_cast<double>(value.to<float>());
}

// `value.to<T>()` for the element type T of `dtype` (ATen's checked conversion: the same overflow
// errors), as the bytes a kernel reads back with ScalarArg::as<T>(). Exact for every int64.
foo::kernels::ScalarArg scalar_arg(const at::Scalar& value, at::ScalarType dtype);

// Scalar i of a formula, converted to `dtype`; an absent optional leaves it unset.
void set_scalar(foo::kernels::PointwiseArgs& args, int i, const at::Scalar& value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, const std::optional<at::Scalar>& value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, at::OptionalScalarRef value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, double value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, int64_t value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, bool value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, std::optional<double> value, at::ScalarType dtype);
void set_scalar(foo::kernels::PointwiseArgs& args, int i, std::optional<int64_t> value, at::ScalarType dtype);

}  // namespace foo::native
