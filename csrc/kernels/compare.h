#pragma once
// Comparison and logical launchers (compare.cu): bool results. Inputs have `dtype` (the host
// promoted them to the common dtype); the output operand is bool.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

namespace foo::kernels {
enum class CompareOp : int32_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class LogicalOp : int32_t { And, Or, Xor };
}  // namespace foo::kernels

// out = a <op> b
FOO_DECLARE_KERNEL(void, compare, (Stream, DType dtype, const ElementwiseGeometry& g, CompareOp op))
// out = bool(a) <op> bool(b)
FOO_DECLARE_KERNEL(void, logical, (Stream, DType dtype, const ElementwiseGeometry& g, LogicalOp op))
// out = !bool(a)
FOO_DECLARE_KERNEL(void, logical_not, (Stream, DType dtype, const ElementwiseGeometry& g))
