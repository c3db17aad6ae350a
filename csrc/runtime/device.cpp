#include "runtime/device.h"

#include <atomic>

#include <c10/util/Exception.h>

#include "runtime/driver/driver.h"
#include "runtime/fork.h"

namespace foo::runtime {
namespace {
std::atomic<bool> initialized{false};
// Kept from initialisation so a forked child can still answer device_count() (as torch.cuda does)
// without touching the parent's driver.
std::atomic<c10::DeviceIndex> initialized_count{0};
thread_local c10::DeviceIndex thread_current_device = 0;
}  // namespace

void lazy_init() {
  check_not_in_bad_fork();
  if (initialized.load(std::memory_order_acquire)) return;
  try {
    initialized_count.store(static_cast<c10::DeviceIndex>(driver().device_count()));
  } catch (const DriverError& e) {
    TORCH_CHECK(false, "foo: cannot start the device driver: ", e.what());
  }
  initialized.store(true, std::memory_order_release);
}

bool is_initialized() noexcept { return initialized.load(std::memory_order_acquire); }

c10::DeviceIndex device_count() noexcept {
  if (in_bad_fork()) return initialized_count.load();
  try {
    lazy_init();
    return initialized_count.load();
  } catch (...) {
    return 0;
  }
}

void check_device_index(c10::DeviceIndex index) {
  lazy_init();
  const auto count = device_count();
  TORCH_CHECK(index >= 0 && index < count, "foo: invalid device index ", static_cast<int>(index),
              " (there ", count == 1 ? "is " : "are ", static_cast<int>(count), " foo device",
              count == 1 ? "" : "s", ")");
}

c10::DeviceIndex current_device() {
  lazy_init();
  return thread_current_device;
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  if (thread_current_device == index) return;
  driver().set_device(index);
  thread_current_device = index;
}

}  // namespace foo::runtime
