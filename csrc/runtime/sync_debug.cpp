#include "runtime/sync_debug.h"

#include <c10/util/Exception.h>

namespace foo::runtime {

std::atomic<int> detail::sync_debug_mode{0};

void detail::report_sync(const char* what) {
  const auto mode = static_cast<SyncDebugMode>(sync_debug_mode.load(std::memory_order_relaxed));
  TORCH_CHECK(mode != SyncDebugMode::kError, "called a synchronizing foo operation: ", what);
  if (mode == SyncDebugMode::kWarn) TORCH_WARN("called a synchronizing foo operation: ", what);
}

void set_sync_debug_mode(SyncDebugMode mode) {
  detail::sync_debug_mode.store(static_cast<int>(mode), std::memory_order_relaxed);
}

SyncDebugMode sync_debug_mode() {
  return static_cast<SyncDebugMode>(detail::sync_debug_mode.load(std::memory_order_relaxed));
}

}  // namespace foo::runtime
