#pragma once
// Unary elementwise launchers (unary.cu): out = f(self), both operands of `dtype` (the host
// promoted integer inputs of the float ops to float already).
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

namespace foo::kernels {
// neg, abs: numeric types (integers keep their dtype); sign: those and bool; the rest: floating types.
enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Sign };
}
FOO_DECLARE_KERNEL(void, unary, (Stream, UnaryOp op, DType dtype, const ElementwiseGeometry& g))
