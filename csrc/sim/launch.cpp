#include "sim/launch.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>

#include "sim/block_scheduler.h"
#include "sim/launch_limits.h"
#include "sim/thread_pool.h"

namespace foo::sim {
namespace {

// Waking a helper costs microseconds; an independent thread costs nanoseconds (an elementwise
// thread handles a run of 512 elements: ~0.2-2 us). Give each helper at least this many emulated
// threads so that small elementwise grids stay on one host thread.
constexpr uint64_t kIndependentThreadsPerHelper = 2048;

std::atomic<StreamQueue> stream_queue{nullptr};


BlockScheduler& scheduler() {
  static thread_local BlockScheduler s;  // its fiber stacks live as long as the host thread
  return s;
}

void run_block(void* ctx, uint64_t linear) {
  const KernelLaunch& l = *static_cast<const KernelLaunch*>(ctx);
  const uint64_t gx = l.grid.x, gy = l.grid.y;
  const uint3 b{static_cast<unsigned>(linear % gx), static_cast<unsigned>(linear / gx % gy),
                static_cast<unsigned>(linear / (gx * gy))};
  scheduler().run_block(l, b);
}

// The stream task of a grid, replayable (a graph capture keeps it): run (run its blocks, as often
// as the graph is replayed) or release.
void run_grid(void* arg, bool run) {
  auto* launch = static_cast<KernelLaunch*>(arg);
  if (!run) {
    launch->release(launch);
    return;
  }
  const KernelLaunch& l = *launch;
  const uint64_t blocks = uint64_t{l.grid.x} * l.grid.y * l.grid.z;
  uint64_t helpers = blocks - 1;
  if (!l.cooperative) {
    const uint64_t threads = blocks * l.block.x * l.block.y * l.block.z;
    helpers = std::min(helpers, threads / kIndependentThreadsPerHelper);
  }
  parallel_for(blocks, static_cast<unsigned>(std::min<uint64_t>(helpers, 1u << 20)), &run_block, launch);
}

}  // namespace

void set_stream_queue(StreamQueue queue) { stream_queue.store(queue, std::memory_order_release); }

void check_launch(const char* name, dim3 grid, dim3 block, size_t shared_bytes) {
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  const std::string why = launch_config_error(g, b, shared_bytes);
  if (!why.empty()) throw std::invalid_argument(why);
  if (stream_queue.load(std::memory_order_acquire) == nullptr) {
    throw std::logic_error(std::string(name) + ": no stream to run on: the device driver is not started");
  }
}

void queue_grid(KernelLaunch* launch, void* stream) {
  // The queue owns it from here, even if it throws; check_launch saw the queue installed.
  stream_queue.load(std::memory_order_acquire)(stream, &run_grid, launch);
}

// One heap block per launch. Recycling blocks per size class (the worker frees what the host
// allocated) measured no gain over malloc (docs/performance.md), so they go to the heap.
void* allocate_launch(size_t bytes) { return ::operator new(bytes); }

void free_launch(void* block, size_t /*bytes*/) noexcept { ::operator delete(block); }

unsigned char* dynamic_shared_memory() { return BlockScheduler::dynamic_shared(); }

}  // namespace foo::sim
