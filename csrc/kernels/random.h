#pragma once
#include "kernels/dispatch.h"

// Fills n contiguous elements from the Philox stream (seed, offset). Uniform: [a, b).
// Normal: mean a, standard deviation b (Box-Muller on pairs of uniforms).
#define FOO_RANDOM_KERNELS(T)                                                                   \
  FOO_DECLARE_KERNEL(void, uniform_fill, (Stream, T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b)) \
  FOO_DECLARE_KERNEL(void, normal_fill, (Stream, T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b))
FOO_RANDOM_KERNELS(float)
FOO_RANDOM_KERNELS(double)
#undef FOO_RANDOM_KERNELS
