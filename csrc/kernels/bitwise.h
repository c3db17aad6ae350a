#pragma once
// Bitwise launchers (bitwise.cu) over integer and bool operands, all of `dtype`.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

namespace foo::kernels {
enum class BitwiseOp : int32_t { And, Or, Xor };
}

// out = a <op> b (logical for bool)
FOO_DECLARE_KERNEL(void, bitwise, (Stream, DType dtype, const ElementwiseGeometry& g, BitwiseOp op))
// out = ~a (!a for bool)
FOO_DECLARE_KERNEL(void, bitwise_not, (Stream, DType dtype, const ElementwiseGeometry& g))
