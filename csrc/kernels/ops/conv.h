#pragma once
// Convolutions as implicit GEMMs on the tiled GEMM core (conv.cu, gemm_tile.cuh).
//
// Every call is phrased in terms of one ordinary (non-transposed) convolution relation
//   y[n, g*Cy/G + co, o] = sum_{ci < Cx/G, k} w[g*Cy/G + co, ci, k] * x[n, g*Cx/G + ci, o * stride - padding + k * dilation]
// with x: [N, Cx, X...], w: [Cy, Cx/G, K...], y: [N, Cy, Y...], and up to 3 spatial dims (1-d and
// 2-d convolutions use size-1 leading dims). A transposed convolution is this relation read
// backwards (its input plays y, its output x), so three kernels serve both:
//   conv_forward          y  = conv(x, w) (+ bias[c] per y channel)
//   conv_backward_input   x  = conv^T(y, w) (+ bias[c] per x channel)   the gradient wrt x, and
//                                                                        a transposed conv's forward
//   conv_backward_weight  w  = corr(y, x)                                the gradient wrt w
// Tensors are read and written through arbitrary element strides (channels_last included).
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int kConvDims = 3;

// A tensor of the relation: element (n, c, d, h, w) at data[n*s[0] + c*s[1] + d*s[2] + h*s[3] + w*s[4]]
// (for w: (c_out, c_in, kd, kh, kw)).
struct ConvTensorRef {
  void* data;
  int64_t stride[5];
};

struct ConvArgs {
  DType dtype;  // of every tensor (float32, float64, float16, bfloat16); accumulates in float for 16-bit
  int64_t batch, groups;
  int64_t x_channels, y_channels;  // totals: Cx, Cy
  int64_t x_size[kConvDims], y_size[kConvDims], kernel[kConvDims];
  int64_t stride[kConvDims], padding[kConvDims], dilation[kConvDims];
  ConvTensorRef x, y, w;  // the written one is the kernel's output
  const void* bias;       // or null
  int64_t bias_stride;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, conv_forward, (Stream stream, const ConvArgs& args))
FOO_DECLARE_KERNEL(void, conv_backward_input, (Stream stream, const ConvArgs& args))
FOO_DECLARE_KERNEL(void, conv_backward_weight, (Stream stream, const ConvArgs& args))
