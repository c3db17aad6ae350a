#pragma once
// Reduction pieces the softmax family's kernels share (softmax.cu, nll_loss.cu): the combine
// operations and a compensated per-thread sum; the warp/block reductions are block_reduce.h's.
#include "kernels/core/block_reduce.h"

namespace foo::kernels::FOO_TARGET {
namespace softmax_detail {

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
  __device__ __forceinline__ void add(Acc v) { step(sum, carry, v); }
  // add() on a separate sum and carry: arrays of them (one per emulated lane) vectorise on the host.
  // Branch-free (the carry is a select between two computed values) for the same reason.
  static __device__ __forceinline__ void step(Acc& sum, Acc& carry, Acc v) {
    const Acc y = v - carry;
    const Acc t = sum + y;
    const Acc c = (t - sum) - y;
    carry = t - t == Acc(0) ? c : Acc(0);
    sum = t;
  }
};

}  // namespace softmax_detail
}  // namespace foo::kernels::FOO_TARGET
