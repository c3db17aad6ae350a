#pragma once
// Resampling (upsample.cu): nearest, nearest-exact, (bi/tri)linear and bicubic, forward and
// backward, over [N, C, D, H, W] images of any layout (1-d and 2-d ops are D = H = 1 or D = 1).
// Source indices and weights follow ATen's UpSample.h arithmetic (the same float operations), so
// the CPU's choices of neighbours are reproduced exactly. Backward kernels gather: a thread per
// grad_input element finds, by binary search over the monotone source-index map, the outputs
// that read it; no atomics, deterministic.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/image.h"

namespace foo::kernels {

enum class UpsampleKind : int8_t { Nearest, NearestExact, Linear, Cubic };

struct UpsampleArgs {
  UpsampleKind kind;
  DType dtype;
  const char* op;  // the aten op, for errors and launch names
  int64_t n, c, in_d, in_h, in_w, out_d, out_h, out_w;
  // Nearest(-exact): ATen's compute_scales_value<float> (input / output, or 1 / scale when given).
  // Linear, Cubic: area_pixel_compute_scale in the accumulation type (float, double for float64).
  double scale_d, scale_h, scale_w;
  bool align_corners;  // Linear, Cubic
  // Forward: input -> output. Backward: grad_output (as output) -> grad_input (as input).
  ImageRef input, output;
  bool channels_last;  // walk the written tensor in channels_last(_3d) order
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, upsample_forward, (Stream stream, const UpsampleArgs& args))
FOO_DECLARE_KERNEL(void, upsample_backward, (Stream stream, const UpsampleArgs& args))
