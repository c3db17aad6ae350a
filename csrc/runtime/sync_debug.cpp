#include "runtime/sync_debug.h"

#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace foo::runtime {

std::atomic<int> detail::sync_debug_mode{0};
std::atomic<int> detail::captures_underway{0};

void detail::report_sync(const char* what) {
  if (captures_underway.load(std::memory_order_relaxed) != 0) {
    const StreamHandle stream = current_native_stream(current_device());
    TORCH_CHECK(!driver().is_capturing(stream), "operation not permitted when stream is capturing: ", what,
                " waits for the device, but a graph capture only records the stream's work (torch.foo.graph); "
                "move it out of the captured region");
  }
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
