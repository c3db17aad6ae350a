#pragma once
// Host side of kernels/core/image.h: a tensor of 1 to 3 spatial dimensions, batched [N, C, ...] or
// one image [C, ...], as the 5-d [N, C, D, H, W] image the pooling and resampling kernels walk.
#include <ATen/core/Tensor.h>

#include "kernels/core/image.h"

namespace foo::native {

// The (n, c, d, h, w) strides of `t` with `dims` spatial dimensions: the dimensions it lacks have
// stride 0 (size 1). An undefined tensor (an output not asked for) is a null image.
inline foo::kernels::ImageRef image_ref(const at::Tensor& t, int dims) {
  if (!t.defined()) return {nullptr, 0, 0, 0, 0, 0};
  const int64_t batched = t.dim() - dims - 1;  // 1 when there is a batch dimension
  const auto spatial = [&](int i) {            // i: 0 d, 1 h, 2 w
    return i >= 3 - dims ? t.stride(t.dim() - 3 + i) : 0;
  };
  return {t.data_ptr(), batched ? t.stride(0) : 0, t.stride(batched), spatial(0), spatial(1), spatial(2)};
}

// Whether a kernel writing `t` walks it channels-last (image.h's ImageIndex): a batched 2-d or 3-d
// image in channels_last(_3d) memory that is not also contiguous.
inline bool walks_channels_last(const at::Tensor& t, int dims) {
  if ((dims != 2 && dims != 3) || t.dim() != dims + 2 || t.is_contiguous()) return false;
  return t.is_contiguous(dims == 3 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast);
}

}  // namespace foo::native
