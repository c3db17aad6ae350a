#pragma once
// Launching a kernel on the sim target. Both modes copy the arguments at launch (as CUDA copies
// kernel parameters) and queue the grid on the stream; the stream's worker runs its blocks, in
// parallel over host threads, and the task ends when every block has finished.
//   launch_cooperative: each block's threads are fibers (barriers, shared memory, warp
//     collectives work); correct for any kernel.
//   launch_independent: each thread runs straight through on the host stack, for kernels whose
//     threads never synchronise or communicate; a barrier or collective there is an error.
// Kernels use these through foo::kernels::<target>::launch / launch_independent (kernel.h).
#include <cstddef>
#include <cstring>
#include <functional>  // not used here; kept for the kernels that got it through this header
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sim/builtins.h"

namespace foo::sim {

// How a grid reaches a stream: `queue(stream, task, arg)` calls task(arg, true) on the host when
// the stream gets there, in order with the stream's other work, and then task(arg, false), which
// releases `arg`; only task(arg, false) if the stream drops it (after an asynchronous error; also
// when queueing fails). The task is replayable: a stream capturing a graph keeps it, runs it at
// every replay and releases it with the graph (runtime/driver/sim_graph.h). A function pointer and an argument rather than a std::function: the sim driver
// queues them as a fixed-size record, without an allocation per launch. The emulator's host
// installs it (the driver layer, runtime/driver/driver_select.cpp, when the process-wide driver
// starts), so the emulator depends on no driver; a launch before that throws std::logic_error.
using StreamTask = void (*)(void* arg, bool run);
using StreamQueue = void (*)(void* stream, StreamTask task, void* arg);
void set_stream_queue(StreamQueue queue);

// A queued grid: what the block scheduler runs. Each launch allocates one heap block holding this
// record, the kernel's closure (kernel pointer and copied arguments) and a copy of the name, and
// frees it when the grid has run or was dropped (a captured one: when its graph is destroyed).
struct KernelLaunch {
  const char* name = nullptr;  // points into the same block
  dim3 grid, block;
  size_t shared_bytes = 0;
  bool cooperative = true;
  bool checked = false;  // the kernel's source was compiled with FOO_SIM_CHECKED (sim/checked.h)
  void (*run_thread)(const void* closure) = nullptr;  // runs the kernel once, for the current threadIdx
  const void* closure = nullptr;
  void (*release)(KernelLaunch* self) = nullptr;       // destroys the closure, frees the block
};

// Validates like the CUDA runtime (std::invalid_argument naming the limit) and that a stream queue
// is installed (std::logic_error); nothing is allocated before it passed.
void check_launch(const char* name, dim3 grid, dim3 block, size_t shared_bytes);
// Queues the grid; from here the stream owns it (released even if queueing throws).
void queue_grid(KernelLaunch* launch, void* stream);
// The heap blocks of launches (plain new/delete: recycling them measured no gain, performance.md).
void* allocate_launch(size_t bytes);
void free_launch(void* block, size_t bytes) noexcept;

namespace detail {
template <class... Params>
struct Closure {
  void (*kernel)(Params...);
  std::tuple<std::decay_t<Params>...> args;
  static void run(const void* self) {
    const auto* c = static_cast<const Closure*>(self);
    std::apply(c->kernel, c->args);  // each emulated thread gets its own copy of the parameters
  }
};

// The launch's heap block: record, closure, then the name's characters.
template <class C>
struct GridBlock : KernelLaunch {
  C kernel_closure;
  static void free_block(KernelLaunch* self) {
    auto* block = static_cast<GridBlock*>(self);
    const size_t bytes = sizeof(GridBlock) + std::strlen(block->name) + 1;
    block->~GridBlock();
    free_launch(block, bytes);
  }
};

template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            bool cooperative, void* stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "kernel launched with the wrong number of arguments");
  using C = Closure<Params...>;
  using Block = GridBlock<C>;
  static_assert(alignof(Block) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned kernel parameter");
  check_launch(name, grid, block, shared_bytes);
  const size_t name_bytes = std::strlen(name) + 1;
  void* memory = allocate_launch(sizeof(Block) + name_bytes);
  Block* g;
  try {
    g = new (memory) Block{KernelLaunch{}, C{kernel, std::tuple<std::decay_t<Params>...>(std::forward<Args>(args)...)}};
  } catch (...) {
    free_launch(memory, sizeof(Block) + name_bytes);
    throw;
  }
  char* name_copy = static_cast<char*>(memory) + sizeof(Block);
  std::memcpy(name_copy, name, name_bytes);
  g->name = name_copy;
  g->grid = grid;
  g->block = block;
  g->shared_bytes = shared_bytes;
  g->cooperative = cooperative;
#if defined(FOO_SIM_CHECKED)
  g->checked = true;
#endif
  g->run_thread = &C::run;
  g->closure = &g->kernel_closure;
  g->release = &Block::free_block;
  queue_grid(g, stream);
}
}  // namespace detail

template <class... Params, class... Args>
void launch_cooperative(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                        void* stream, Args&&... args) {
  detail::launch(name, kernel, grid, block, shared_bytes, true, stream, std::forward<Args>(args)...);
}

template <class... Params, class... Args>
void launch_independent(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, void* stream,
                        Args&&... args) {
  detail::launch(name, kernel, grid, block, 0, false, stream, std::forward<Args>(args)...);
}

// The block's dynamic shared memory (the launch's shared_bytes, 16-byte aligned); see
// FOO_DYNAMIC_SHARED in emulation.h.
unsigned char* dynamic_shared_memory();

}  // namespace foo::sim
