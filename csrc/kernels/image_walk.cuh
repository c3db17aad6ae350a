#pragma once
// The thread loop of the one-thread-per-element image kernels (pool.cu, upsample.cu): a
// grid-stride walk over n x c x h x w in the written tensor's memory order (image.h).
#include "kernels/image.h"
#include "kernels/kernel.h"

namespace foo::kernels::FOO_TARGET {

// Calls f(n, c, h, w) once for every element of an [n, walk.c, walk.h, walk.w] image.
template <class F>
__device__ __forceinline__ void for_each_element(const ImageIndex& walk, int64_t n, F&& f) {
  const int64_t total = n * walk.c * walk.h * walk.w;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t in, ic, ih, iw;
    walk.split(i, in, ic, ih, iw);
    f(in, ic, ih, iw);
  }
}

}  // namespace foo::kernels::FOO_TARGET
