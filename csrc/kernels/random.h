#pragma once
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/layout.h"

// Random fills from the Philox stream (seed, offset). Logical element i (row-major over the
// tensor's sizes) is out[offset_of(layout, i)]; it takes its draw from Philox counter i / 2:
// one call gives two 53-bit uniforms u0, u1 for elements 2g and 2g + 1. So every value depends
// only on (seed, offset, i): not on the grid, the driver or the tensor's strides.
//   uniform_fill:   from + (to - from) * u, rounded to T ([from, to): a value that rounds up to
//                   `to` becomes `from`)
//   normal_fill:    mean + std * Box-Muller(u0, u1), computed in double with our own log/sin/cos
//                   (so sim, cuda and the Python reference agree bit for bit), rounded to T
//   bernoulli_fill: u < p ? 1 : 0; p is a double, or (p_data != nullptr) the element of a
//                   floating tensor of dtype p_dtype at p_layout's offset of i; then a p outside
//                   [0, 1] (or nan) sets *p_error to 1 (p_error: a device int the host zeroed)
// 16-bit floats are rounded through float (double -> float -> T), as the host would cast.
FOO_DECLARE_KERNEL(void, uniform_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                        uint64_t seed, uint64_t offset, double from, double to))
FOO_DECLARE_KERNEL(void, normal_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                       uint64_t seed, uint64_t offset, double mean, double std))
FOO_DECLARE_KERNEL(void, bernoulli_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                          uint64_t seed, uint64_t offset, double p, const void* p_data,
                                          DType p_dtype, const Layout& p_layout, int* p_error))

// Fused dropout (the draws of bernoulli_fill with p = keep): mask[i] = u_i < keep;
// out[i] = x[i] * mask[i] * scale, computed in opmath_t<T>. x is at x_layout; out and mask (of
// the same strides) at out_layout.
FOO_DECLARE_KERNEL(void, dropout_fill, (Stream stream, DType dtype, const void* x, const Layout& x_layout,
                                        void* out, bool* mask, const Layout& out_layout, int64_t n, uint64_t seed,
                                        uint64_t offset, double keep, double scale))
