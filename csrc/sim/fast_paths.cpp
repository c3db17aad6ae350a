#include "sim/fast_paths.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace foo::sim {
namespace {

constexpr int kUnread = -1;
std::atomic<int> g_enabled{kUnread};

int from_env() {
  const char* v = std::getenv("TORCH_FOO_SIM_ONLY_PATHS");
  if (v == nullptr || *v == '\0') return 1;
  if (std::string(v) == "0" || std::string(v) == "1") return v[0] - '0';
  throw std::runtime_error(std::string("TORCH_FOO_SIM_ONLY_PATHS='") + v +
                           "' is invalid: expected 0 (sim launches what cuda launches) or 1 (the default)");
}

}  // namespace

bool sim_only_paths() {
  int enabled = g_enabled.load(std::memory_order_relaxed);
  if (enabled == kUnread) {
    int expected = kUnread;
    g_enabled.compare_exchange_strong(expected, from_env(), std::memory_order_relaxed);
    enabled = g_enabled.load(std::memory_order_relaxed);
  }
  return enabled == 1;
}

void set_sim_only_paths(bool enabled) noexcept { g_enabled.store(enabled ? 1 : 0, std::memory_order_relaxed); }

}  // namespace foo::sim
