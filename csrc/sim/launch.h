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
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sim/builtins.h"

namespace foo::sim {

// How a grid reaches a stream: `queue(stream, task)` runs task on the host when the stream gets
// there, in order with the stream's other work. The emulator's host installs it (the driver
// layer, runtime/driver/driver_select.cpp, when the process-wide driver starts), so the
// emulator depends on no driver; a launch before that throws std::logic_error.
using StreamQueue = void (*)(void* stream, std::function<void()> task);
void set_stream_queue(StreamQueue queue);

// Validates like the CUDA runtime (std::invalid_argument naming the limit) and queues the grid.
// `run_thread(closure)` runs the kernel for the current built-ins; `closure` is kept alive by
// `owner` until the grid has run.
void launch_grid(const char* name, dim3 grid, dim3 block, size_t shared_bytes, bool cooperative, void* stream,
                 void (*run_thread)(const void*), std::shared_ptr<const void> owner);

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

template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            bool cooperative, void* stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "kernel launched with the wrong number of arguments");
  using C = Closure<Params...>;
  auto closure = std::make_shared<const C>(C{kernel, std::tuple<std::decay_t<Params>...>(std::forward<Args>(args)...)});
  launch_grid(name, grid, block, shared_bytes, cooperative, stream, &C::run, std::move(closure));
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
