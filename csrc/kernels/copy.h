#pragma once
// Strided copy with dtype conversion between foo tensors of one device (copy.cu): every
// (destination, source) dtype pair, through the elementwise launcher. fill_ is a copy from a
// host scalar.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/geometry.h"

FOO_DECLARE_KERNEL(void, copy_cast, (Stream, DType dst, DType src, const ElementwiseGeometry& g))
