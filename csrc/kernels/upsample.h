#pragma once
// 2-d resampling (upsample.cu): nearest and bilinear, forward and backward, over [N, C, H, W]
// images of any layout. Source indices and weights follow ATen's UpSample.h arithmetic (the
// same float operations), so the CPU's choices of neighbours are reproduced exactly. Backward
// kernels gather: a thread per grad_input element finds, by binary search over the monotone
// source-index map, the outputs that read it; no atomics, deterministic.
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/image.h"

namespace foo::kernels {

enum class UpsampleKind : int8_t { Nearest, Bilinear };

struct UpsampleArgs {
  UpsampleKind kind;
  DType dtype;
  int64_t n, c, in_h, in_w, out_h, out_w;
  // Nearest: ATen's compute_scales_value<float> (input / output, or 1 / scale when given).
  // Bilinear: area_pixel_compute_scale in the accumulation type (float, double for float64).
  double scale_h, scale_w;
  bool align_corners;  // Bilinear
  // Forward: input -> output. Backward: grad_output (as output) -> grad_input (as input).
  ImageRef input, output;
  bool channels_last;  // walk the written tensor in channels_last order
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, upsample2d_forward, (Stream stream, const UpsampleArgs& args))
FOO_DECLARE_KERNEL(void, upsample2d_backward, (Stream stream, const UpsampleArgs& args))
