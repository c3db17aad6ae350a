// Build & run (from the repository root): g++ -std=c++17 -O1 -pthread -Icsrc csrc/runtime/driver/tests/driver_test.cpp csrc/runtime/driver/*.cpp csrc/sim/*.cpp -o /tmp/driver_test && /tmp/driver_test
// Standalone test of the sim driver (no torch, no gtest): exits nonzero on
// failure. Also run under -fsanitize=thread and -fsanitize=address.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/driver/driver.h"

using namespace foo::runtime;
using namespace std::chrono_literals;

static int g_pass = 0, g_fail = 0;
#define CHECK(c)                                                      \
  do {                                                                \
    if (c) {                                                          \
      ++g_pass;                                                       \
    } else {                                                          \
      ++g_fail;                                                       \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,     \
                   __LINE__, #c);                                     \
    }                                                                 \
  } while (0)
// Checks that `expr` throws a DriverError whose message contains `substr`.
#define CHECK_THROWS(expr, substr)                                    \
  do {                                                                \
    std::string msg_;                                                 \
    try {                                                             \
      expr;                                                           \
    } catch (const DriverError& e) {                                  \
      msg_ = e.what();                                                \
      if (msg_.empty()) msg_ = "<empty>";                             \
    }                                                                 \
    bool ok_ = !msg_.empty() && msg_.find(substr) != std::string::npos; \
    CHECK(ok_ && #expr);                                              \
    if (!ok_) std::fprintf(stderr, "  got: '%s'\n", msg_.c_str());    \
  } while (0)

static std::unique_ptr<Driver> sim() {
  unsetenv("TORCH_FOO_SIM_DEVICES");
  unsetenv("TORCH_FOO_SIM_MEMORY_MB");
  return make_sim_driver();
}
static void sleep_task(Driver& d, StreamHandle s, std::chrono::milliseconds t) {
  d.enqueue_host_task(s, [t] { std::this_thread::sleep_for(t); });
}

static void test_device_count_env() {
  CHECK(sim()->device_count() == 2);
  setenv("TORCH_FOO_SIM_DEVICES", "5", 1);
  CHECK(make_sim_driver()->device_count() == 5);
  for (const char* bad : {"0", "65", "two", "3x"}) {
    setenv("TORCH_FOO_SIM_DEVICES", bad, 1);
    CHECK_THROWS(make_sim_driver(), "TORCH_FOO_SIM_DEVICES");
  }
  unsetenv("TORCH_FOO_SIM_DEVICES");
}

static void test_memory() {
  auto d = sim();
  CHECK(d->malloc(0, 0) == nullptr);
  char* p = static_cast<char*>(d->malloc(1, 1000));
  CHECK(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
  CHECK(d->device_of(p) == 1);
  CHECK(d->device_of(p + 999) == 1);  // interior pointers belong too
  int host = 0;
  CHECK(d->device_of(&host) == -1);
  CHECK_THROWS(d->free(0, p), "device 1");
  CHECK_THROWS(d->free(1, p + 8), "not the start");
  CHECK_THROWS(d->malloc(2, 8), "invalid device");
  d->free(1, p);
  CHECK(d->device_of(p) == -1);
  CHECK_THROWS(d->free(1, p), "not the start");
  d->free(0, nullptr);
  auto props = d->properties(0);
  CHECK(props.name == "foo-sim" && props.warp_size == 32 && props.major == 9);
  CHECK(props.max_shared_memory_per_block == 48 * 1024);
  CHECK(props.total_memory == (size_t{16} << 30));
}

static void test_copies() {
  auto d = sim();
  const size_t n = 1000, bytes = n * sizeof(int);
  std::vector<int> src(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) src[i] = int(i * 7);
  std::vector<int> expect = src;
  void* a = d->malloc(0, bytes);
  void* b = d->malloc(1, bytes);
  StreamHandle s = d->default_stream(0);
  sleep_task(*d, s, 20ms);  // the copies below are still queued on return
  d->memcpy_async(a, src.data(), bytes, CopyKind::HostToDevice, s);
  std::fill(src.begin(), src.end(), 0);  // pageable: source already consumed
  d->memcpy_async(b, a, bytes, CopyKind::DeviceToDevice, s);  // across devices
  d->memcpy_async(out.data(), b, bytes, CopyKind::DeviceToHost, s);
  d->synchronize_stream(s);
  CHECK(out == expect);
  d->memset_async(static_cast<char*>(b) + 4, 0xAB, 8, s);
  d->memcpy_async(out.data(), b, bytes, CopyKind::DeviceToHost, s);
  d->synchronize_device(0);
  unsigned char* o = reinterpret_cast<unsigned char*>(out.data());
  CHECK(out[0] == 0 && o[4] == 0xAB && o[11] == 0xAB && out[3] == 21);
  CHECK_THROWS(d->memcpy_async(out.data(), b, bytes + 1,
                               CopyKind::DeviceToHost, s), "past the end");
  CHECK_THROWS(d->memcpy_async(a, b, bytes, CopyKind::HostToDevice, s),
               "expects host memory");
  CHECK_THROWS(d->memset_async(out.data(), 0, 4, s), "not device memory");
  d->free(0, a);
  d->free(1, b);
}

// A host task that blocks its stream until the returned flag is set: deterministic "in flight".
static std::shared_ptr<std::atomic<bool>> gate(Driver& d, StreamHandle s) {
  auto open = std::make_shared<std::atomic<bool>>(false);
  d.enqueue_host_task(s, [open] {
    while (!open->load()) std::this_thread::sleep_for(1ms);
  });
  return open;
}

static void test_pinned_memory_and_mem_info() {
  auto d = sim();
  CHECK(d->malloc_host(0) == nullptr);
  const size_t n = 1000, bytes = n * sizeof(int);
  int* pinned = static_cast<int*>(d->malloc_host(bytes));
  CHECK(pinned != nullptr && d->is_pinned(pinned) && d->is_pinned(pinned + n - 1));
  int host = 0;
  CHECK(!d->is_pinned(&host));
  CHECK(d->device_of(pinned) == -1);  // host memory, not device memory
  void* a = d->malloc(0, bytes);
  CHECK(!d->is_pinned(a));
  auto [free_now, total] = d->mem_get_info(0);
  CHECK(total == (size_t{16} << 30) && free_now == total - 4096);  // 4000 bytes, 256-byte steps
  CHECK(d->mem_get_info(1).first == total);
  StreamHandle s = d->default_stream(0);
  // Pinned source: read when the stream reaches the copy (no staging), as cudaMemcpyAsync.
  for (size_t i = 0; i < n; ++i) pinned[i] = 1;
  auto open = gate(*d, s);
  d->memcpy_async(a, pinned, bytes, CopyKind::HostToDevice, s);
  for (size_t i = 0; i < n; ++i) pinned[i] = 2;  // before the stream gets there
  open->store(true);
  std::vector<int> out(n);
  d->memcpy_async(out.data(), a, bytes, CopyKind::DeviceToHost, s);
  d->synchronize_stream(s);
  CHECK(out[0] == 2 && out[n - 1] == 2);
  // A range running past the pinned block is treated as pageable (staged), never overread.
  CHECK_THROWS(d->free_host(pinned + 1), "not the start");
  d->free_host(pinned);
  CHECK(!d->is_pinned(pinned));
  d->free_host(nullptr);
  d->free(0, a);
  CHECK(d->mem_get_info(0).first == total);
}

static void test_adopt_stream() {
  auto d = sim();
  StreamHandle s = d->create_stream(1, 0);
  d->adopt_stream(s, 1);  // its own stream: accepted
  CHECK_THROWS(d->adopt_stream(s, 0), "device 1");
  int not_a_stream = 0;
  CHECK_THROWS(d->adopt_stream(&not_a_stream, 0), "invalid");
}

static void test_async_and_order() {
  auto d = sim();
  StreamHandle s = d->create_stream(1, 0);
  sleep_task(*d, s, 50ms);
  CHECK(!d->query_stream(s));  // still sleeping: work is asynchronous
  d->synchronize_stream(s);
  CHECK(d->query_stream(s));
  std::vector<int> seen;  // only the worker touches it: in-order, one thread
  for (int i = 0; i < 100; ++i)
    d->enqueue_host_task(s, [&seen, i] { seen.push_back(i); });
  d->synchronize_stream(s);
  bool ordered = seen.size() == 100;
  for (int i = 0; ordered && i < 100; ++i) ordered = seen[i] == i;
  CHECK(ordered);
  CHECK_THROWS(d->destroy_stream(d->default_stream(0)), "default stream");
  d->destroy_stream(s);
  CHECK_THROWS(d->query_stream(s), "invalid");
  CHECK_THROWS(d->query_stream(nullptr), "null stream");
}

static void test_cross_stream_events() {
  auto d = sim();
  StreamHandle a = d->create_stream(0, 0), b = d->create_stream(0, -1);
  void* buf = d->malloc(0, 64);
  EventHandle ev = d->create_event(0, false);
  d->stream_wait_event(b, ev);  // never recorded: no-op
  d->memset_async(buf, 0, 64, a);
  sleep_task(*d, a, 50ms);
  d->memset_async(buf, 42, 64, a);
  d->record_event(ev, a);
  CHECK(!d->query_event(ev));
  d->stream_wait_event(b, ev);
  unsigned char out[64] = {};
  d->memcpy_async(out, buf, 64, CopyKind::DeviceToHost, b);
  d->synchronize_stream(b);  // b's copy waited for a's memset
  CHECK(out[0] == 42 && out[63] == 42);
  CHECK(d->query_event(ev));
  // Waiting on an event of the same stream that is already queued: no deadlock.
  d->record_event(ev, a);
  d->stream_wait_event(a, ev);
  d->synchronize_stream(a);
  // Cross-device wait.
  StreamHandle c = d->default_stream(1);
  d->stream_wait_event(c, ev);
  d->synchronize_device(1);
  EventHandle ev1 = d->create_event(1, false);
  CHECK_THROWS(d->record_event(ev1, a), "device");
  d->destroy_event(ev1);
  d->destroy_event(ev);
  d->free(0, buf);
  d->destroy_stream(a);
  d->destroy_stream(b);
}

static void test_timing_and_rerecord() {
  auto d = sim();
  StreamHandle s = d->default_stream(0);
  EventHandle t0 = d->create_event(0, true), t1 = d->create_event(0, true);
  EventHandle plain = d->create_event(0, false);
  CHECK_THROWS(d->elapsed_ms(t0, t1), "never recorded");
  d->record_event(t0, s);
  sleep_task(*d, s, 50ms);
  d->record_event(t1, s);
  CHECK_THROWS(d->elapsed_ms(t0, t1), "not completed");
  d->synchronize_event(t1);
  double ms = d->elapsed_ms(t0, t1);
  CHECK(ms >= 45.0 && ms < 5000.0);
  d->record_event(plain, s);
  d->synchronize_event(plain);
  CHECK_THROWS(d->elapsed_ms(t0, plain), "enable_timing");
  // Re-record: query/sync target the newest record.
  CHECK(d->query_event(t1));
  sleep_task(*d, s, 50ms);
  d->record_event(t1, s);
  CHECK(!d->query_event(t1));
  d->synchronize_event(t1);
  CHECK(d->query_event(t1));
  CHECK(d->elapsed_ms(t0, t1) >= 95.0);
  for (EventHandle e : {t0, t1, plain}) d->destroy_event(e);
  CHECK_THROWS(d->query_event(t0), "invalid");
}

static void test_sticky_error() {
  auto d = sim();
  StreamHandle s = d->create_stream(0, 0);
  EventHandle ev = d->create_event(0, false);
  std::atomic<bool> ran_after{false};
  d->enqueue_host_task(s, [] { throw std::runtime_error("boom in kernel"); });
  d->enqueue_host_task(s, [&] { ran_after = true; });
  d->record_event(ev, s);
  CHECK_THROWS(d->synchronize_event(ev), "boom in kernel");
  CHECK(!ran_after);  // later work of the failed stream is skipped
  CHECK_THROWS(d->synchronize_device(0), "boom in kernel");
  // Reported once; the stream then runs work again.
  d->enqueue_host_task(s, [&] { ran_after = true; });
  d->synchronize_stream(s);
  CHECK(ran_after);
  d->enqueue_host_task(s, [] { throw std::runtime_error("second"); });
  // query_stream reports the error once the task has run (poll, no sleep race).
  auto query_until_done = [&] {
    for (int i = 0; i < 500 && !d->query_stream(s); ++i)
      std::this_thread::sleep_for(10ms);
  };
  CHECK_THROWS(query_until_done(), "second");
  d->destroy_event(ev);
  d->destroy_stream(s);
}

static void test_oom() {
  setenv("TORCH_FOO_SIM_MEMORY_MB", "1", 1);
  auto d = make_sim_driver();
  unsetenv("TORCH_FOO_SIM_MEMORY_MB");
  CHECK(d->total_memory(1) == (size_t{1} << 20));
  CHECK(d->properties(1).total_memory == (size_t{1} << 20));
  void* p = d->malloc(0, 600 << 10);
  CHECK_THROWS(d->malloc(0, 600 << 10), "out of memory on device 0");
  void* q = d->malloc(1, 600 << 10);  // limit is per device
  d->free(0, p);
  p = d->malloc(0, 600 << 10);  // freed memory is available again
  d->free(0, p);
  d->free(1, q);
  setenv("TORCH_FOO_SIM_MEMORY_MB", "-3", 1);
  CHECK_THROWS(make_sim_driver(), "TORCH_FOO_SIM_MEMORY_MB");
  unsetenv("TORCH_FOO_SIM_MEMORY_MB");
}

static void test_concurrency() {
  // Several host threads drive streams, events and memory at once (for TSan).
  auto d = sim();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int dev = t % 2;
      StreamHandle s = d->create_stream(dev, 0);
      EventHandle e = d->create_event(dev, false);
      StreamHandle other = d->default_stream(1 - dev);
      for (int i = 0; i < 20; ++i) {
        int* buf = static_cast<int*>(d->malloc(dev, sizeof(int)));
        int v = t * 100 + i, out = -1;
        d->memcpy_async(buf, &v, sizeof v, CopyKind::HostToDevice, s);
        d->record_event(e, s);
        d->stream_wait_event(other, e);
        d->memcpy_async(&out, buf, sizeof out, CopyKind::DeviceToHost, other);
        d->synchronize_stream(other);
        if (out != v) ++bad;
        d->free(dev, buf);
      }
      d->destroy_event(e);
      d->destroy_stream(s);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
}

static void test_producers_keep_their_order() {
  // Several threads queue onto one stream at once, past the ring's first capacity (the worker is
  // held by a sleeping task), and a task queues onto its own stream: nothing is lost, and each
  // producer's tasks run in the order it queued them.
  auto d = sim();
  StreamHandle s = d->create_stream(0, 0);
  sleep_task(*d, s, 20ms);
  std::vector<std::pair<int, int>> seen;  // only the worker touches it
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        d->enqueue_host_fn(s, [](void* arg, bool run) {
          auto* p = static_cast<std::pair<std::vector<std::pair<int, int>>*, std::pair<int, int>>*>(arg);
          if (run) p->first->push_back(p->second);
          delete p;
        }, new std::pair<std::vector<std::pair<int, int>>*, std::pair<int, int>>(&seen, {t, i}));
      }
    });
  }
  for (auto& th : threads) th.join();
  d->enqueue_host_task(s, [&] { d->enqueue_host_task(s, [&] { seen.emplace_back(9, 0); }); });
  d->synchronize_stream(s);
  d->synchronize_stream(s);  // the task the last task queued
  bool ordered = seen.size() == 4 * 300 + 1 && seen.back() == std::make_pair(9, 0);
  int next[4] = {0, 0, 0, 0};
  for (size_t k = 0; ordered && k + 1 < seen.size(); ++k) {
    const auto [t, i] = seen[k];
    ordered = t >= 0 && t < 4 && next[t] == i;
    if (ordered) ++next[t];
  }
  CHECK(ordered);
  d->destroy_stream(s);
}

static void test_destroy_with_pending_work() {
  auto d = sim();
  std::atomic<bool> done{false};
  StreamHandle s = d->create_stream(0, 0);
  sleep_task(*d, s, 30ms);
  d->enqueue_host_task(s, [&] { done = true; });
  d.reset();  // drains and joins cleanly
  CHECK(done);
}

static void test_selection() {
  CHECK_THROWS(make_driver("gpu"), "auto, sim, cuda");
  CHECK(std::string(make_driver("sim")->name()) == "sim");
  if (!built_with_cuda()) {
    CHECK_THROWS(make_driver("cuda"), "built without CUDA");
    CHECK(std::string(make_driver("auto")->name()) == "sim");
  } else {
    try {  // no GPU here: cuda must explain why; with one it works
      CHECK(std::string(make_driver("cuda")->name()) == "cuda");
    } catch (const DriverError& e) {
      CHECK(std::strstr(e.what(), "no GPU") != nullptr);
    }
  }
  CHECK(!driver_selected());
  setenv("TORCH_FOO_DRIVER", "bogus", 1);
  CHECK_THROWS(driver(), "TORCH_FOO_DRIVER='bogus'");
  CHECK(!driver_selected());  // a failed selection can be retried
  setenv("TORCH_FOO_DRIVER", "sim", 1);
  CHECK(std::string(driver().name()) == "sim");
  CHECK(driver_selected());
  CHECK(&driver() == &driver());
  // Leave work running at exit: the leaked singleton must not crash or hang.
  sleep_task(driver(), driver().default_stream(0), 10ms);
}

// Graph capture: a capturing stream records replayable tasks (and copies, memsets) instead of
// running them; each launch_graph runs them again in order; waits on the stream are refused and
// invalidate the capture, which then fails to end but leaves the stream usable.
static void test_graph_capture_and_replay() {
  auto d = sim();
  StreamHandle s = d->create_stream(0, 0);
  CHECK_THROWS(d->begin_capture(d->default_stream(0), CaptureMode::Global), "non-default stream");
  auto* buf = static_cast<int*>(d->malloc(0, 4 * sizeof(int)));
  d->memset_async(buf, 0, 4 * sizeof(int), s);
  d->synchronize_stream(s);
  struct Counter {
    static void run(void* arg, bool run) {
      auto* c = static_cast<std::atomic<int>*>(arg);
      if (run) {
        c->fetch_add(1);
      } else {
        c->fetch_add(1000);  // released
      }
    }
  };
  std::atomic<int> counter{0};
  d->begin_capture(s, CaptureMode::Global);
  CHECK(d->is_capturing(s));
  CHECK(!d->is_capturing(d->default_stream(0)));
  d->enqueue_replayable(s, &Counter::run, &counter);
  int pinned_value = 7;
  int* pinned = static_cast<int*>(d->malloc_host(sizeof(int)));
  *pinned = pinned_value;
  d->memcpy_async(buf, pinned, sizeof(int), CopyKind::HostToDevice, s);  // pinned: replayable
  d->enqueue_host_task(s, [buf] { buf[1] += 1; });
  CHECK(counter.load() == 0);  // recorded, not run
  GraphHandle g = d->end_capture(s);
  CHECK(!d->is_capturing(s));
  CHECK(d->graph_size(g) == 3);
  d->launch_graph(g, s);
  d->launch_graph(g, d->default_stream(0));
  d->synchronize_device(0);
  CHECK(counter.load() == 2);
  int host[4] = {};
  d->memcpy_async(host, buf, sizeof host, CopyKind::DeviceToHost, s);
  d->synchronize_stream(s);
  CHECK(host[0] == 7 && host[1] == 2);
  d->destroy_graph(g);
  CHECK(counter.load() == 1002);  // released once, with the graph
  CHECK_THROWS(d->launch_graph(g, s), "invalid or destroyed graph");

  // Forbidden calls: refused, the capture invalidated, the stream usable after it ends.
  d->begin_capture(s, CaptureMode::Global);
  CHECK_THROWS(d->synchronize_stream(s), "operation not permitted when stream is capturing");
  CHECK_THROWS(d->end_capture(s), "invalidated");
  d->begin_capture(s, CaptureMode::Relaxed);
  CHECK_THROWS(d->query_stream(s), "operation not permitted when stream is capturing");
  CHECK_THROWS(d->end_capture(s), "invalidated");
  d->begin_capture(s, CaptureMode::Global);
  CHECK_THROWS(d->memcpy_async(host, buf, sizeof host, CopyKind::DeviceToHost, s), "pageable host memory");
  CHECK_THROWS(d->end_capture(s), "invalidated");
  d->begin_capture(s, CaptureMode::Global);
  CHECK_THROWS(d->synchronize_device(0), "operation not permitted when stream is capturing");
  CHECK_THROWS(d->end_capture(s), "invalidated");
  CHECK_THROWS(d->end_capture(s), "not capturing");
  d->memset_async(buf, 0, sizeof host, s);
  d->synchronize_stream(s);  // usable

  // A stream joins through an event and must rejoin before the capture ends.
  StreamHandle side = d->create_stream(0, 0);
  EventHandle fork = d->create_event(0, false), join = d->create_event(0, false);
  d->begin_capture(s, CaptureMode::Global);
  d->record_event(fork, s);  // a captured event: the host may not wait on it
  CHECK_THROWS(d->synchronize_event(fork), "operation not permitted");
  CHECK_THROWS(d->end_capture(s), "invalidated");
  d->begin_capture(s, CaptureMode::Global);
  d->record_event(fork, s);
  d->stream_wait_event(side, fork);
  CHECK(d->is_capturing(side));
  d->enqueue_replayable(side, &Counter::run, &counter);
  d->record_event(join, side);
  d->stream_wait_event(s, join);
  GraphHandle joined = d->end_capture(s);
  CHECK(!d->is_capturing(side));
  d->launch_graph(joined, s);
  d->synchronize_stream(s);
  CHECK(counter.load() == 1003);
  d->destroy_graph(joined);
  d->record_event(fork, s);  // an ordinary record again
  d->synchronize_event(fork);
  d->begin_capture(s, CaptureMode::Global);
  d->record_event(fork, s);
  d->stream_wait_event(side, fork);
  d->enqueue_replayable(side, &Counter::run, &counter);
  CHECK_THROWS(d->end_capture(s), "unjoined");
  CHECK(!d->is_capturing(side) && !d->is_capturing(s));
  d->free_host(pinned);
  d->free(0, buf);
  d->destroy_event(fork);
  d->destroy_event(join);
  d->destroy_stream(side);
  d->destroy_stream(s);
}

int main() {
  test_device_count_env();
  test_memory();
  test_copies();
  test_pinned_memory_and_mem_info();
  test_adopt_stream();
  test_async_and_order();
  test_cross_stream_events();
  test_timing_and_rerecord();
  test_sticky_error();
  test_oom();
  test_concurrency();
  test_producers_keep_their_order();
  test_destroy_with_pending_work();
  test_selection();
  test_graph_capture_and_replay();
  std::printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
