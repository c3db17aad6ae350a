// The kernel side of the stable-ABI example: exactly as in any foo extension (kernel sources use
// no torch type, so they are torch-version independent by construction).
#include <torch_foo/kernel.h>

namespace foo_stable::FOO_TARGET {

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

void relu(torch_foo::Stream stream, const float* x, float* y, int64_t n) {
  if (n == 0) return;
  torch_foo::launch_independent("foo_stable::relu", relu_kernel, torch_foo::blocks_for(n), dim3(256), stream, x, y, n);
}

}  // namespace foo_stable::FOO_TARGET
