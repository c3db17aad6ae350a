#pragma once
// CUDA's kernel launch limits, the same on every GPU since compute capability 2.0 (shared memory:
// the default without a per-kernel opt-in). One source for the launch API's checks on both
// targets (csrc/kernels/core/kernel.h), the sim emulator and the sim driver's device properties.
// Header-only and torch-free, so nvcc compiles it too.
#include <cstddef>
#include <string>

namespace foo::sim {

constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockDimX = 1024, kMaxBlockDimY = 1024, kMaxBlockDimZ = 64;
constexpr unsigned kMaxGridDimX = 2147483647u, kMaxGridDimY = 65535, kMaxGridDimZ = 65535;
constexpr size_t kMaxSharedMemoryPerBlock = 48 * 1024;  // static + dynamic
constexpr int kWarpSize = 32;

// Why a launch of grid g and block b with `shared_bytes` of dynamic shared memory is invalid,
// or "" when it is valid.
inline std::string launch_config_error(const unsigned g[3], const unsigned b[3], size_t shared_bytes) {
  auto dims = [](const unsigned d[3]) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
  };
  const unsigned long long threads = 1ull * b[0] * b[1] * b[2];
  if (threads == 0 || g[0] == 0 || g[1] == 0 || g[2] == 0) {
    return "empty grid " + dims(g) + " or block " + dims(b);
  }
  if (threads > kMaxThreadsPerBlock) {
    return "block " + dims(b) + " has " + std::to_string(threads) + " threads; the limit is " +
           std::to_string(kMaxThreadsPerBlock) + " threads per block";
  }
  if (b[0] > kMaxBlockDimX || b[1] > kMaxBlockDimY || b[2] > kMaxBlockDimZ) {
    return "block " + dims(b) + " exceeds the block dimension limits (1024, 1024, 64)";
  }
  if (g[0] > kMaxGridDimX || g[1] > kMaxGridDimY || g[2] > kMaxGridDimZ) {
    return "grid " + dims(g) + " exceeds the grid dimension limits (2147483647, 65535, 65535)";
  }
  if (shared_bytes > kMaxSharedMemoryPerBlock) {
    return std::to_string(shared_bytes) + " bytes of dynamic shared memory requested; the limit is " +
           std::to_string(kMaxSharedMemoryPerBlock) + " bytes per block (static + dynamic)";
  }
  return {};
}

}  // namespace foo::sim
