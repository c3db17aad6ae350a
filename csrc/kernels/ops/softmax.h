#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// Softmax and log-softmax over the middle axis of a contiguous [outer, dim, inner] array
// (inner == 1: the reduced axis is the last one). Accumulates in opmath_t (float for 16-bit).
// out_dtype is in_dtype, or Float32 with a Float16 input (half_to_float).
FOO_DECLARE_KERNEL(void, softmax_forward, (Stream stream, const void* in, void* out, foo::kernels::DType in_dtype,
                                           foo::kernels::DType out_dtype, int64_t outer, int64_t dim, int64_t inner,
                                           bool log))

// Gradient of softmax (log == false: grad_in = y * (grad_out - sum(grad_out * y))) or log-softmax
// (log == true: grad_in = grad_out - exp(y) * sum(grad_out)), y the forward output; same layout.
// grad_out and y have dtype grad_dtype; grad_in has grad_dtype, or Float16 with Float32 grad_dtype.
FOO_DECLARE_KERNEL(void, softmax_backward, (Stream stream, const void* grad_out, const void* y, void* grad_in,
                                            foo::kernels::DType grad_dtype, foo::kernels::DType grad_in_dtype,
                                            int64_t outer, int64_t dim, int64_t inner, bool log))
