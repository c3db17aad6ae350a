#include "runtime/fork.h"

#include <pthread.h>

#include <atomic>

#include <c10/util/Exception.h>

#include "runtime/device.h"

namespace foo::runtime {
namespace {

std::atomic<bool> bad_fork{false};

// Runs in the child of every fork(): only a child of an initialised parent is marked, so forking
// before foo is used (DataLoader workers started early, spawn's helper) stays harmless.
void on_fork_child() {
  if (is_initialized()) bad_fork.store(true, std::memory_order_relaxed);
}

// At library load, so no fork can be missed between initialisation and registration.
[[maybe_unused]] const int registered = pthread_atfork(nullptr, nullptr, &on_fork_child);

}  // namespace

bool in_bad_fork() noexcept { return bad_fork.load(std::memory_order_relaxed); }

void check_not_in_bad_fork() {
  TORCH_CHECK(!in_bad_fork(),
              "Cannot re-initialize foo in forked subprocess. To use foo with multiprocessing, you "
              "must use the 'spawn' start method (the parent initialised the foo device before the "
              "fork; a forked child may still use CPU tensors)");
}

}  // namespace foo::runtime
