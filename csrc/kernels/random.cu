#include <cmath>

#include "kernels/philox.h"

namespace foo::kernels::FOO_TARGET {

// One thread makes two values, elements 2g and 2g+1, from the Philox block of counter g.
template <typename T, bool kNormal>
__global__ void random_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (2 * g >= n) return;
  const Philox4 r = philox4x32_10(static_cast<uint32_t>(g), static_cast<uint32_t>(static_cast<uint64_t>(g) >> 32),
                                  static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
                                  static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  const double u0 = unit_double(r.v[0], r.v[1]);
  const double u1 = unit_double(r.v[2], r.v[3]);
  T v0, v1;
  if (kNormal) {
    const double radius = sqrt(-2.0 * log(1.0 - u0));  // 1 - u0 is in (0, 1]: log is finite
    const double theta = 6.283185307179586 * u1;
    v0 = static_cast<T>(a + b * radius * cos(theta));
    v1 = static_cast<T>(a + b * radius * sin(theta));
  } else {
    // Rounding to T may reach b; the interval is half-open, so such values fold back to a.
    v0 = static_cast<T>(a + (b - a) * u0);
    v1 = static_cast<T>(a + (b - a) * u1);
    if (!(static_cast<double>(v0) < b)) v0 = static_cast<T>(a);
    if (!(static_cast<double>(v1) < b)) v1 = static_cast<T>(a);
  }
  out[2 * g] = v0;
  if (2 * g + 1 < n) out[2 * g + 1] = v1;
}

#define FOO_DEFINE_RANDOM(T)                                                                      \
  void uniform_fill(Stream stream, T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b) { \
    if (n > 0) launch_independent("uniform_", random_kernel<T, false>, blocks_for((n + 1) / 2), dim3(256), stream, out, n, seed, offset, a, b); \
  }                                                                                               \
  void normal_fill(Stream stream, T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b) { \
    if (n > 0) launch_independent("normal_", random_kernel<T, true>, blocks_for((n + 1) / 2), dim3(256), stream, out, n, seed, offset, a, b); \
  }
FOO_DEFINE_RANDOM(float)
FOO_DEFINE_RANDOM(double)
#undef FOO_DEFINE_RANDOM

}  // namespace foo::kernels::FOO_TARGET
