// y = x + 1: the smallest foo kernel. This file is CUDA; torch_foo compiles it twice (as C++ for
// the sim device, by nvcc for a GPU) into the namespace addone::sim / addone::cuda.
#include <torch_foo/kernel.h>

namespace addone::FOO_TARGET {

__global__ void add_one_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

// The launcher: host code the extension's .cpp calls through FOO_CALL_KERNEL_IN.
void add_one(torch_foo::Stream stream, const float* x, float* y, int64_t n) {
  if (n == 0) return;
  // launch_independent: the threads never synchronise, so sim runs them without fibers.
  torch_foo::launch_independent("addone::add_one", add_one_kernel, torch_foo::blocks_for(n), dim3(256), stream,
                                x, y, n);
}

}  // namespace addone::FOO_TARGET
