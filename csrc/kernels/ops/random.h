#pragma once
#include "kernels/core/device_error.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/layout.h"

// Random fills from the Philox stream (seed, offset). Logical element i (row-major over the
// tensor's sizes) is out[offset_of(layout, i)]; it takes its draw from Philox counter i / 2:
// one call gives four 32-bit words r0..r3; element 2g uses (r0, r1), element 2g + 1 (r2, r3),
// as two 53-bit uniforms u0, u1 (unit_double) or as raw bits. So every value depends only on
// (seed, offset, i): not on the grid, the driver or the tensor's strides.
//
// distribution_fill computes one double per element (in double, with det_math.h's log, exp and
// sin/cos, so sim, cuda and tests/philox_reference.py agree bit for bit) and rounds it to T
// (16-bit floats through float, as the host would cast). a and b per distribution:
//   Uniform      from, to        a + (b - a) * u, rounded; a value that rounds up to b becomes a
//   Normal       mean, std       Box-Muller of the pair (u0, u1): element 2g the cosine branch,
//                                2g + 1 the sine branch
//   LogNormal    mean, std       exp(Normal)
//   Exponential  lambda, -       -log(1 - u) / lambda, with log(1 - u) capped at -eps(T)/2 as
//                                CUDA does, so no value is 0
//   Cauchy       median, sigma   median + sigma * tan(pi * (u - 1/2)) = median - sigma * cot(pi u)
//   Geometric    log1p(-p), -    max(1, ceil(log(1 - u) / log1p(-p))) (integer T saturate)
namespace foo::kernels {
enum class Distribution : int32_t { Uniform, Normal, LogNormal, Exponential, Cauchy, Geometric };
}
FOO_DECLARE_KERNEL(void, distribution_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                             uint64_t seed, uint64_t offset, Distribution dist, double a, double b))

// random_: element i = base + bits % range, as int64, cast to T; bits are the element's first
// word when range < 2^32 and both words (r0 << 32 | r1) otherwise; range == 0 means 2^64 (the
// bits reinterpreted as int64). The host derives range and base (ATen's random_ templates).
FOO_DECLARE_KERNEL(void, random_int_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                           uint64_t seed, uint64_t offset, uint64_t range, int64_t base))

// bernoulli_fill: u < p ? 1 : 0; p is a double, or (p_data != nullptr) the element of a
// floating tensor of dtype p_dtype at p_layout's offset of i; then a p outside [0, 1] (or nan)
// is reported at p_error (device_error.h).
FOO_DECLARE_KERNEL(void, bernoulli_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                          uint64_t seed, uint64_t offset, double p, const void* p_data,
                                          DType p_dtype, const Layout& p_layout,
                                          const DeviceErrorSite& p_error))

// Fused dropout (the draws of bernoulli_fill with p = keep): mask[i] = u_i < keep;
// out[i] = x[i] * mask[i] * scale, computed in opmath_t<T>. x is at x_layout; out and mask (of
// the same strides) at out_layout.
FOO_DECLARE_KERNEL(void, dropout_fill, (Stream stream, DType dtype, const void* x, const Layout& x_layout,
                                        void* out, bool* mask, const Layout& out_layout, int64_t n, uint64_t seed,
                                        uint64_t offset, double keep, double scale))

// rrelu_with_noise. Training: where x <= 0, r = (opmath_t<T>)(lower + (upper - lower) * u),
// out = x * r, noise = r; elsewhere out = x, noise = 1 (the CPU's formula). Not training: the
// leaky relu of slope (lower + upper) / 2 (given as `lower`; noise untouched, may be null).
FOO_DECLARE_KERNEL(void, rrelu_fill, (Stream stream, DType dtype, const void* x, const Layout& x_layout, void* out,
                                      const Layout& out_layout, void* noise, const Layout& noise_layout, int64_t n,
                                      uint64_t seed, uint64_t offset, double lower, double upper, bool training))
