#pragma once
// Binary math launchers (binary_math.cu): maximum, minimum, pow. Operands have `dtype`.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"
#include "kernels/scalar_arg.h"

// out = max(a, b), min(a, b); a NaN in either operand gives NaN.
FOO_DECLARE_KERNEL(void, maximum, (Stream, DType dtype, const ElementwiseGeometry& g))
FOO_DECLARE_KERNEL(void, minimum, (Stream, DType dtype, const ElementwiseGeometry& g))
// out = a ** b, both tensors (either may be a host scalar operand).
FOO_DECLARE_KERNEL(void, pow_tensor, (Stream, DType dtype, const ElementwiseGeometry& g))

namespace foo::kernels {
// How the CPU evaluates `tensor ** scalar` (pow_tensor_scalar_kernel): special exponents take
// their own formula, which the result must match (sqrt(-0.) is -0., pow(-0., .5) is +0.).
enum class PowKind : int32_t { One, Identity, Sqrt, Rsqrt, Reciprocal, Square, Cube, InvSquare, General };
}  // namespace foo::kernels

// out = a ** exponent. `exponent` holds T (the CPU's vectorised loop rounds it to T as well);
// only One and Identity accept bool.
FOO_DECLARE_KERNEL(void, pow_scalar, (Stream, DType dtype, const ElementwiseGeometry& g, PowKind kind, ScalarArg exponent))
