#pragma once
// Events. The c10 side (torch.Event, Stream.wait_stream, the autograd engine) goes through the
// guard, which forwards here; a c10 event is a driver event created at its first record. The
// allocators use Event, an owned driver event, to learn when a stream has passed a point.
#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include "runtime/driver/driver.h"

namespace foo::runtime {

// The DeviceGuardImplInterface event methods, CUDA semantics (see guard.cpp).
void record_event(void** event, const c10::Stream& stream, c10::DeviceIndex device_index,
                  c10::EventFlag flag);
void block_on_event(void* event, const c10::Stream& stream);
bool query_event(void* event);
void synchronize_event(void* event);
void destroy_event(void* event) noexcept;
double elapsed_ms(void* start, void* end);

// An owned driver event without timing, recorded once on a stream at construction.
class Event {
 public:
  explicit Event(const c10::Stream& stream);
  ~Event();
  Event(Event&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool query() const;  // the stream has passed the record
  void block(const c10::Stream& stream) const;  // `stream` waits for the record (any device)

 private:
  EventHandle handle_ = nullptr;
};

}  // namespace foo::runtime
