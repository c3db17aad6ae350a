#pragma once
// 2-d and 3-d pooling (pool.cu): max, average and adaptive (average, max), forward and backward,
// over [N, C, D, H, W] images of any layout (2-d ops are D = 1 with a depth-1 window; unbatched
// inputs are N = 1). Window arithmetic follows ATen's CPU kernels, so outputs, tie-breaking and
// NaN handling match the CPU. Backward kernels gather (a thread per grad_input element sums the
// outputs whose windows hold it): no atomics, deterministic, every dtype.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/image.h"

namespace foo::kernels {

enum class PoolKind : int8_t { Max, Avg, AdaptiveAvg, AdaptiveMax };

// One spatial dimension (depth, height or width) of a pooling.
struct PoolDim {
  int64_t in, out;
  // Max, Avg (adaptive windows come from the sizes alone); 2-d ops' depth: 1, 1, 0, 1.
  int64_t kernel, stride, pad, dilation;
};

struct PoolArgs {
  PoolKind kind;
  DType dtype;
  int dims;  // 2 or 3: which op (names in errors)
  int64_t n, c;
  PoolDim d, h, w;
  // Avg:
  bool count_include_pad;
  int64_t divisor_override;  // 0: none
  // Forward: input -> output (+ indices for Max/AdaptiveMax: (d * in_h + h) * in_w + w of each
  // maximum, as the CPU's). Backward: grad_output (as output) -> grad_input (as input), reading indices.
  ImageRef input, output, indices;
  bool channels_last;  // walk the written tensor in channels_last(_3d) order
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, pool_forward, (Stream stream, const PoolArgs& args))
FOO_DECLARE_KERNEL(void, pool_backward, (Stream stream, const PoolArgs& args))
