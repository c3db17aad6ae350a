#pragma once
#include "kernels/dispatch.h"
#include "kernels/dtype.h"

// Softmax, log-softmax and their gradients for small problems: the arguments of softmax_forward
// and softmax_backward (softmax.h). Returns false, launching nothing, unless the problem is small
// enough for the one-thread-per-row path (rows along the last dimension, few elements in all);
// then the results are bit-identical to softmax_forward/softmax_backward's.
FOO_DECLARE_KERNEL(bool, softmax_forward_small, (Stream stream, const void* in, void* out, foo::kernels::DType in_dtype,
                                                 foo::kernels::DType out_dtype, int64_t outer, int64_t dim,
                                                 int64_t inner, bool log))
FOO_DECLARE_KERNEL(bool, softmax_backward_small, (Stream stream, const void* grad_out, const void* y, void* grad_in,
                                                  foo::kernels::DType grad_dtype, foo::kernels::DType grad_in_dtype,
                                                  int64_t outer, int64_t dim, int64_t inner, bool log))
