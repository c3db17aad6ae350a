#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {

template <typename T>
__global__ void axpby_kernel(const T* x, const T* y, T* out, T a, T b, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + b * y[i];
}

void axpby(Stream stream, const float* x, const float* y, float* out, float a, float b, int64_t n) {
  if (n == 0) return;
  launch_independent("foo::axpby", axpby_kernel<float>, blocks_for(n), dim3(256), stream, x, y, out, a, b, n);
}

void axpby(Stream stream, const double* x, const double* y, double* out, double a, double b, int64_t n) {
  if (n == 0) return;
  launch_independent("foo::axpby", axpby_kernel<double>, blocks_for(n), dim3(256), stream, x, y, out, a, b, n);
}

}  // namespace foo::kernels::FOO_TARGET
