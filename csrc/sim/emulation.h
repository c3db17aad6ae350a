#pragma once
// Host emulation of CUDA's execution model: what a kernel source sees when the sim target
// compiles it as C++ (no nvcc). Built-in variables are thread-local, set by the launcher
// before each emulated thread runs. This is the barrier-free subset: every emulated thread runs
// to completion in turn, so __syncthreads, shared memory and warp collectives (which need
// cooperative threads) are not provided yet and fail to compile rather than misbehave.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

namespace foo::sim {

// Validates the launch like the CUDA runtime does (throws std::invalid_argument with a clear
// message) and queues the grid on `stream`; `run_thread` runs one emulated thread.
void launch_grid(dim3 grid, dim3 block, size_t shared_bytes, void* stream,
                 std::function<void()> run_thread);

// Arguments are copied at launch, as CUDA copies kernel parameters.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, void* stream,
            Args&&... args) {
  std::tuple<std::decay_t<Params>...> packed(std::forward<Args>(args)...);
  launch_grid(grid, block, shared_bytes, stream,
              [kernel, packed] { std::apply(kernel, packed); });
}

}  // namespace foo::sim
