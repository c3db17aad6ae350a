#pragma once
// multi_margin_loss and multilabel_margin_loss (margin_loss.cu): a thread per sample over a
// contiguous [nframe, dim] input, with ATen's CPU formulas. Targets are int64: in [0, dim) (multi),
// or rows of [nframe, dim] classes in [-1, dim), -1 ending a row (multilabel). A sample with a
// target out of range is reported at `error` (device_error.h) and left out (its loss and gradient 0).
#include "kernels/core/device_error.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {
struct MultiMarginArgs {
  const void* input;      // [nframe, dim] of `dtype`
  const int64_t* target;  // [nframe]
  const void* weight;     // [dim] of `dtype`, or null
  int64_t nframe, dim;
  int32_t p;              // 1 or 2
  double margin;
  DeviceErrorSite error;  // where a target out of range is reported
};
}  // namespace foo::kernels

// losses[i] = sum over d != t_i of max(0, margin - x[i, t_i] + x[i, d])^p * w[t_i] / dim
// (`losses`: nframe elements of `dtype`; the host reduces them for mean/sum).
FOO_DECLARE_KERNEL(void, multi_margin_loss_forward, (Stream, DType dtype, const MultiMarginArgs& args, void* losses))
// grad_input [nframe, dim] = d loss / d x times grad_output: `grad_output` holds one value
// (`per_sample` false: reduced, or a 0-d result) or nframe values; `scale` is 1/dim, or
// 1/(nframe * dim) for mean.
FOO_DECLARE_KERNEL(void, multi_margin_loss_backward,
                   (Stream, DType dtype, const MultiMarginArgs& args, const void* grad_output, bool per_sample,
                    double scale, void* grad_input))

// multilabel: is_target [nframe, dim] (of `dtype`) = 1 at each row's target classes, else 0;
// losses[i] = sum over targets j, non-targets d of max(0, 1 - x[i, j] + x[i, d]) / dim.
FOO_DECLARE_KERNEL(void, multilabel_margin_loss_forward,
                   (Stream, DType dtype, const MultiMarginArgs& args, void* losses, void* is_target))
// grad_input [nframe, dim]: -scale at j and +scale at d for each violating (j, d) pair, times
// grad_output (one value, or the sample's: `per_sample`).
FOO_DECLARE_KERNEL(void, multilabel_margin_loss_backward,
                   (Stream, DType dtype, const MultiMarginArgs& args, const void* is_target, const void* grad_output,
                    bool per_sample, double scale, void* grad_input))
