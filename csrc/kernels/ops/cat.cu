// torch.cat's batched copy (cat.h): grid.y picks the input, grid.x strides over its elements;
// element j of input k (o = j / (dim_size * inner), r = the rest) goes to
// out[o * out_dim_size * inner + offset * inner + r]. Elements move as bytes of their size.
#include <algorithm>

#include "kernels/ops/cat.h"
#include "kernels/core/element_bits.h"
#include "kernels/core/elementwise.cuh"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename E>
__global__ void cat_kernel(CatBatch b) {
  const CatInput& in = b.inputs[blockIdx.y];
  const int64_t chunk = in.dim_size * b.inner;  // contiguous elements per outer index
  const int64_t out_chunk = b.out_dim_size * b.inner;
  const E* src = static_cast<const E*>(in.data);
  E* out = static_cast<E*>(b.out) + in.offset * b.inner;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < in.numel;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = j / chunk;
    out[o * out_chunk + (j - o * chunk)] = src[j];
  }
}

}  // namespace

void cat_batch(Stream stream, const CatBatch& b) {
  int64_t largest = 0;
  for (int k = 0; k < b.count; ++k) largest = std::max(largest, b.inputs[k].numel);
  if (b.count == 0 || largest == 0) return;
  const unsigned kThreads = threads_for(largest);
  const dim3 grid(blocks_for(largest, kThreads, kMaxElementwiseBlocks).x, static_cast<unsigned>(b.count));
  dispatch_element_size(b.element_size, "cat", [&](auto bits) {
    launch_independent("cat", cat_kernel<decltype(bits)>, grid, dim3(kThreads), stream, b);
  });
}

}  // namespace foo::kernels::FOO_TARGET
