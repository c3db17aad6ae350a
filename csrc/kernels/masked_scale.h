#pragma once
// out = grad * mask * scale (inputs: grad of `dtype`, mask bool): native_dropout's backward.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

FOO_DECLARE_KERNEL(void, masked_scale, (Stream, DType dtype, const ElementwiseGeometry& g, double scale))
