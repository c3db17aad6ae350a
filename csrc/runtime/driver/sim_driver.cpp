// The sim driver: a simulated multi-device GPU on the host (DESIGN decision 6).
// Memory is driver-owned host memory, each stream a worker thread, events
// markers on those streams; see docs/runtime-driver.md.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "driver.h"
#include "sim_event.h"
#include "sim_graph.h"
#include "sim_memory.h"
#include "sim_stream.h"
#include "sim/checked.h"
#include "sim/launch_limits.h"

namespace foo::runtime {
namespace {
using sim::CapturedRecord;
using sim::SimCapture;
using sim::SimEvent;
using sim::SimGraph;
using sim::SimMemory;
using sim::SimRecord;
using sim::SimStream;

constexpr long long kDefaultDevices = 2;
constexpr long long kMaxDevices = 64;
constexpr long long kDefaultMemoryMB = 16 * 1024;  // 16 GiB per device
// Pinned memory is bounded by the host alone (aligned_alloc failing).
constexpr size_t kPinnedLimit = static_cast<size_t>(1) << 62;

// Bumped whenever a stream handle may stop being valid (a stream destroyed, a
// driver destroyed): invalidates every thread's launch_stream cache.
std::atomic<uint64_t> g_stream_generation{0};

// Integer env var in [lo, hi], `def` when unset; anything else is an error
// naming the variable, so a typo never silently falls back to the default.
long long env_int(const char* var, long long def, long long lo, long long hi) {
  const char* v = std::getenv(var);
  if (!v || !*v) return def;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v, &end, 10);
  if (errno || *end || n < lo || n > hi)
    throw DriverError(std::string(var) + "='" + v + "' is invalid: expected "
                      "an integer from " + std::to_string(lo) + " to " +
                      std::to_string(hi));
  return n;
}

class SimDriver final : public Driver {
 public:
  SimDriver(int devices, size_t memory_per_device)
      : devices_(devices), memory_(devices, memory_per_device),
        pinned_(1, kPinnedLimit, "pinned host memory"), defaults_(devices) {}

  ~SimDriver() override {
    g_stream_generation.fetch_add(1);
    // Streams first: their workers may still touch device memory. Joined
    // outside mu_, since a running task may itself call into the driver.
    decltype(streams_) streams;
    {
      std::lock_guard<std::mutex> lk(mu_);
      streams.swap(streams_);
      defaults_.clear();
    }
    streams.clear();
  }

  const char* name() const override { return "sim"; }
  int device_count() const noexcept override { return devices_; }
  void set_device(int device) override { check_device(device); }

  void* malloc(int device, size_t bytes) override {
    check_device(device);
    return memory_.allocate(device, bytes);
  }

  void free(int device, void* ptr) override {
    check_device(device);
    if (!ptr) return;
    wait_all_idle();
    memory_.release(device, ptr);
  }

  int device_of(const void* ptr) const override {
    return memory_.device_of(ptr);
  }
  size_t total_memory(int device) override {
    check_device(device);
    return memory_.limit();
  }
  std::pair<size_t, size_t> mem_get_info(int device) override {
    check_device(device);
    return {memory_.limit() - memory_.used(device), memory_.limit()};
  }

  // Pinned memory: a second SimMemory whose single "device" is the host.
  void* malloc_host(size_t bytes) override { return pinned_.allocate(0, bytes); }
  void free_host(void* ptr) override {
    if (!ptr) return;
    wait_all_idle();  // as cudaFreeHost: no queued copy may still read it
    pinned_.release(0, ptr);
  }
  bool is_pinned(const void* ptr) const override {
    return pinned_.device_of(ptr) == 0;
  }

  StreamHandle default_stream(int device) override {
    check_device(device);
    std::lock_guard<std::mutex> lk(mu_);
    auto& s = defaults_[device];
    if (!s) {  // lazily: a device never used starts no thread
      s = std::make_shared<SimStream>(device, 0);
      streams_.emplace(s.get(), s);
    }
    return s.get();
  }

  StreamHandle create_stream(int device, int priority) override {
    check_device(device);
    auto s = std::make_shared<SimStream>(device, priority);
    std::lock_guard<std::mutex> lk(mu_);
    streams_.emplace(s.get(), s);
    return s.get();
  }

  void destroy_stream(StreamHandle h) override {
    std::shared_ptr<SimStream> s = stream(h);
    if (defaults_contains(s.get()))
      throw DriverError("foo sim: the default stream cannot be destroyed");
    if (SimStream::current() == s.get())
      throw DriverError("foo sim: a stream cannot destroy itself from a task");
    {
      std::lock_guard<std::mutex> lk(mu_);
      g_stream_generation.fetch_add(1);
      streams_.erase(h);
    }
    // Drains and joins outside the lock when the last reference goes.
  }

  int stream_device(StreamHandle h) override { return stream(h)->device(); }
  void adopt_stream(StreamHandle h, int device) override {
    check_device(device);
    if (stream(h)->device() != device)
      throw DriverError("foo sim: stream of device " +
                        std::to_string(stream(h)->device()) +
                        " adopted as a stream of device " +
                        std::to_string(device));
  }

  bool query_stream(StreamHandle h) override { return stream(h)->query(); }
  void synchronize_stream(StreamHandle h) override {
    stream(h)->synchronize();
  }

  void synchronize_device(int device) override {
    check_device(device);
    for (auto& s : all_streams()) {
      if (s->device() == device) s->refuse_if_capturing("synchronizing the device of a capturing stream");
    }
    std::string first_error;
    for (auto& s : all_streams()) {
      if (s->device() != device) continue;
      try {
        s->synchronize();
      } catch (const DriverError& e) {  // sync the rest, report the first
        if (first_error.empty()) first_error = e.what();
      }
    }
    if (!first_error.empty()) throw DriverError(first_error);
  }

  void memcpy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                    StreamHandle h) override {
    auto s = stream(h);
    if (bytes == 0) return;
    switch (kind) {
      case CopyKind::HostToDevice: {
        memory_.check_device_range(dst, bytes, "memcpy destination");
        memory_.check_host_range(src, bytes, "memcpy source");
        if (pinned_range(src, bytes)) break;  // read when the stream gets there
        // Captured, the staged bytes stay with the graph and every replay copies them again. (CUDA
        // refuses pageable copies during capture; foo's multi-tensor ops copy their small tables of
        // pointers this way, which must stay capturable on sim.)
        // Pageable semantics: the host buffer may be reused on return.
        std::shared_ptr<char[]> staging(new char[bytes]);
        std::memcpy(staging.get(), src, bytes);
        s->enqueue([dst, staging, bytes] {
          std::memcpy(dst, staging.get(), bytes);
          foo::sim::checked::mark_written(dst, bytes);  // initcheck; no-op off the arena
        });
        return;
      }
      case CopyKind::DeviceToHost:
        memory_.check_device_range(src, bytes, "memcpy source");
        memory_.check_host_range(dst, bytes, "memcpy destination");
        if (!pinned_range(dst, bytes)) s->refuse_if_capturing("a copy from the device to pageable host memory");
        break;
      case CopyKind::DeviceToDevice:
        memory_.check_device_range(src, bytes, "memcpy source");
        memory_.check_device_range(dst, bytes, "memcpy destination");
        break;
    }
    s->enqueue([dst, src, bytes] {
      std::memmove(dst, src, bytes);
      foo::sim::checked::mark_written(dst, bytes);  // initcheck; no-op off the arena
    });
  }

  void memset_async(void* dst, int value, size_t bytes,
                    StreamHandle h) override {
    auto s = stream(h);
    if (bytes == 0) return;
    memory_.check_device_range(dst, bytes, "memset destination");
    s->enqueue([dst, value, bytes] {
      std::memset(dst, value, bytes);
      foo::sim::checked::mark_written(dst, bytes);
    });
  }

  EventHandle create_event(int device, bool enable_timing) override {
    check_device(device);
    auto e = std::make_shared<SimEvent>(device, enable_timing);
    std::lock_guard<std::mutex> lk(mu_);
    events_.emplace(e.get(), e);
    return e.get();
  }

  void destroy_event(EventHandle h) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!events_.erase(h)) throw DriverError("foo sim: invalid event handle");
    // Queued waits hold their SimRecord, so they still complete.
  }

  void record_event(EventHandle eh, StreamHandle sh) override {
    auto e = event(eh);
    auto s = stream(sh);
    if (e->device != s->device())
      throw DriverError("foo sim: event of device " +
                        std::to_string(e->device) +
                        " recorded on a stream of device " +
                        std::to_string(s->device()));
    if (auto capture = s->capture()) {  // a captured event: a point in the capture to wait on
      e->record_captured(CapturedRecord{capture, s.get(), capture->position()});
      return;
    }
    SimStream* raw = s.get();  // the marker runs on raw's worker: raw is alive
    e->record([&](std::shared_ptr<SimRecord> rec) {
      raw->enqueue([raw, rec] { rec->complete(raw->peek_error(), [raw] { raw->complete_running_task(); }); },
                   /*always_run=*/true);
    });
  }

  void stream_wait_event(StreamHandle sh, EventHandle eh) override {
    auto s = stream(sh);
    auto ev = event(eh);
    if (auto captured = ev->captured_record()) {
      join_capture(*s, *captured);
      return;
    }
    auto rec = ev->snapshot();
    if (!rec || rec->done()) return;  // never recorded, or already reached
    s->refuse_if_capturing("waiting on an event recorded outside the capture that has not completed");
    s->enqueue([rec] { rec->wait(); }, /*always_run=*/true);
  }

  bool query_event(EventHandle eh) override {
    refuse_if_captured(eh, "querying an event recorded in a graph capture");
    auto rec = event(eh)->snapshot();
    return !rec || rec->done();
  }

  void synchronize_event(EventHandle eh) override {
    refuse_if_captured(eh, "synchronizing an event recorded in a graph capture");
    auto rec = event(eh)->snapshot();
    if (!rec) return;
    rec->wait();
    std::string err = rec->error();
    if (!err.empty()) throw DriverError(err);
  }

  double elapsed_ms(EventHandle start, EventHandle end) override {
    refuse_if_captured(start, "elapsed_time of an event recorded in a graph capture");
    refuse_if_captured(end, "elapsed_time of an event recorded in a graph capture");
    auto a = event(start), b = event(end);
    if (!a->timing || !b->timing)
      throw DriverError("foo sim: elapsed_ms needs both events created with "
                        "enable_timing=true");
    auto ra = a->snapshot(), rb = b->snapshot();
    if (!ra || !rb)
      throw DriverError("foo sim: elapsed_ms on an event never recorded");
    if (!ra->done() || !rb->done())
      throw DriverError("foo sim: elapsed_ms on an event not completed yet "
                        "(synchronize it first)");
    return std::chrono::duration<double, std::milli>(rb->time() - ra->time())
        .count();
  }

  void enqueue_host_task(StreamHandle h, std::function<void()> fn) override {
    stream(h)->enqueue(std::move(fn));
  }

  void enqueue_host_fn(StreamHandle h, HostFn fn, void* arg) override {
    SimStream* s;
    try {
      s = launch_stream(h);
    } catch (...) {
      fn(arg, false);
      throw;
    }
    s->enqueue(fn, arg);
  }

  void enqueue_replayable(StreamHandle h, HostFn fn, void* arg) override {
    SimStream* s;
    try {
      s = launch_stream(h);
    } catch (...) {
      fn(arg, false);
      throw;
    }
    s->enqueue_replayable(fn, arg);
  }

  void begin_capture(StreamHandle h, CaptureMode /*mode: sim applies its rules per stream*/) override {
    auto s = stream(h);
    if (defaults_contains(s.get()))
      throw DriverError(
          "foo sim: graphs must be captured on a non-default stream (replaying them on the default stream is "
          "fine)");
    s->attach_capture(std::make_shared<SimCapture>(s.get()));
  }

  GraphHandle end_capture(StreamHandle h) override {
    auto s = stream(h);
    auto capture = s->capture();
    if (!capture) throw DriverError("foo sim: end_capture on a stream that is not capturing");
    if (capture->origin != s.get())
      throw DriverError("foo sim: end_capture on a stream that joined a capture, not the one that began it");
    for (SimStream* joined : capture->joined_streams()) joined->detach_capture();
    s->detach_capture();
    std::shared_ptr<SimGraph> graph(capture->finish());  // throws for an invalidated capture
    std::lock_guard<std::mutex> lk(mu_);
    graphs_.emplace(graph.get(), graph);
    return graph.get();
  }

  bool is_capturing(StreamHandle h) override { return stream(h)->capture() != nullptr; }

  void launch_graph(GraphHandle gh, StreamHandle h) override {
    auto graph = this->graph(gh);
    // One replayable task per replay; it holds the graph, so destroying the graph meanwhile is safe.
    struct Replay {
      static void run(void* arg, bool run) {
        auto* held = static_cast<std::shared_ptr<SimGraph>*>(arg);
        if (run) {
          (*held)->run();
        } else {
          delete held;
        }
      }
    };
    enqueue_replayable(h, &Replay::run, new std::shared_ptr<SimGraph>(std::move(graph)));
  }

  void destroy_graph(GraphHandle gh) override {
    std::shared_ptr<SimGraph> last;  // released outside the lock
    std::lock_guard<std::mutex> lk(mu_);
    auto it = graphs_.find(gh);
    if (it == graphs_.end()) throw DriverError("foo sim: invalid or destroyed graph handle");
    last = std::move(it->second);
    graphs_.erase(it);
  }

  size_t graph_size(GraphHandle gh) override { return graph(gh)->size(); }

  DeviceProperties properties(int device) override {
    check_device(device);
    DeviceProperties p;
    p.name = "foo-sim";
    p.uuid = "foo-sim-" + std::to_string(device);
    p.total_memory = memory_.limit();
    unsigned hc = std::thread::hardware_concurrency();
    p.multi_processor_count = hc ? static_cast<int>(hc) : 1;
    p.major = 9;
    p.minor = 0;
    // The emulator (csrc/sim) enforces these limits at every launch. Its
    // "multiprocessor" is a host thread running one block at a time, so the
    // per-SM limits are the per-block ones; it has no opt-in shared memory.
    p.max_threads_per_block = static_cast<int>(foo::sim::kMaxThreadsPerBlock);
    p.max_threads_per_multi_processor = p.max_threads_per_block;
    p.max_shared_memory_per_block = static_cast<int>(foo::sim::kMaxSharedMemoryPerBlock);
    p.shared_memory_per_block_optin = p.max_shared_memory_per_block;
    p.shared_memory_per_multiprocessor = p.max_shared_memory_per_block;
    // No register file or L2 is modelled: sm_90's register count (what
    // occupancy tables assume for major 9) and no L2.
    p.regs_per_multiprocessor = 64 * 1024;
    p.l2_cache_size = 0;
    p.warp_size = foo::sim::kWarpSize;
    return p;
  }

 private:
  void check_device(int device) const {
    if (device < 0 || device >= devices_)
      throw DriverError("foo sim: invalid device index " +
                        std::to_string(device) + " (" +
                        std::to_string(devices_) +
                        " devices; set TORCH_FOO_SIM_DEVICES for more)");
  }

  std::shared_ptr<SimStream> stream(StreamHandle h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = streams_.find(h);
    if (it == streams_.end())
      throw DriverError(h ? "foo sim: invalid or destroyed stream handle"
                          : "foo sim: null stream handle (use "
                            "default_stream(device))");
    return it->second;
  }

  // stream(h) for the launch path, without the driver's lock and a shared_ptr
  // per launch: each thread remembers the last handle it validated until a
  // stream or driver is destroyed. As with CUDA, destroying a stream while
  // another thread still launches on it is the caller's race.
  SimStream* launch_stream(StreamHandle h) {
    struct Validated {
      const SimDriver* driver;
      StreamHandle handle;
      uint64_t generation;
    };
    static thread_local Validated last{nullptr, nullptr, 0};
    const uint64_t generation = g_stream_generation.load(std::memory_order_acquire);
    if (last.driver == this && last.handle == h && last.generation == generation && h)
      return static_cast<SimStream*>(h);
    SimStream* s = stream(h).get();  // throws for an unknown handle
    last = Validated{this, h, generation};
    return s;
  }

  std::shared_ptr<SimGraph> graph(GraphHandle h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = graphs_.find(h);
    if (it == graphs_.end()) throw DriverError("foo sim: invalid or destroyed graph handle");
    return it->second;
  }

  // CUDA's cudaErrorCapturedEvent: an event last recorded in a capture is only a point in the
  // graph, never something the host can wait on or query.
  void refuse_if_captured(EventHandle h, const char* what) {
    auto captured = event(h)->captured_record();
    if (!captured) return;
    const std::string message = sim::not_permitted_while_capturing(what);
    captured->capture->invalidate(message);
    throw DriverError("foo sim: " + message);
  }

  // `s` waits on an event recorded in a capture: a stream outside it joins it (its later work is
  // recorded too), a stream in it marks the recording stream's work up to there as joined back.
  void join_capture(SimStream& s, const CapturedRecord& rec) {
    auto current = s.capture();
    if (current && current != rec.capture) {
      const std::string message = sim::not_permitted_while_capturing("waiting on an event of another capture");
      current->invalidate(message);
      throw DriverError("foo sim: " + message);
    }
    if (rec.capture->origin->capture() != rec.capture)
      throw DriverError("foo sim: waiting on an event recorded in a graph capture that has ended");
    if (!current) {
      s.attach_capture(rec.capture);
      rec.capture->joined(&s);
    }
    rec.capture->waited_on(rec.stream, rec.position);
  }

  std::shared_ptr<SimEvent> event(EventHandle h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = events_.find(h);
    if (it == events_.end())
      throw DriverError("foo sim: invalid or destroyed event handle");
    return it->second;
  }

  // [p, p+bytes) lies inside one pinned allocation.
  bool pinned_range(const void* p, size_t bytes) const {
    if (!is_pinned(p)) return false;
    try {
      pinned_.check_device_range(p, bytes, "pinned source");
      return true;
    } catch (const DriverError&) {
      return false;  // runs past the pinned block: treat it as pageable
    }
  }

  // cudaFree/cudaFreeHost synchronise with the device; so does sim, so that
  // freeing memory queued work still uses cannot be a use-after-free. Not from
  // a task (CUDA forbids that outright): it could wait on its own stream.
  void wait_all_idle() {
    if (SimStream::current()) return;
    for (auto& s : all_streams()) s->wait_idle();
  }

  bool defaults_contains(const SimStream* s) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& d : defaults_)
      if (d.get() == s) return true;
    return false;
  }

  std::vector<std::shared_ptr<SimStream>> all_streams() {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<std::shared_ptr<SimStream>> v;
    v.reserve(streams_.size());
    for (auto& kv : streams_) v.push_back(kv.second);
    return v;
  }

  const int devices_;
  SimMemory memory_;  // declared first: outlives the streams using it
  SimMemory pinned_;
  std::mutex mu_;
  std::vector<std::shared_ptr<SimStream>> defaults_;
  std::unordered_map<void*, std::shared_ptr<SimStream>> streams_;
  std::unordered_map<void*, std::shared_ptr<SimEvent>> events_;
  std::unordered_map<void*, std::shared_ptr<SimGraph>> graphs_;
};

}  // namespace

std::unique_ptr<Driver> make_sim_driver() {
  int devices = static_cast<int>(env_int("TORCH_FOO_SIM_DEVICES",
                                         kDefaultDevices, 1, kMaxDevices));
  long long mb = env_int("TORCH_FOO_SIM_MEMORY_MB", kDefaultMemoryMB, 1,
                         1LL << 30);
  try {
    foo::sim::checked::validate_setting();
  } catch (const std::invalid_argument& e) {
    throw DriverError(e.what());
  }
  return std::make_unique<SimDriver>(devices, static_cast<size_t>(mb) << 20);
}

}  // namespace foo::runtime
