#pragma once
// Atomic max/min of floats, which CUDA lacks, for both targets: a compare-and-swap loop on the
// bit pattern, built on atomicCAS and __float_as_int that both targets provide. NaN propagates
// (as torch.amax/amin): once either side is NaN the stored value becomes and stays NaN.
// Returns the old value, like CUDA's atomics.
#include "kernels/core/kernel.h"

__device__ inline float foo_atomic_update_float(float* addr, float val, bool want_max) {
  int* bits = reinterpret_cast<int*>(addr);
  int old = *reinterpret_cast<volatile int*>(bits);
  for (;;) {
    const float cur = __int_as_float(old);
    if (cur != cur) return cur;  // NaN already stored
    const bool replace = val != val || (want_max ? val > cur : val < cur);
    if (!replace) return cur;
    const int seen = atomicCAS(bits, old, __float_as_int(val));
    if (seen == old) return cur;
    old = seen;
  }
}

__device__ inline float foo_atomic_max_float(float* addr, float val) { return foo_atomic_update_float(addr, val, true); }
__device__ inline float foo_atomic_min_float(float* addr, float val) { return foo_atomic_update_float(addr, val, false); }
