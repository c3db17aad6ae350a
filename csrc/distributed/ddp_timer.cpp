// DDP's runtime statistics on foo (ddp._get_ddp_logging_data(): forward, backward compute and
// communication times), as CudaTimer gives them on cuda: timing events on the current stream, read
// when DDP logs (it asks at the next forward, when the events have usually completed). Without a
// timer for the device, DDP warns that time stats are only collected for CPU and CUDA.
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

namespace foo::distributed {
namespace {

class FooTimer : public c10d::Timer {
 public:
  explicit FooTimer(c10::Device device) : device_(device) {}

  void record(Event event) override {
    c10d::Timer::record(event);  // host time, which DDP also reads
    auto& e = event_of(event);
    e.emplace(c10::DeviceType::PrivateUse1, c10::EventFlag::BACKEND_DEFAULT);  // timing on
    e->record(c10::impl::VirtualGuardImpl(c10::DeviceType::PrivateUse1).getStream(device_));
  }

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    auto &a = event_of(start), &b = event_of(end);
    if (!a || !b) return std::nullopt;  // e.g. no backward in this iteration (no_sync)
    a->synchronize();
    b->synchronize();
    const double ms = a->elapsedTime(*b);
    if (ms < 0) return std::nullopt;
    return static_cast<int64_t>(ms * 1e6);
  }

 private:
  std::optional<c10::Event>& event_of(Event event) { return events_[static_cast<size_t>(event)]; }

  c10::Device device_;
  std::optional<c10::Event> events_[5];  // one per c10d::Timer::Event
};

}  // namespace
}  // namespace foo::distributed

namespace c10d {  // where the registry is declared
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::DeviceType::PrivateUse1, foo::distributed::FooTimer)
}  // namespace c10d
