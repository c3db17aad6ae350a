#pragma once
#include "kernels/core/dispatch.h"

// out[i] = a * x[i] + b * y[i] over n contiguous elements.
FOO_DECLARE_KERNEL(void, axpby, (Stream stream, const float* x, const float* y, float* out, float a, float b, int64_t n))
FOO_DECLARE_KERNEL(void, axpby, (Stream stream, const double* x, const double* y, double* out, double a, double b, int64_t n))
