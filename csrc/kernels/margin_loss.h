#pragma once
// multi_margin_loss (margin_loss.cu): a thread per sample over a contiguous [nframe, dim] input,
// with ATen's CPU formulas. Targets are int64 in [0, dim) (the host checks them first).
#include "kernels/dispatch.h"
#include "kernels/dtype.h"

namespace foo::kernels {
struct MultiMarginArgs {
  const void* input;      // [nframe, dim] of `dtype`
  const int64_t* target;  // [nframe]
  const void* weight;     // [dim] of `dtype`, or null
  int64_t nframe, dim;
  int32_t p;              // 1 or 2
  double margin;
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
