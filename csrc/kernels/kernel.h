#pragma once
// Included by every kernel source (*.cu). The same file is compiled twice: by nvcc for the cuda
// target and as C++ against the host emulation (csrc/sim) for the sim target. Each compile puts
// its host launchers in its own namespace, foo::kernels::cuda or foo::kernels::sim, so both
// coexist in libtorch_foo; csrc/aten picks one at run time through FOO_CALL_KERNEL (dispatch.h).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define FOO_TARGET cuda
#else
#include "sim/emulation.h"
#define FOO_TARGET sim
#endif

namespace foo::kernels {

using Stream = void*;  // the driver's stream handle (cudaStream_t on cuda)

namespace FOO_TARGET {

// The one launch API of both targets (DESIGN.md decision 5): never a bare <<<...>>>.
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            Stream stream, Args&&... args) {
#if defined(__CUDACC__)
  kernel<<<grid, block, shared_bytes, static_cast<cudaStream_t>(stream)>>>(std::forward<Args>(args)...);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(name) + ": kernel launch failed: " + cudaGetErrorString(status));
  }
#else
  try {
    foo::sim::launch(kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string(name) + ": " + e.what());
  }
#endif
}

// For kernels whose threads never synchronise or share memory (elementwise loops).
template <class... Params, class... Args>
void launch_independent(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, Stream stream,
                        Args&&... args) {
  launch(name, kernel, grid, block, 0, stream, std::forward<Args>(args)...);
}

// Blocks of 256 threads covering n elements.
inline dim3 blocks_for(int64_t n, unsigned threads = 256) {
  return dim3(static_cast<unsigned>((n + threads - 1) / threads));
}

}  // namespace FOO_TARGET
}  // namespace foo::kernels
