#pragma once
// The thread loop of the one-thread-per-element image kernels (pool.cu, upsample.cu): a
// grid-stride walk over n x c x d x h x w in the written tensor's memory order (image.h).
#include "kernels/core/image.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {

// Calls f(n, c, d, h, w) once for every element of an [n, walk.c, walk.d, walk.h, walk.w] image.
template <class F>
__device__ __forceinline__ void for_each_element(const ImageIndex& walk, int64_t n, F&& f) {
  const int64_t total = walk.count(n);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t in, ic, id, ih, iw;
    walk.split(i, in, ic, id, ih, iw);
    f(in, ic, id, ih, iw);
  }
}

}  // namespace foo::kernels::FOO_TARGET
