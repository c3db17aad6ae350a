#include "aten/core/pointwise.h"

#include <ATen/Dispatch.h>

#include <cstring>

#include "kernels/core/dispatch.h"

namespace foo::native {

void run_pointwise(const at::TensorIteratorBase& iter, const char* op, PointwiseLauncher launcher,
                   const foo::kernels::PointwiseArgs& args, at::ScalarType dtype, at::ScalarType output_dtype,
                   c10::ArrayRef<at::ScalarType> input_dtypes, uint32_t unrounded_inputs) {
  // A manifest whose `inputs:` disagree with the iterator ATen's meta function built.
  TORCH_CHECK(iter.noutputs() == 1 && iter.ninputs() == static_cast<int>(input_dtypes.size()), op,
              ": the manifest's formula reads ", input_dtypes.size(), " inputs, but the iterator has ", iter.ninputs(),
              "; fix the entry's 'inputs:' in the manifest");
  const PointwiseFn fn = foo::kernels::on_cuda() ? launcher.cuda : launcher.sim;
  const auto kernel = kernel_dtype(dtype);
  run_elementwise(iter, output_dtype, input_dtypes,
                  [&](foo::kernels::Stream s, const foo::kernels::ElementwiseGeometry& g) { fn(s, kernel, g, args); },
                  unrounded_inputs);
}

foo::kernels::ScalarArg scalar_arg(const at::Scalar& value, at::ScalarType dtype) {
  foo::kernels::ScalarArg arg;
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "foo scalar argument", [&] {
    static_assert(sizeof(scalar_t) <= sizeof(arg.bytes));
    const scalar_t converted = value.to<scalar_t>();
    std::memcpy(arg.bytes, &converted, sizeof(scalar_t));
  });
  return arg;
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, const at::Scalar& value, at::ScalarType dtype) {
  TORCH_INTERNAL_ASSERT(i >= 0 && i < foo::kernels::kMaxPointwiseScalars);
  args.scalars[i] = scalar_arg(value, dtype);
  args.present[i] = true;
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, const std::optional<at::Scalar>& value, at::ScalarType dtype) {
  if (value.has_value()) set_scalar(args, i, *value, dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, at::OptionalScalarRef value, at::ScalarType dtype) {
  if (value.has_value()) set_scalar(args, i, value.get(), dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, double value, at::ScalarType dtype) {
  set_scalar(args, i, at::Scalar(value), dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, int64_t value, at::ScalarType dtype) {
  set_scalar(args, i, at::Scalar(value), dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, bool value, at::ScalarType dtype) {
  set_scalar(args, i, at::Scalar(value), dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, std::optional<double> value, at::ScalarType dtype) {
  if (value.has_value()) set_scalar(args, i, at::Scalar(*value), dtype);
}

void set_scalar(foo::kernels::PointwiseArgs& args, int i, std::optional<int64_t> value, at::ScalarType dtype) {
  if (value.has_value()) set_scalar(args, i, at::Scalar(*value), dtype);
}

}  // namespace foo::native
