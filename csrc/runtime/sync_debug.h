#pragma once
// torch.foo.set_sync_debug_mode, as torch.cuda's: the host waits that an op makes on the caller's
// behalf (reading a scalar or an error flag back, a blocking copy between host and device, a
// stream's synchronize()) warn or raise while the mode is set. torch.foo.synchronize() does not:
// it is asked for. Off, a check is two relaxed atomic loads.
#include <atomic>

namespace foo::runtime {

enum class SyncDebugMode { kDisabled = 0, kWarn = 1, kError = 2 };

namespace detail {
extern std::atomic<int> sync_debug_mode;
// Graph captures underway in the process (runtime/graph.cpp counts them): while one is, a host
// wait on the current stream of a capturing stream raises CUDA's "operation not permitted when
// stream is capturing", naming the wait.
extern std::atomic<int> captures_underway;
void report_sync(const char* what);
}  // namespace detail

void set_sync_debug_mode(SyncDebugMode mode);
SyncDebugMode sync_debug_mode();

// Called just before a host wait an op makes; `what` says why it waits (shown after torch.cuda's
// "called a synchronizing ... operation" wording, so filters written for cuda match).
inline void check_sync(const char* what) {
  if (detail::sync_debug_mode.load(std::memory_order_relaxed) != 0 ||
      detail::captures_underway.load(std::memory_order_relaxed) != 0) {
    detail::report_sync(what);
  }
}

}  // namespace foo::runtime
