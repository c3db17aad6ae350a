#pragma once
// Activation launchers (activation.cu). Every operand has `dtype`; the host promoted them.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

namespace foo::kernels {
// out = f(self). relu: numeric types; the others: floating types.
enum class Activation { Relu, Silu, GeluErf, GeluTanh };
// out = f'(...) * grad with inputs (grad_output, y): y is the forward's output for Sigmoid and
// Tanh, its input for Silu and Gelu*. Floating types.
enum class ActivationBackward { Sigmoid, Tanh, Silu, GeluErf, GeluTanh };
// threshold's scalars as the CPU converts them: threshold to the compute type (float for 16-bit
// floats), value to the element type; the host fills the pair that matches the dtype.
struct ThresholdScalars {
  double threshold = 0, value = 0;              // floating dtypes (exact: already rounded)
  int64_t threshold_int = 0, value_int = 0;     // integral dtypes
};
}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, activation, (Stream, Activation op, DType dtype, const ElementwiseGeometry& g))
FOO_DECLARE_KERNEL(void, activation_backward, (Stream, ActivationBackward op, DType dtype, const ElementwiseGeometry& g))
// out = x <= threshold ? value : other, inputs (x, other): threshold(self) is (self, self),
// threshold_backward(grad, self) is (self, grad) with value 0. Numeric types.
FOO_DECLARE_KERNEL(void, threshold, (Stream, DType dtype, const ElementwiseGeometry& g, ThresholdScalars s))
