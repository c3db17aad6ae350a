#pragma once
// Ternary and scalar-parameterised elementwise launchers (ternary.cu): where, masked_fill,
// lerp, addcmul, addcdiv, clamp. Every tensor operand has `dtype` but the bool condition / mask.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"
#include "kernels/scalar_arg.h"

// out = cond ? a : b (inputs: cond bool, a, b)
FOO_DECLARE_KERNEL(void, where, (Stream, DType dtype, const ElementwiseGeometry& g))
// out = mask ? value : a (inputs: a, mask bool); value holds T
FOO_DECLARE_KERNEL(void, masked_fill, (Stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value))
// out = lerp(a, b, weight); weight holds opmath_t<T>
FOO_DECLARE_KERNEL(void, lerp_scalar, (Stream, DType dtype, const ElementwiseGeometry& g, ScalarArg weight))
// out = lerp(a, b, w) with w a third tensor operand
FOO_DECLARE_KERNEL(void, lerp_tensor, (Stream, DType dtype, const ElementwiseGeometry& g))
// out = a + value * b * c, out = a + value * b / c; value holds opmath_t<T>
FOO_DECLARE_KERNEL(void, addcmul, (Stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value))
FOO_DECLARE_KERNEL(void, addcdiv, (Stream, DType dtype, const ElementwiseGeometry& g, ScalarArg value))

namespace foo::kernels {
// Which bounds clamp applies; Nan: a bound is NaN, so every element is NaN (as on the CPU).
enum class ClampMode : int32_t { Min, Max, Both, Nan };
}  // namespace foo::kernels

// out = min(max(a, lo), hi) with the bounds `mode` names; lo and hi hold T
FOO_DECLARE_KERNEL(void, clamp_scalar,
                   (Stream, DType dtype, const ElementwiseGeometry& g, ClampMode mode, ScalarArg lo, ScalarArg hi))
// out = min(max(a, lo), hi) with lo and hi tensor operands (NaN where a bound is NaN)
FOO_DECLARE_KERNEL(void, clamp_tensor, (Stream, DType dtype, const ElementwiseGeometry& g))
