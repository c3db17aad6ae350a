#pragma once
// Binary elementwise launchers (binary.cu). Every operand has `dtype`; the host promoted them.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

// out = self + alpha * other, out = self - alpha * other
FOO_DECLARE_KERNEL(void, add, (Stream, DType dtype, const ElementwiseGeometry& g, double alpha))
FOO_DECLARE_KERNEL(void, sub, (Stream, DType dtype, const ElementwiseGeometry& g, double alpha))
FOO_DECLARE_KERNEL(void, mul, (Stream, DType dtype, const ElementwiseGeometry& g))

namespace foo::kernels {
enum class DivMode { True, Trunc, Floor };
}
FOO_DECLARE_KERNEL(void, div, (Stream, DType dtype, const ElementwiseGeometry& g, DivMode mode))
