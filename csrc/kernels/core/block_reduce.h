#pragma once
// Warp and block reductions for any kernel (reduce.cu, softmax.cu, nll_loss.cu): shuffles within a
// warp, shared memory and __syncthreads across the warps of a block.
#include <type_traits>

#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {

constexpr int kWarp = 32;
constexpr unsigned kFullWarpMask = 0xffffffffu;

// __shfl_xor_sync for any scalar: nvcc has no overloads below 4 bytes and none for 8-byte
// integers of every spelling, so those travel as int or long long. An accumulator struct gets its
// own shfl_xor overload next to it (found by argument-dependent lookup), shuffling member-wise.
template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  if constexpr (std::is_same_v<T, bool>) {
    return __shfl_xor_sync(kFullWarpMask, static_cast<int>(v), lane_mask) != 0;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 4) {
    return static_cast<T>(__shfl_xor_sync(kFullWarpMask, static_cast<int>(v), lane_mask));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    return static_cast<T>(__shfl_xor_sync(kFullWarpMask, static_cast<long long>(v), lane_mask));
  } else {
    return __shfl_xor_sync(kFullWarpMask, v, lane_mask);
  }
}

// Reduces v over the 32 lanes of a warp with combine(a, b): a butterfly, so every lane ends with
// the result. Lane j < offset combines with lane j + offset at each step, so lane 0 combines in
// exactly the order of a shfl_down tree. All 32 lanes must call it.
template <typename T, typename Combine>
__device__ __forceinline__ T warp_reduce(T v, Combine combine) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = combine(v, shfl_xor(v, offset));
  return v;
}

// Reduces v over the block (at most 1024 threads, whole warps); every thread ends with the
// result. `scratch`: shared memory of at least 32 T. Every thread of the block must call it (it
// has barriers). Back-to-back calls may share one scratch: the first barrier keeps a call from
// overwriting partials that threads of the previous call are still reading.
template <typename T, typename Combine>
__device__ __forceinline__ T block_reduce(T v, Combine combine, T identity, T* scratch) {
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const unsigned warps = (blockDim.x + kWarp - 1) / kWarp;
  v = warp_reduce(v, combine);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  // Every warp reduces the partials itself, so no third barrier is needed to broadcast.
  v = lane < warps ? scratch[lane] : identity;
  return warp_reduce(v, combine);
}

}  // namespace foo::kernels::FOO_TARGET
