#pragma once
// 2-d pooling (pool.cu): max, average and adaptive (average, max), forward and backward, over
// [N, C, H, W] images of any layout (3-d [C, H, W] inputs are N = 1). Window arithmetic follows
// ATen's CPU kernels, so outputs, tie-breaking and NaN handling match the CPU. Backward kernels
// gather (a thread per grad_input element sums the outputs whose windows hold it): no atomics,
// deterministic, every dtype.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/image.h"

namespace foo::kernels {

enum class PoolKind : int8_t { Max, Avg, AdaptiveAvg, AdaptiveMax };

struct PoolArgs {
  PoolKind kind;
  DType dtype;
  int64_t n, c, in_h, in_w, out_h, out_w;
  // Max, Avg (adaptive windows come from the sizes alone):
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  // Avg:
  bool count_include_pad;
  int64_t divisor_override;  // 0: none
  // Forward: input -> output (+ indices for Max/AdaptiveMax: h * in_w + w of each maximum).
  // Backward: grad_output (as output) -> grad_input (as input), reading indices.
  ImageRef input, output, indices;
  bool channels_last;  // walk the written tensor in channels_last order
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, pool2d_forward, (Stream stream, const PoolArgs& args))
FOO_DECLARE_KERNEL(void, pool2d_backward, (Stream stream, const PoolArgs& args))
