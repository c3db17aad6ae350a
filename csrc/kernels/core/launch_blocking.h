#pragma once
// TORCH_FOO_LAUNCH_BLOCKING=1, as CUDA_LAUNCH_BLOCKING=1: every kernel launch waits for its stream
// before returning, so an error a kernel finds (device_error.h) or raises (sim's sticky stream
// error) surfaces at the op that launched it. Read once, when the driver is chosen
// (runtime/driver/driver_select.cpp); declared here so kernels include no driver header. Off, a
// launch pays one relaxed atomic load.
#include <atomic>

namespace foo::kernels::launch_blocking {

namespace detail {
extern std::atomic<bool> g_blocking;
void wait(void* stream);  // the driver's synchronize of `stream`
}  // namespace detail

inline bool enabled() noexcept { return detail::g_blocking.load(std::memory_order_relaxed); }

// Called by the launch API right after a kernel is queued.
inline void after_launch(void* stream) {
  if (enabled()) detail::wait(stream);
}

}  // namespace foo::kernels::launch_blocking
