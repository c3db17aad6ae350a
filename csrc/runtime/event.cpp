#include "runtime/event.h"

#include <utility>

#include <c10/util/Exception.h>

#include "runtime/device_error.h"
#include "runtime/fork.h"
#include "runtime/stream.h"

namespace foo::runtime {

void record_event(void** event, const c10::Stream& stream, c10::DeviceIndex device_index,
                  c10::EventFlag flag) {
  TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "foo: event device ",
              static_cast<int>(device_index), " does not match the recording stream's device ",
              stream.device());
  const auto handle = native_stream(stream);
  if (*event == nullptr) {
    // BACKEND_DEFAULT is what torch.Event(enable_timing=True) asks for.
    *event = driver().create_event(stream.device_index(), flag == c10::EventFlag::BACKEND_DEFAULT);
  }
  driver().record_event(*event, handle);
}

void block_on_event(void* event, const c10::Stream& stream) {
  if (event == nullptr) return;  // never recorded: nothing to wait for, as in CUDA
  // Any device's stream may wait on any device's event (cross-device ordering).
  driver().stream_wait_event(native_stream(stream), event);
}

bool query_event(void* event) { return event == nullptr || driver().query_event(event); }

void synchronize_event(void* event) {
  if (event == nullptr) return;
  driver().synchronize_event(event);
  raise_device_errors_after_event_wait();  // the event's device is not known here: every armed one
}

void destroy_event(void* event) noexcept {
  // In a forked child the driver is the parent's: leak rather than touch it.
  if (event == nullptr || in_bad_fork()) return;
  try {
    driver().destroy_event(event);
  } catch (...) {
  }
}

double elapsed_ms(void* start, void* end) {
  TORCH_CHECK(start != nullptr && end != nullptr,
              "foo: both events must be recorded before measuring elapsed time");
  return driver().elapsed_ms(start, end);
}

Event::Event(const c10::Stream& stream) {
  const auto handle = native_stream(stream);
  handle_ = driver().create_event(stream.device_index(), /*enable_timing=*/false);
  try {
    driver().record_event(handle_, handle);
  } catch (...) {
    destroy_event(handle_);
    throw;
  }
}

Event::~Event() { destroy_event(handle_); }

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy_event(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

bool Event::query() const { return driver().query_event(handle_); }

void Event::block(const c10::Stream& stream) const {
  driver().stream_wait_event(native_stream(stream), handle_);
}

}  // namespace foo::runtime
