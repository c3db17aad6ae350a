#pragma once
// Included by every kernel source (*.cu). The same file is compiled twice: by nvcc for the cuda
// target and as C++ against the host emulation (csrc/sim) for the sim target. Each compile puts
// its host launchers in its own namespace, foo::kernels::cuda or foo::kernels::sim, so both
// coexist in libtorch_foo; csrc/aten picks one at run time through FOO_CALL_KERNEL (dispatch.h).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/core/launch_blocking.h"
#include "kernels/core/launch_trace.h"
#include "sim/launch_limits.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define FOO_TARGET cuda
// Dynamic shared memory, spelled the same on both targets (the sim spelling is in
// sim/emulation.h). One byte array for every kernel, so kernels that view it as different T do
// not redeclare one extern with different types; 16-byte aligned for any T up to float4/double2.
#define FOO_DYNAMIC_SHARED(T, name)                                   \
  extern __shared__ __align__(16) unsigned char foo_dynamic_smem[];  \
  T* name = reinterpret_cast<T*>(foo_dynamic_smem)
#else
#include "sim/emulation.h"
#define FOO_TARGET sim
#endif

namespace foo::kernels {

using Stream = void*;  // the driver's stream handle (cudaStream_t on cuda)

namespace FOO_TARGET {

// The one launch API of both targets (docs/decisions.md, "One kernel source, two compiles"):
// never a bare <<<...>>>.
//
// launch: for any kernel. On sim a block's threads are cooperative fibers, so __syncthreads,
//   shared memory and warp collectives work; shared_bytes is the dynamic shared memory
//   (FOO_DYNAMIC_SHARED).
// launch_independent: for kernels whose threads never synchronise or communicate (elementwise).
//   On sim each thread runs straight through on the host stack, about a function call per
//   thread; a barrier or warp collective inside is an error naming the kernel. On cuda both are
//   the same <<<>>> launch.
// Both throw std::runtime_error naming the kernel when the configuration breaks a limit of
// sim/launch_limits.h, and on sim queue the work asynchronously on `stream`: errors
// inside the kernel surface at the next synchronize. `name` is copied.
// While a profiler runs, both bracket the kernel with device timestamps (kernels/core/launch_trace.h);
// otherwise that costs one relaxed atomic load. Under TORCH_FOO_LAUNCH_BLOCKING=1 both wait for
// the stream before returning (kernels/core/launch_blocking.h).
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            Stream stream, Args&&... args) {
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  const foo::kernels::launch_trace::LaunchScope traced(name, stream, g, b);
#if defined(__CUDACC__)
  const std::string why = foo::sim::launch_config_error(g, b, shared_bytes);
  if (!why.empty()) throw std::runtime_error(std::string(name) + ": invalid launch: " + why);
  kernel<<<grid, block, shared_bytes, static_cast<cudaStream_t>(stream)>>>(std::forward<Args>(args)...);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(name) + ": kernel launch failed: " + cudaGetErrorString(status));
  }
#else
  try {
    foo::sim::launch_cooperative(name, kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string(name) + ": invalid launch: " + e.what());
  }
#endif
  foo::kernels::launch_blocking::after_launch(stream);
}

template <class... Params, class... Args>
void launch_independent(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, Stream stream,
                        Args&&... args) {
#if defined(__CUDACC__)
  launch(name, kernel, grid, block, 0, stream, std::forward<Args>(args)...);
#else
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  const foo::kernels::launch_trace::LaunchScope traced(name, stream, g, b);
  try {
    foo::sim::launch_independent(name, kernel, grid, block, stream, std::forward<Args>(args)...);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string(name) + ": invalid launch: " + e.what());
  }
  foo::kernels::launch_blocking::after_launch(stream);
#endif
}

// The one grid-size helper. A grid of `blocks` blocks, at least one (an empty grid is an invalid
// launch) and at most max_blocks: a grid-stride kernel loops over the rest. The default, 65535,
// fits every grid dimension.
inline dim3 capped_grid(int64_t blocks, int64_t max_blocks = foo::sim::kMaxGridDimY) {
  return dim3(static_cast<unsigned>(blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks));
}

// Blocks of `threads` threads covering n work items (a thread each), capped as above; by default
// only by the grid's x limit, for kernels that are not grid-stride loops.
inline dim3 blocks_for(int64_t n, unsigned threads = 256, int64_t max_blocks = foo::sim::kMaxGridDimX) {
  return capped_grid((n + threads - 1) / threads, max_blocks);
}

// Threads per block of a grid-stride kernel over n elements: `threads`, or fewer whole warps when
// n is small. A tiny op then launches few threads: on sim every emulated thread copies the
// kernel's parameters (a geometry struct of a few KiB), which dominated small index/cat calls.
inline unsigned threads_for(int64_t n, unsigned threads = 256) {
  const int64_t warps = (n + 31) / 32;
  return warps * 32 < static_cast<int64_t>(threads) ? static_cast<unsigned>(warps < 1 ? 32 : warps * 32) : threads;
}

}  // namespace FOO_TARGET
}  // namespace foo::kernels

#include "kernels/core/float_atomics.h"
