#include "runtime/stream.h"

#include <array>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include <c10/util/Exception.h>

#include "runtime/device.h"

namespace foo::runtime {
namespace {

constexpr int kPoolSize = 8;  // per device and priority, as a small torch.cuda pool
constexpr int kMaxDevices = 64;
// Ids above this are external streams: the driver handle itself (a pointer, never that small).
constexpr c10::StreamId kLastPoolId = 2 * kPoolSize;

// Slot 0: default stream; 1..kPoolSize: low priority pool; kPoolSize+1..2*kPoolSize: high.
struct DeviceStreams {
  std::once_flag created;
  std::array<StreamHandle, 1 + 2 * kPoolSize> handles{};
  std::atomic<uint32_t> next_low{0}, next_high{0};
};
static_assert(std::tuple_size<decltype(DeviceStreams::handles)>::value == kLastPoolId + 1);

c10::DeviceIndex resolve(c10::DeviceIndex device) { return device < 0 ? current_device() : device; }

DeviceStreams& streams_of(c10::DeviceIndex device) {
  // Leaked on purpose: driver workers may still run at exit, after static destructors.
  static auto* all = new std::array<DeviceStreams, kMaxDevices>();
  check_device_index(device);
  auto& ds = (*all)[device];
  std::call_once(ds.created, [&] {
    ds.handles[0] = driver().default_stream(device);
    for (int i = 0; i < kPoolSize; ++i) {
      ds.handles[1 + i] = driver().create_stream(device, /*priority=*/0);
      ds.handles[1 + kPoolSize + i] = driver().create_stream(device, /*priority=*/-1);
    }
  });
  return ds;
}

c10::Stream make_stream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
}

thread_local std::vector<c10::StreamId> thread_current_stream;  // indexed by device, 0 = default

}  // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  device = resolve(device);
  streams_of(device);
  return make_stream(device, 0);
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  device = resolve(device);
  auto& ds = streams_of(device);
  auto& counter = high_priority ? ds.next_high : ds.next_low;
  const auto slot = counter.fetch_add(1) % kPoolSize;
  return make_stream(device, 1 + slot + (high_priority ? kPoolSize : 0));
}

c10::Stream current_stream(c10::DeviceIndex device) {
  device = resolve(device);
  streams_of(device);
  const auto id = static_cast<size_t>(device) < thread_current_stream.size()
                      ? thread_current_stream[device]
                      : c10::StreamId{0};
  return make_stream(device, id);
}

c10::Stream exchange_stream(c10::Stream stream) {
  native_stream(stream);  // validates
  const auto device = stream.device_index();
  auto previous = current_stream(device);
  if (thread_current_stream.size() <= static_cast<size_t>(device)) {
    thread_current_stream.resize(device + 1, 0);
  }
  thread_current_stream[device] = stream.id();
  return previous;
}

c10::Stream external_stream(StreamHandle handle, c10::DeviceIndex device) {
  device = resolve(device);
  streams_of(device);  // validates the index
  const auto id = static_cast<c10::StreamId>(reinterpret_cast<intptr_t>(handle));
  TORCH_CHECK(id > kLastPoolId, "foo: ", handle, " is not a stream handle");
  driver().adopt_stream(handle, device);
  return make_stream(device, id);
}

StreamHandle native_stream(c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "foo: expected a foo stream, got one of ", stream.device());
  auto& ds = streams_of(stream.device_index());
  // External: the driver checks the handle at its first use.
  if (stream.id() > kLastPoolId) {
    return reinterpret_cast<StreamHandle>(static_cast<intptr_t>(stream.id()));
  }
  TORCH_CHECK(stream.id() >= 0, "foo: unknown stream id ", stream.id(), " on ", stream.device());
  return ds.handles[stream.id()];
}

std::function<void()> hold_stream(const c10::Stream& stream) {
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = std::make_shared<std::once_flag>();
  // On cuda a host function blocking its stream is legal: it calls no CUDA API.
  driver().enqueue_host_task(native_stream(stream), [wait = gate->get_future().share()] { wait.wait(); });
  return [gate, opened] { std::call_once(*opened, [&] { gate->set_value(); }); };
}

}  // namespace foo::runtime
