// PrivateUse1 hooks: how torch's device-generic code (autograd engine, torch.accelerator,
// generators, storage resizing, lazy init) reaches the foo runtime. Also renames PrivateUse1.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/fork.h"
#include "runtime/generator.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

namespace foo::runtime {
namespace {

struct FooHooks final : public at::PrivateUse1HooksInterface {
  void init() const override { lazy_init(); }
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex device) const override {
    return is_initialized() && device >= 0 && device < device_count();
  }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_device(device); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const auto previous = current_device();
    if (device >= 0 && device != previous) set_device(device);
    return previous;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return default_generator(device < 0 ? current_device() : device);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    return new_generator(device);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    const int device = driver().device_of(data);
    TORCH_CHECK(device >= 0, "foo: pointer ", data, " is not foo device memory");
    return {c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)};
  }
  // tensor.is_pinned(): memory the driver pinned. Never starts the driver (nothing can be pinned
  // before it runs) and never asks a forked child's inherited driver.
  bool isPinnedPtr(const void* data) const override {
    return driver_selected() && !in_bad_fork() && driver().is_pinned(data);
  }
  // tensor.pin_memory(): the allocator also registered as at::getHostAllocator(kPrivateUse1).
  c10::Allocator* getPinnedMemoryAllocator() const override {
    lazy_init();
    return &host_allocator();
  }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    resize_storage_bytes(storage, new_bytes);
  }
};

// Runs when libtorch_foo loads: the device is called `foo` from then on, in C++ and Python.
struct Registration {
  Registration() {
    c10::register_privateuse1_backend("foo");
    static FooHooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
  }
} registration;

}  // namespace
}  // namespace foo::runtime
