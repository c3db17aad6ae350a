#include "sim/emulation.h"

#include <stdexcept>
#include <string>

#include "runtime/driver/driver.h"

thread_local uint3 threadIdx{0, 0, 0};
thread_local uint3 blockIdx{0, 0, 0};
thread_local dim3 blockDim{1, 1, 1};
thread_local dim3 gridDim{1, 1, 1};

namespace foo::sim {
namespace {
// Limits the emulation reports in its device properties.
constexpr unsigned long kMaxThreadsPerBlock = 1024;
constexpr size_t kMaxSharedBytes = 48 * 1024;

std::string describe(dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}
}  // namespace

void launch_grid(dim3 grid, dim3 block, size_t shared_bytes, void* stream,
                 std::function<void()> run_thread) {
  const unsigned long threads = static_cast<unsigned long>(block.x) * block.y * block.z;
  if (threads == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0) {
    throw std::invalid_argument("sim launch: empty grid " + describe(grid) + " or block " + describe(block));
  }
  if (threads > kMaxThreadsPerBlock || block.z > 64) {
    throw std::invalid_argument("sim launch: block " + describe(block) + " has " + std::to_string(threads) +
                                " threads; at most 1024 per block (and blockDim.z <= 64)");
  }
  if (shared_bytes > kMaxSharedBytes) {
    throw std::invalid_argument("sim launch: " + std::to_string(shared_bytes) +
                                " bytes of shared memory requested; the limit is 49152 per block");
  }
  foo::runtime::driver().enqueue_host_task(stream, [grid, block, run = std::move(run_thread)] {
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          blockIdx = {bx, by, bz};
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                threadIdx = {tx, ty, tz};
                run();
              }
        }
  });
}

}  // namespace foo::sim
