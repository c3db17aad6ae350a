#pragma once
// Prefix scans across the lanes of a warp and the threads of a block (scan.cu, compact.cu).
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace scan_detail {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

// Inclusive scan of v over the lanes of a warp (lane i gets op(v_0, ..., v_i)). T is int64_t,
// float or double (types both targets shuffle). All 32 lanes must call it.
template <typename T, typename Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, Op op) {
  const unsigned lane = threadIdx.x % kWarp;
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    const T other = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= static_cast<unsigned>(offset)) v = op(other, v);
  }
  return v;
}

// Exclusive sum of v over the block (blockDim.x a multiple of 32, at most 1024); *total gets the
// block's sum. `scratch`: shared memory of 32 int64. Every thread of the block must call it.
__device__ __forceinline__ int64_t block_exclusive_sum(int64_t v, int64_t* scratch, int64_t* total) {
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const int64_t inclusive = warp_inclusive_scan(v, [](int64_t a, int64_t b) { return a + b; });
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == kWarp - 1) scratch[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int64_t s = lane < warps ? scratch[lane] : 0;
    s = warp_inclusive_scan(s, [](int64_t a, int64_t b) { return a + b; });
    if (lane < warps) scratch[lane] = s;  // inclusive sums of the warps
  }
  __syncthreads();
  *total = scratch[warps - 1];
  return (warp > 0 ? scratch[warp - 1] : 0) + inclusive - v;
}

}  // namespace scan_detail
}  // namespace foo::kernels::FOO_TARGET
