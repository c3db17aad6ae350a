// Kernels with planted bugs, one per class the sim device's checked mode reports
// (docs/emulation.md, "Checked mode"; tests/test_sim_sanitizer.py), and correct twins that run
// clean. Compiled for the sim target only, instrumented: load(..., sim_check=True).
#include <torch_foo/kernel.h>

namespace planted::FOO_TARGET {

// memcheck: `<=` writes one element past the end of y.
__global__ void past_end_kernel(float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = static_cast<float>(i);
}

// memcheck: thread 0 writes y[-1].
__global__ void negative_index_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i - 1] = x[i];
}

// memcheck: reads memory whose tensor was freed (x is a stale pointer).
__global__ void read_stale_kernel(const float* x, float* out, int64_t n) {
  const int64_t i = threadIdx.x;
  if (i < n) {
    const float v = x[i];
    if (i == 0) out[0] = v;
  }
}

// memcheck: dynamic shared memory is blockDim.x floats; thread 0 also writes one past it.
__global__ void shared_past_end_kernel(const float* x, float* y) {
  FOO_DYNAMIC_SHARED(float, s);
  const unsigned t = threadIdx.x;
  s[t] = x[t];
  if (t == 0) s[blockDim.x] = 0.0f;
  __syncthreads();
  y[t] = s[blockDim.x - 1 - t];
}

// racecheck: a block sum of 256 values. Without the barrier after the first write, thread 0
// reads s[128] before thread 128 has written it.
template <bool kBarrier>
__global__ void block_sum_kernel(const float* x, float* out) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  if (kBarrier) __syncthreads();
  for (unsigned stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// racecheck: lanes of one warp exchange values through shared memory; without __syncwarp a lane
// reads its neighbour's slot before the neighbour wrote it.
template <bool kSyncwarp>
__global__ void warp_rotate_kernel(const float* x, float* y) {
  FOO_DYNAMIC_SHARED(float, s);
  const unsigned lane = threadIdx.x;
  s[lane] = x[lane];
  if (kSyncwarp) __syncwarp();
  y[lane] = s[(lane + 1) % 32];
}

// initcheck: scales a tensor nobody wrote (torch.empty).
__global__ void scale_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

// Correct: y = x + 1 with atomics counting the elements (atomics never race).
__global__ void add_one_kernel(const float* x, float* y, int64_t n, int* count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] + 1.0f;
    atomicAdd(count, 1);
  }
}

void past_end(torch_foo::Stream stream, float* y, int64_t n) {
  torch_foo::launch_independent("planted::past_end", past_end_kernel, torch_foo::blocks_for(n + 1), dim3(256),
                                stream, y, n);
}
void negative_index(torch_foo::Stream stream, const float* x, float* y, int64_t n) {
  torch_foo::launch_independent("planted::negative_index", negative_index_kernel, torch_foo::blocks_for(n),
                                dim3(256), stream, x, y, n);
}
void read_stale(torch_foo::Stream stream, const float* x, float* out, int64_t n) {
  torch_foo::launch_independent("planted::read_stale", read_stale_kernel, dim3(1), dim3(32), stream, x, out, n);
}
void shared_past_end(torch_foo::Stream stream, const float* x, float* y, int64_t n) {
  const unsigned threads = static_cast<unsigned>(n);
  torch_foo::launch("planted::shared_past_end", shared_past_end_kernel, dim3(1), dim3(threads),
                    threads * sizeof(float), stream, x, y);
}
void block_sum(torch_foo::Stream stream, const float* x, float* out, int64_t blocks, bool barrier) {
  const dim3 grid(static_cast<unsigned>(blocks));
  if (barrier) {
    torch_foo::launch("planted::block_sum", block_sum_kernel<true>, grid, dim3(256), 0, stream, x, out);
  } else {
    torch_foo::launch("planted::block_sum_missing_barrier", block_sum_kernel<false>, grid, dim3(256), 0, stream, x,
                      out);
  }
}
void warp_rotate(torch_foo::Stream stream, const float* x, float* y, bool syncwarp) {
  if (syncwarp) {
    torch_foo::launch("planted::warp_rotate", warp_rotate_kernel<true>, dim3(1), dim3(32), 32 * sizeof(float),
                      stream, x, y);
  } else {
    torch_foo::launch("planted::warp_rotate_missing_syncwarp", warp_rotate_kernel<false>, dim3(1), dim3(32),
                      32 * sizeof(float), stream, x, y);
  }
}
void scale(torch_foo::Stream stream, const float* x, float* y, int64_t n) {
  torch_foo::launch_independent("planted::scale", scale_kernel, torch_foo::blocks_for(n), dim3(256), stream, x, y,
                                n);
}
void add_one(torch_foo::Stream stream, const float* x, float* y, int64_t n, int* count) {
  torch_foo::launch_independent("planted::add_one", add_one_kernel, torch_foo::blocks_for(n), dim3(256), stream, x,
                                y, n, count);
}

}  // namespace planted::FOO_TARGET
