#pragma once
// Strided copy with dtype conversion between foo tensors of one device (copy.cu): every
// (destination, source) dtype pair, through the elementwise launcher. fill_ is a copy from a
// host scalar.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"

FOO_DECLARE_KERNEL(void, copy_cast, (Stream, DType dst, DType src, const ElementwiseGeometry& g))
