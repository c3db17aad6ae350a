#include "kernel_trace.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "driver.h"
#include "kernels/core/launch_trace.h"

// The launch API's hook (kernels/core/launch_trace.h) is defined here, by the layer that times it.
namespace foo::kernels::launch_trace::detail {
std::atomic<bool> g_enabled{false};

struct Pending {
  std::string name;
  int device = 0;
  void* stream = nullptr;
  uint64_t correlation = 0;
  int64_t launch_begin_ns = 0, launch_end_ns = 0;
  foo::runtime::EventHandle start = nullptr, end = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
};
}  // namespace foo::kernels::launch_trace::detail

namespace foo::runtime::kernel_trace {
namespace {
using foo::kernels::launch_trace::detail::Pending;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Correlation ids pushed by the profiler on this thread. A session that ends in the middle of
// an op leaves its ids behind; the generation (bumped by start()) discards them lazily.
std::atomic<uint64_t> g_generation{0};
struct CorrelationStack {
  uint64_t generation = 0;
  std::vector<uint64_t> ids;
  std::vector<uint64_t>& current() {
    const uint64_t g = g_generation.load(std::memory_order_relaxed);
    if (generation != g) {
      generation = g;
      ids.clear();
    }
    return ids;
  }
};
thread_local CorrelationStack t_correlation;

struct State {
  std::mutex mu;
  std::vector<std::unique_ptr<Pending>> launched;  // waiting for collect()
  std::map<int, std::vector<EventHandle>> free_events;  // per device, timing events to reuse
  std::map<int, StreamHandle> anchor_streams;  // per device, idle streams for clock anchors
  std::unordered_map<void*, int> stream_numbers;  // stream handle -> number on its device
  std::map<int, int> streams_per_device;
};
// Leaked on purpose, like the driver: launches may still run while statics are destroyed.
State& state() {
  static auto* s = new State;
  return *s;
}

EventHandle take_event(int device) {
  {
    std::lock_guard<std::mutex> lk(state().mu);
    auto& pool = state().free_events[device];
    if (!pool.empty()) {
      EventHandle e = pool.back();
      pool.pop_back();
      return e;
    }
  }
  return driver().create_event(device, /*enable_timing=*/true);
}

void give_back(int device, EventHandle e) {
  if (!e) return;
  std::lock_guard<std::mutex> lk(state().mu);
  state().free_events[device].push_back(e);
}

void recycle(const Pending& p) noexcept {
  try {
    give_back(p.device, p.start);
    give_back(p.device, p.end);
  } catch (...) {  // out of memory for the pool: the events are merely not reused
  }
}

// Host time of the device's event clock: an event recorded on a stream with nothing queued
// completes within the host's record-and-wait round trip; its time is taken as the end of it, so
// device times are never earlier than they were (a kernel never shows before the op that launched
// it), at most one round trip late. Device times are that minus the elapsed time to each event.
std::pair<EventHandle, int64_t> anchor(int device) {
  StreamHandle s;
  {
    std::lock_guard<std::mutex> lk(state().mu);
    auto& slot = state().anchor_streams[device];
    if (!slot) slot = driver().create_stream(device, /*priority=*/0);
    s = slot;
  }
  // A round trip is long when the host is busy (the stream's worker waking up, the thread
  // preempted: milliseconds under a parallel build), and it bounds this anchor's error. So:
  // several round trips, each on its own event, keeping the shortest; stop once one is short.
  EventHandle best = nullptr;
  int64_t best_trip = 0, best_end = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {
    EventHandle e = take_event(device);
    const int64_t before = now_ns();
    driver().record_event(e, s);
    driver().synchronize_event(e);
    const int64_t after = now_ns();
    if (best == nullptr || after - before < best_trip) {
      if (best != nullptr) give_back(device, best);
      best = e;
      best_trip = after - before;
      best_end = after;
    } else {
      give_back(device, e);
    }
    if (best_trip < 50'000) break;
  }
  return {best, best_end};
}

int stream_number(void* stream, int device) {
  std::lock_guard<std::mutex> lk(state().mu);
  auto it = state().stream_numbers.find(stream);
  if (it != state().stream_numbers.end()) return it->second;
  const int n = state().streams_per_device[device]++;
  state().stream_numbers.emplace(stream, n);
  return n;
}

Pending* begin_launch(const char* name, void* stream, const unsigned grid[3], const unsigned block[3]) noexcept {
  std::unique_ptr<Pending> p;
  try {
    p = std::make_unique<Pending>();
    p->name = name;
    p->stream = stream;
    p->correlation = t_correlation.current().empty() ? 0 : t_correlation.current().back();
    for (int i = 0; i < 3; ++i) {
      p->grid[i] = grid[i];
      p->block[i] = block[i];
    }
    p->device = driver().stream_device(stream);
    p->launch_begin_ns = now_ns();
    p->start = take_event(p->device);
    driver().record_event(p->start, stream);
    return p.release();
  } catch (...) {
    if (p) recycle(*p);
    return nullptr;
  }
}

void end_launch(Pending* raw, bool launched) noexcept {
  std::unique_ptr<Pending> p(raw);
  try {
    if (launched) {
      p->launch_end_ns = now_ns();
      p->end = take_event(p->device);
      driver().record_event(p->end, p->stream);
      std::lock_guard<std::mutex> lk(state().mu);
      state().launched.push_back(std::move(p));
      return;
    }
  } catch (...) {
  }
  recycle(*p);
}

}  // namespace
}  // namespace foo::runtime::kernel_trace

namespace foo::kernels::launch_trace::detail {

Pending* begin(const char* name, void* stream, const unsigned grid[3], const unsigned block[3]) noexcept {
  return foo::runtime::kernel_trace::begin_launch(name, stream, grid, block);
}

void end(Pending* pending, bool launched) noexcept { foo::runtime::kernel_trace::end_launch(pending, launched); }

}  // namespace foo::kernels::launch_trace::detail

namespace foo::runtime::kernel_trace {

void start() {
  {
    std::lock_guard<std::mutex> lk(state().mu);
    for (auto& p : state().launched) {
      state().free_events[p->device].push_back(p->start);
      state().free_events[p->device].push_back(p->end);
    }
    state().launched.clear();
  }
  g_generation.fetch_add(1, std::memory_order_relaxed);
  foo::kernels::launch_trace::detail::g_enabled.store(true, std::memory_order_relaxed);
}

void stop() { foo::kernels::launch_trace::detail::g_enabled.store(false, std::memory_order_relaxed); }

std::vector<KernelRecord> collect(std::vector<std::string>* errors) {
  std::vector<std::unique_ptr<Pending>> launched;
  {
    std::lock_guard<std::mutex> lk(state().mu);
    launched.swap(state().launched);
  }
  std::vector<KernelRecord> out;
  std::map<int, std::pair<EventHandle, int64_t>> anchors;
  for (auto& p : launched) {
    try {
      driver().synchronize_event(p->end);  // the kernel ran (or its stream failed: throws)
      auto a = anchors.find(p->device);
      if (a == anchors.end()) a = anchors.emplace(p->device, anchor(p->device)).first;
      const auto [anchor_event, anchor_ns] = a->second;
      KernelRecord r;
      r.start_ns = anchor_ns - static_cast<int64_t>(driver().elapsed_ms(p->start, anchor_event) * 1e6);
      r.end_ns = anchor_ns - static_cast<int64_t>(driver().elapsed_ms(p->end, anchor_event) * 1e6);
      r.name = std::move(p->name);
      r.device = p->device;
      r.stream = stream_number(p->stream, p->device);
      r.correlation = p->correlation;
      r.launch_begin_ns = p->launch_begin_ns;
      r.launch_end_ns = p->launch_end_ns;
      for (int i = 0; i < 3; ++i) {
        r.grid[i] = p->grid[i];
        r.block[i] = p->block[i];
      }
      out.push_back(std::move(r));
    } catch (const std::exception& e) {
      if (errors) errors->push_back(std::string("foo profiler: kernel ") + p->name + " not timed: " + e.what());
    }
    recycle(*p);
  }
  for (auto& [device, a] : anchors) give_back(device, a.first);
  return out;
}

void push_correlation(uint64_t id) { t_correlation.current().push_back(id); }

void pop_correlation() {
  auto& ids = t_correlation.current();
  if (!ids.empty()) ids.pop_back();
}

}  // namespace foo::runtime::kernel_trace
