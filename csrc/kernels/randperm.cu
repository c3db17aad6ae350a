#include "kernels/randperm.h"

#include "kernels/kernel.h"
#include "kernels/philox.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

dim3 grid_for(int64_t n) { return capped_blocks_for(n, kMaxBlocks, kThreads); }

__global__ void keys_kernel(int64_t n, int64_t padded, uint64_t seed, uint64_t offset, uint64_t* keys,
                            int64_t* indices) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += stride) {
    if (i < n) {
      const Philox4 r = philox_draw(i / 2, seed, offset);
      const int k = static_cast<int>(i & 1);
      keys[i] = static_cast<uint64_t>(r.v[2 * k]) << 32 | r.v[2 * k + 1];
      indices[i] = i;
    } else {  // padding: after every real pair (a real key may be all ones, its index is smaller)
      keys[i] = ~uint64_t{0};
      indices[i] = INT64_MAX;
    }
  }
}

__device__ inline bool pair_less(uint64_t ka, int64_t ia, uint64_t kb, int64_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

// One compare-exchange pass of the bitonic network: stage k (sorted run length), distance j.
__global__ void bitonic_pass_kernel(int64_t padded, int64_t k, int64_t j, uint64_t* keys, int64_t* indices) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += stride) {
    const int64_t partner = i ^ j;
    if (partner <= i) continue;
    const bool ascending = (i & k) == 0;
    const bool out_of_order = ascending ? pair_less(keys[partner], indices[partner], keys[i], indices[i])
                                        : pair_less(keys[i], indices[i], keys[partner], indices[partner]);
    if (out_of_order) {
      const uint64_t key = keys[i];
      keys[i] = keys[partner];
      keys[partner] = key;
      const int64_t index = indices[i];
      indices[i] = indices[partner];
      indices[partner] = index;
    }
  }
}

template <typename T>
__global__ void write_kernel(int64_t n, const int64_t* indices, T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = cast<T>(indices[i]);
  }
}

}  // namespace

void randperm(Stream stream, DType dtype, int64_t n, uint64_t seed, uint64_t offset, uint64_t* keys,
              int64_t* indices, void* out) {
  dispatch<kNumericTypes>(dtype, "randperm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    int64_t padded = 1;
    while (padded < n) padded *= 2;
    launch_independent("randperm", keys_kernel, grid_for(padded), dim3(kThreads), stream, n, padded, seed, offset,
                       keys, indices);
    for (int64_t k = 2; k <= padded; k *= 2) {
      for (int64_t j = k / 2; j > 0; j /= 2) {
        launch_independent("randperm", bitonic_pass_kernel, grid_for(padded), dim3(kThreads), stream, padded, k, j,
                           keys, indices);
      }
    }
    launch_independent("randperm", write_kernel<T>, grid_for(n), dim3(kThreads), stream, n,
                       static_cast<const int64_t*>(indices), static_cast<T*>(out));
  });
}

}  // namespace foo::kernels::FOO_TARGET
