#pragma once
// Warp and block reductions for the softmax family's kernels (softmax.cu, nll_loss.cu):
// warp shuffles within a warp, shared memory and __syncthreads across the warps of a block.
#include "kernels/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace softmax_detail {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

// Max that propagates NaN (as torch's max does).
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};

// Compensated (Kahan) sum of one thread's share of a reduction: a thread may add thousands of
// terms (softmax's thread-per-row layout, nll_loss's one-block sum). An infinite partial sum
// drops the compensation, so infinities and NaNs come out as in a plain sum.
template <typename Acc>
struct CompensatedSum {
  Acc sum = 0, carry = 0;
  __device__ __forceinline__ void add(Acc v) {
    const Acc y = v - carry;
    const Acc t = sum + y;
    carry = t - t == Acc(0) ? (t - sum) - y : Acc(0);
    sum = t;
  }
};

// Reduces v over the 32 lanes of a warp (butterfly: every lane gets the result). All 32 lanes
// must call it.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// Reduces v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result. `scratch`: shared memory of at least 32 T. Every thread of the block must call it
// (it has barriers). Back-to-back calls may share one scratch: the first barrier keeps a call
// from overwriting partials that threads of the previous call are still reading.
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op, T identity, T* scratch) {
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_reduce(v, op);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  // Every warp reduces the partials itself, so no third barrier is needed to broadcast.
  v = lane < warps ? scratch[lane] : identity;
  return warp_reduce(v, op);
}

// Grid size for `blocks` blocks of a grid-stride kernel: at least 1, at most 65535.
inline dim3 capped_grid(int64_t blocks) {
  if (blocks < 1) blocks = 1;
  if (blocks > 65535) blocks = 65535;
  return dim3(static_cast<unsigned>(blocks));
}

}  // namespace softmax_detail
}  // namespace foo::kernels::FOO_TARGET
