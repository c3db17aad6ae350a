// The DeviceGuardImpl for PrivateUse1: what device guards, torch.Stream, torch.Event,
// torch.accelerator and the autograd engine use to talk to the foo device.
#include <c10/core/DeviceCapability.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "kernels/core/dtype.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/device_error.h"
#include "runtime/event.h"
#include "runtime/stream.h"
#include "runtime/sync_debug.h"

namespace foo::runtime {
namespace {

constexpr auto kFoo = c10::DeviceType::PrivateUse1;

c10::Device foo_device(c10::DeviceIndex index) { return c10::Device(kFoo, index); }

struct FooGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kFoo; }

  c10::Device exchangeDevice(c10::Device device) const override {
    TORCH_CHECK(device.type() == kFoo, "foo guard: expected a foo device, got ", device);
    const auto previous = current_device();
    if (device.index() != previous) set_device(device.index());
    return foo_device(previous);
  }
  c10::Device getDevice() const override { return foo_device(current_device()); }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.type() == kFoo, "foo guard: expected a foo device, got ", device);
    set_device(device.index());
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    try {
      set_device(device.index());
    } catch (...) {
    }
  }
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }

  // Streams
  c10::Stream getStream(c10::Device device) const override {
    return current_stream(device.index());
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return default_stream(device.index());
  }
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool high_priority) const override {
    return stream_from_pool(device.index(), high_priority);
  }
  c10::Stream getNewStream(c10::Device device, int priority) const override {
    return stream_from_pool(device.index(), priority < 0);
  }
  c10::Stream exchangeStream(c10::Stream stream) const override { return exchange_stream(stream); }
  bool queryStream(const c10::Stream& stream) const override {
    return driver().query_stream(native_stream(stream));
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    check_sync("Stream.synchronize()");  // as torch.cuda's stream_synchronize
    driver().synchronize_stream(native_stream(stream));
    raise_device_error_after_wait(stream.device_index(), native_stream(stream));
  }
  void synchronizeDevice(const c10::DeviceIndex device) const override {
    check_device_index(device);
    driver().synchronize_device(device);
    raise_device_error_after_device_wait(device);
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& stream) const override {
    allocator().recordStream(data_ptr, stream);
  }

  // Events (runtime/event.cpp).
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    record_event(event, stream, device_index, flag);
  }
  void block(void* event, const c10::Stream& stream) const override { block_on_event(event, stream); }
  bool queryEvent(void* event) const override { return query_event(event); }
  void synchronizeEvent(void* event) const override { synchronize_event(event); }
  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    destroy_event(event);
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device_index*/) const override {
    return elapsed_ms(start, end);
  }

  // torch.accelerator.get_device_capability: the dtypes foo's kernels compute. Others (complex,
  // float8, quantized) can be allocated and copied but no kernel computes them.
  c10::DeviceCapability getDeviceCapability(c10::Device device) const override {
    if (device.index() >= 0) check_device_index(device.index());
    c10::DeviceCapability capability;
    auto& types = capability.capability_data.supported_scalar_types;
#define FOO_SET_SUPPORTED(_, name) types.has_##name = computes(c10::ScalarType::name);
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(FOO_SET_SUPPORTED)
#undef FOO_SET_SUPPORTED
    return capability;
  }

 private:
  static bool computes(c10::ScalarType type) {
    for (const auto dtype : foo::kernels::kAllDTypes) {
      if (static_cast<int>(dtype) == static_cast<int>(type)) return true;
    }
    return false;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, FooGuardImpl);

}  // namespace
}  // namespace foo::runtime
