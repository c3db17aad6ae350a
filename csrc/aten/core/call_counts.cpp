#include "aten/core/call_counts.h"

#include <mutex>

namespace foo::native {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<const CallCounter*>& registry() {
  static auto* counters = new std::vector<const CallCounter*>();  // leaked: read at exit
  return *counters;
}

}  // namespace

CallCounter::CallCounter(const char* kernel) : kernel_(kernel) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(this);
}

std::vector<std::pair<std::string, int64_t>> call_counts() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::pair<std::string, int64_t>> out;
  for (const CallCounter* c : registry()) out.emplace_back(c->kernel(), c->calls());
  return out;
}

}  // namespace foo::native
