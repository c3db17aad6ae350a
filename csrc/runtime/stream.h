#pragma once
// Maps c10::Stream (device + StreamId) to driver streams, and keeps each thread's current stream.
// StreamId 0 is a device's default stream; ids 1.. name pooled streams, created lazily and handed
// out round-robin as torch.cuda does, so torch.Stream() never leaks a worker per call.
// A device index of -1 means the calling thread's current device (torch.Stream("foo")).
#include <functional>

#include <c10/core/Stream.h>

#include "runtime/driver/driver.h"

namespace foo::runtime {

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);

c10::Stream current_stream(c10::DeviceIndex device);
// Makes `stream` current on its device for the calling thread; returns the previous one.
c10::Stream exchange_stream(c10::Stream stream);

// A stream made outside torch_foo (torch.foo.ExternalStream), identified by its driver handle.
c10::Stream external_stream(StreamHandle handle, c10::DeviceIndex device);

// The driver stream behind a c10::Stream (throws on a foreign or unknown stream).
StreamHandle native_stream(c10::Stream stream);
// The driver stream work should be queued on right now for `device`.
inline StreamHandle current_native_stream(c10::DeviceIndex device) {
  return native_stream(current_stream(device));
}

// Stops `stream` at this point of its queue until the returned function is called (once; later
// calls do nothing). For tests: work queued behind it is deterministically still in flight.
// Nothing may wait for the stream (synchronize, empty_cache) before the release.
std::function<void()> hold_stream(const c10::Stream& stream);

}  // namespace foo::runtime
