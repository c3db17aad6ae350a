#include "kernels/ops/randperm.h"

#include "kernels/core/kernel.h"
#include "kernels/core/philox.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

__global__ void keys_kernel(int64_t n, uint64_t seed, uint64_t offset, int64_t* keys) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Philox4 r = philox_draw(i / 2, seed, offset);
    const int k = static_cast<int>(i & 1);
    const uint64_t key = static_cast<uint64_t>(r.v[2 * k]) << 32 | r.v[2 * k + 1];
    keys[i] = static_cast<int64_t>(key ^ (uint64_t{1} << 63));
  }
}

}  // namespace

void randperm_keys(Stream stream, int64_t n, uint64_t seed, uint64_t offset, int64_t* keys) {
  if (n <= 0) return;
  launch_independent("randperm", keys_kernel, blocks_for(n, kThreads, kMaxBlocks), dim3(kThreads), stream, n,
                     seed, offset, keys);
}

}  // namespace foo::kernels::FOO_TARGET
