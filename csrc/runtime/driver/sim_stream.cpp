#include "sim_stream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "driver.h"

namespace foo::runtime::sim {
namespace {
thread_local SimStream* t_current = nullptr;
using Clock = std::chrono::steady_clock;

// The worker runs as SCHED_BATCH: waking it then never preempts the thread that queued the work.
// Without this, each launch onto an idle stream (a tiny op finishes before the host queues the
// next) made the kernel switch the host thread out for the woken worker at the futex call, and
// that switch was a quarter of a tiny op's host time on the 2-core CI machine
// (docs/performance.md). The worker still gets its fair share of the CPU; only wake-up
// preemption is off.
void lower_wakeup_priority() {
#ifdef __linux__
  sched_param param{};
  sched_setscheduler(0, SCHED_BATCH, &param);  // best effort: a failure leaves SCHED_OTHER
#endif
}

// How long an idle worker polls its queue before it sleeps, when the previous task followed
// its predecessor within that time (a stream of small launches): a launch that finds the
// worker polling costs no futex wake-up, the largest cost foo added to a tiny op. A worker
// whose queue stayed empty longer than this sleeps at once next time, so an idle stream never
// burns a core for more than this once. TORCH_FOO_SIM_SPIN_US (0: never poll) overrides it;
// docs/performance.md has the measurements behind the default.
constexpr long kDefaultSpinMicros = 20;
Clock::duration spin_time() {
  static const Clock::duration spin = [] {
    const char* v = std::getenv("TORCH_FOO_SIM_SPIN_US");
    char* end = nullptr;
    const long us = v && *v ? std::strtol(v, &end, 10) : kDefaultSpinMicros;
    if (v && *v && (*end || us < 0 || us > 100000))
      throw DriverError(std::string("TORCH_FOO_SIM_SPIN_US='") + v + "' is invalid: expected microseconds from 0 to 100000");
    return std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(us));
  }();
  return spin;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// enqueue(std::function), replayable: the function waits on the heap until it was released.
void run_function(void* arg, bool run) {
  auto* fn = static_cast<std::function<void()>*>(arg);
  if (run) {
    (*fn)();
  } else {
    delete fn;
  }
}
}  // namespace

SimStream::SimStream(int device, int priority) : device_(device), priority_(priority) {
  spin_time();  // a bad TORCH_FOO_SIM_SPIN_US fails here, not in the worker
  rings_.push_back(std::make_unique<Ring>(64));
  ring_.store(rings_.back().get());
  worker_ = std::thread([this] { run(); });
}

SimStream::~SimStream() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  if (worker_.joinable()) worker_.join();
}

SimStream* SimStream::current() { return t_current; }

std::shared_ptr<SimCapture> SimStream::capturing() {
  if (!has_capture_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lk(push_mu_);
  return capture_;
}

void SimStream::attach_capture(std::shared_ptr<SimCapture> capture) {
  std::lock_guard<std::mutex> lk(push_mu_);
  if (capture_) throw DriverError("foo sim: the stream is already capturing a graph");
  capture_ = std::move(capture);
  has_capture_.store(true, std::memory_order_release);
}

void SimStream::detach_capture() {
  std::lock_guard<std::mutex> lk(push_mu_);
  capture_.reset();
  has_capture_.store(false, std::memory_order_release);
}

std::shared_ptr<SimCapture> SimStream::capture() { return capturing(); }

void SimStream::refuse_if_capturing(const std::string& what) {
  if (auto c = capturing()) {
    const std::string message = not_permitted_while_capturing(what);
    c->invalidate(message);
    throw DriverError("foo sim: " + message);
  }
}

void SimStream::enqueue(HostFn fn, void* arg, bool always_run) {
  if (auto c = capturing()) {
    fn(arg, false);
    const std::string message = not_permitted_while_capturing("a host task that cannot be replayed");
    c->invalidate(message);
    throw DriverError("foo sim: " + message);
  }
  push(Task{fn, arg, always_run, false});
}

void SimStream::enqueue_replayable(HostFn fn, void* arg) {
  if (auto c = capturing()) {
    c->add(fn, arg, this);
    return;
  }
  push(Task{fn, arg, false, true});
}

void SimStream::push(Task task) {
  HostFn fn = task.fn;
  void* arg = task.arg;
  try {
    std::lock_guard<std::mutex> lk(push_mu_);
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    const uint64_t head = head_.load(std::memory_order_acquire);  // the worker is done with slots below
    if (tail - head == ring->mask + 1) {  // full: a ring twice as large with the same tasks
      auto bigger = std::make_unique<Ring>(2 * (ring->mask + 1));
      for (uint64_t i = head; i < tail; ++i) bigger->tasks[i & bigger->mask] = ring->tasks[i & ring->mask];
      rings_.push_back(std::move(bigger));
      ring = rings_.back().get();
      ring_.store(ring, std::memory_order_release);  // before tail_: a worker that sees the task sees its ring
    }
    ring->tasks[tail & ring->mask] = task;
    tail_.store(tail + 1, std::memory_order_seq_cst);  // then worker_asleep_: see wait_for_work
  } catch (...) {  // the ring could not grow: the task is dropped
    fn(arg, false);
    throw;
  }
  if (worker_asleep_.load(std::memory_order_seq_cst)) {
    // Taking mu_ orders this after the worker's last look at tail_, or finds it waiting.
    { std::lock_guard<std::mutex> lk(mu_); }
    work_cv_.notify_one();
  }
}

void SimStream::enqueue(std::function<void()> fn, bool always_run) {
  auto owned = std::make_unique<std::function<void()>>(std::move(fn));
  if (always_run) {  // event markers: never captured (the driver records events in a capture itself)
    refuse_if_capturing("an event marker");
    push(Task{&run_function, owned.release(), true, true});
    return;
  }
  enqueue_replayable(&run_function, owned.release());
}

bool SimStream::wait_for_work(uint64_t head, bool& spin) {
  const Clock::time_point idle_since = Clock::now();
  if (spin) {
    const Clock::time_point until = idle_since + spin_time();
    for (unsigned i = 1;; ++i) {
      if (tail_.load(std::memory_order_acquire) != head) return true;  // spin stays on
      if (i % 64 == 0 && Clock::now() >= until) break;
      cpu_relax();
    }
  }
  std::unique_lock<std::mutex> lk(mu_);
  // Dekker with enqueue: worker_asleep_ then tail_ here, tail_ then worker_asleep_ there (both
  // seq_cst), so either this sees the task or the producer sees the flag and notifies.
  worker_asleep_.store(true, std::memory_order_seq_cst);
  work_cv_.wait(lk, [&] { return stop_ || tail_.load(std::memory_order_seq_cst) != head; });
  worker_asleep_.store(false, std::memory_order_relaxed);
  if (tail_.load(std::memory_order_acquire) == head) return false;  // stopped, nothing queued
  spin = spin_time().count() > 0 && Clock::now() - idle_since < spin_time();
  return true;
}

void SimStream::run() {
  t_current = this;
  lower_wakeup_priority();
  uint64_t head = 0;
  bool spin = false;  // nothing has run yet: sleep until the first task
  for (;;) {
    if (tail_.load(std::memory_order_acquire) == head && !wait_for_work(head, spin)) return;
    const Ring* ring = ring_.load(std::memory_order_acquire);
    const Task task = ring->tasks[head & ring->mask];
    head_.store(++head, std::memory_order_release);  // the slot may be reused from here
    running_ = head;
    const bool skip = !task.always_run && has_error_.load(std::memory_order_acquire);
    std::string failure;
    bool failed = false;
    try {
      if (task.replayable) {
        struct Release {
          const Task& t;
          ~Release() { t.fn(t.arg, false); }
        } const release{task};
        if (!skip) task.fn(task.arg, true);
      } else {
        task.fn(task.arg, !skip);  // releases what arg owns before completion is reported
      }
    } catch (const std::exception& e) {
      failed = true;
      failure = e.what();
    } catch (...) {
      failed = true;
      failure = "unknown exception in a task";
    }
    if (failed) {
      std::lock_guard<std::mutex> lk(mu_);
      if (!has_error_.load(std::memory_order_relaxed)) {
        error_ = "foo sim: asynchronous error on device " + std::to_string(device_) + " stream: " + failure;
        has_error_.store(true, std::memory_order_release);
      }
    }
    publish_completed(head);
  }
}

void SimStream::publish_completed(uint64_t count) {
  // Dekker with wait_until: completed_ then waiters_ here, waiters_ then completed_ there.
  completed_.store(count, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lk(mu_); }
    done_cv_.notify_all();
  }
}

void SimStream::complete_running_task() {
  if (t_current != this) throw DriverError("foo sim: complete_running_task outside the stream's worker");
  publish_completed(running_);
}

void SimStream::wait_until(uint64_t target) {
  if (completed_.load(std::memory_order_acquire) >= target) return;
  if (t_current == this)
    throw DriverError("foo sim: a task waited on its own stream (deadlock)");
  std::unique_lock<std::mutex> lk(mu_);
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  done_cv_.wait(lk, [&] { return completed_.load(std::memory_order_seq_cst) >= target; });
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void SimStream::throw_error(std::unique_lock<std::mutex>& lk) {
  if (!has_error_.load(std::memory_order_relaxed)) return;
  std::string msg = std::move(error_);
  error_.clear();
  has_error_.store(false, std::memory_order_relaxed);
  lk.unlock();
  throw DriverError(msg);
}

bool SimStream::query() {
  refuse_if_capturing("querying the capturing stream");
  const uint64_t queued = tail_.load(std::memory_order_acquire);
  const bool done = completed_.load(std::memory_order_acquire) >= queued;
  std::unique_lock<std::mutex> lk(mu_);
  throw_error(lk);
  return done;
}

void SimStream::synchronize() {
  refuse_if_capturing("synchronizing the capturing stream");
  wait_until(tail_.load(std::memory_order_acquire));
  std::unique_lock<std::mutex> lk(mu_);
  throw_error(lk);
}

void SimStream::wait_idle() {
  if (t_current == this) return;  // its own earlier work is done
  wait_until(tail_.load(std::memory_order_acquire));
}

std::string SimStream::peek_error() {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

}  // namespace foo::runtime::sim
