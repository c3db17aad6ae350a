#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/layout.h"

// What torch.amp.GradScaler runs on the device, with CUDA's arithmetic.
// unscale: every element of a gradient (at layout, in place) becomes v * inv_scale (computed in
// opmath_t<T>; left as is when inv_scale == 1), and a non-finite v sets *found_inf to 1.
// inv_scale and found_inf are one-element float32 device tensors.
FOO_DECLARE_KERNEL(void, amp_unscale, (Stream stream, DType dtype, void* grad, const Layout& layout, int64_t n,
                                       float* found_inf, const float* inv_scale))

// update_scale (one thread): after an overflow (*found_inf != 0) scale *= backoff and the growth
// tracker resets; otherwise the tracker counts successful steps and every growth_interval-th
// one multiplies the scale by growth (unless that would overflow float) and resets it.
FOO_DECLARE_KERNEL(void, amp_update_scale, (Stream stream, float* scale, int32_t* growth_tracker,
                                            const float* found_inf, double growth, double backoff,
                                            int64_t growth_interval))
