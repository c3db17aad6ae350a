#pragma once
// The launch API's hook for the profiler (kernels/core/kernel.h brackets every launch with a
// LaunchScope). Declared here so kernels include no driver header; the driver layer defines it
// (runtime/driver/kernel_trace.cpp), where a profiler session turns it on and collects the
// timings. Off, a launch pays one relaxed atomic load.
#include <atomic>
#include <exception>

namespace foo::kernels::launch_trace {

namespace detail {
extern std::atomic<bool> g_enabled;
struct Pending;
// nullptr when the launch cannot be traced (tracing never makes a launch fail).
Pending* begin(const char* name, void* stream, const unsigned grid[3], const unsigned block[3]) noexcept;
void end(Pending* pending, bool launched) noexcept;
}  // namespace detail

inline bool enabled() noexcept { return detail::g_enabled.load(std::memory_order_relaxed); }

// Brackets one launch: construct it right before the launch, in the same scope. A launch that
// throws (bad configuration) queued nothing and is not recorded.
class LaunchScope {
 public:
  LaunchScope(const char* name, void* stream, const unsigned grid[3], const unsigned block[3]) noexcept
      : pending_(enabled() ? detail::begin(name, stream, grid, block) : nullptr),
        exceptions_(pending_ ? std::uncaught_exceptions() : 0) {}
  ~LaunchScope() {
    if (pending_) detail::end(pending_, std::uncaught_exceptions() == exceptions_);
  }
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

 private:
  detail::Pending* pending_;
  int exceptions_;
};

}  // namespace foo::kernels::launch_trace
