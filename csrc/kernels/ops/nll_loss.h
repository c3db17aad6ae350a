#pragma once
#include "kernels/core/device_error.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// Negative log-likelihood loss over a contiguous [n, classes, spatial] input (spatial == 1 for
// nll_loss, H * W for nll_loss2d) and n * spatial contiguous targets (Int64 or UInt8).
// weight: `classes` elements of `dtype`, or nullptr. reduction: 0 none, 1 mean, 2 sum.
// A target outside [0, classes) that is not ignore_index is never read or written through; the
// kernels report it in the device's error word (device_error.h: TargetOutOfBounds, the target),
// which the host checks at its next wait.

// none: output[i] = -weight[t_i] * input[i, t_i] (0 where ignored), total_weight = 0.
// mean/sum: output = sum_i -weight[t_i] * input[i, t_i] (divided by total_weight for mean),
// total_weight = sum_i weight[t_i] over the samples not ignored. Scalars are 1-element arrays.
FOO_DECLARE_KERNEL(void, nll_loss_forward, (Stream stream, const void* input, const void* target, const void* weight,
                                            void* output, void* total_weight, const foo::kernels::DeviceErrorSite& error,
                                            foo::kernels::DType dtype, foo::kernels::DType target_dtype, int64_t n,
                                            int64_t classes, int64_t spatial, int64_t reduction, int64_t ignore_index))

// grad_input (contiguous, [n, classes, spatial]) = 0, then at each sample's target class
// -weight[t] * g, with g = grad_output[i] (none), grad_output[0] (sum) or
// grad_output[0] / total_weight[0] (mean).
FOO_DECLARE_KERNEL(void, nll_loss_backward, (Stream stream, const void* grad_output, const void* target,
                                             const void* weight, const void* total_weight, void* grad_input,
                                             const foo::kernels::DeviceErrorSite& error, foo::kernels::DType dtype,
                                             foo::kernels::DType target_dtype, int64_t n, int64_t classes,
                                             int64_t spatial, int64_t reduction, int64_t ignore_index))
