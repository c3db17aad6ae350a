#pragma once
// Measured coverage (tests/conftest.py's check): every generated wrapper counts the calls of its
// manifest kernel, so the suite can show which kernels it reached. A counter registers itself on
// its kernel's first call; a call costs one relaxed atomic increment.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace foo::native {

class CallCounter {
 public:
  explicit CallCounter(const char* kernel);
  void hit() { calls_.fetch_add(1, std::memory_order_relaxed); }
  const char* kernel() const { return kernel_; }
  int64_t calls() const { return calls_.load(std::memory_order_relaxed); }

 private:
  const char* kernel_;
  std::atomic<int64_t> calls_{0};
};

// (kernel, calls) of every kernel called so far in this process.
std::vector<std::pair<std::string, int64_t>> call_counts();

}  // namespace foo::native

#define FOO_COUNT_CALL(kernel)                                        \
  do {                                                                \
    static ::foo::native::CallCounter foo_call_counter_(kernel);      \
    foo_call_counter_.hit();                                          \
  } while (0)
