// A fused row-wise layer norm: y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim,
// one block per row, in one kernel (the composite version runs about six). It shows what makes a
// kernel cooperative: the row is staged in dynamic shared memory, and mean and variance come from
// a block reduction (warp shuffles, then shared memory across warps, with barriers between).
#include <torch_foo/kernel.h>

namespace layer_norm::FOO_TARGET {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Sum of v over the block; every thread gets the result. `partials` holds one value per warp.
__device__ float block_sum(float v, float* partials) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partials[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kWarps; ++w) total += partials[w];
  __syncthreads();  // partials is reused by the next reduction
  return total;
}

__global__ void __launch_bounds__(kThreads)
layer_norm_kernel(const float* x, const float* weight, const float* bias, float* y, int64_t cols, float eps) {
  __shared__ float partials[kWarps];
  FOO_DYNAMIC_SHARED(float, row);  // cols floats: the row is read from global memory once
  const float* in = x + blockIdx.x * cols;

  float sum = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    row[c] = in[c];
    sum += row[c];
  }
  const float mean = block_sum(sum, partials) / static_cast<float>(cols);

  float squares = 0.f;  // two passes over shared memory: no cancellation of E[x^2] - E[x]^2
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) squares += (row[c] - mean) * (row[c] - mean);
  const float rstd = 1.f / torch_foo::math::sqrt(block_sum(squares, partials) / static_cast<float>(cols) + eps);

  float* out = y + blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = (row[c] - mean) * rstd * weight[c] + bias[c];
}

void layer_norm_rows(torch_foo::Stream stream, const float* x, const float* weight, const float* bias, float* y,
                     int64_t rows, int64_t cols, float eps) {
  if (rows == 0 || cols == 0) return;
  // launch (not launch_independent): the kernel synchronises and shuffles. A bad configuration
  // (a row too long for shared memory, too many rows) throws an error naming the kernel.
  torch_foo::launch("layer_norm::layer_norm_rows", layer_norm_kernel, dim3(static_cast<unsigned>(rows)),
                    dim3(kThreads), static_cast<size_t>(cols) * sizeof(float), stream, x, weight, bias, y, cols, eps);
}

}  // namespace layer_norm::FOO_TARGET
