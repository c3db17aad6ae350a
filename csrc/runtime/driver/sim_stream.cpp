#include "sim_stream.h"

#include <memory>

#ifdef __linux__
#include <sched.h>
#endif

#include "driver.h"

namespace foo::runtime::sim {
namespace {
thread_local SimStream* t_current = nullptr;

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
// enqueue(std::function): the function waits on the heap until it ran or was skipped.
void run_function(void* arg, bool run) {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
  if (run) (*fn)();
}
}  // namespace

SimStream::SimStream(int device, int priority)
    : device_(device), priority_(priority), ring_(64), worker_([this] { run(); }) {}

SimStream::~SimStream() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  if (worker_.joinable()) worker_.join();
}

SimStream* SimStream::current() { return t_current; }

void SimStream::push(const Task& task) {
  if (enqueued_ - head_ == ring_.size()) {  // full: double it, keeping the order
    std::vector<Task> bigger(ring_.size() * 2);
    for (uint64_t i = head_; i < enqueued_; ++i) bigger[i & (bigger.size() - 1)] = ring_[i & (ring_.size() - 1)];
    ring_.swap(bigger);
  }
  ring_[enqueued_ & (ring_.size() - 1)] = task;
  ++enqueued_;
}

void SimStream::enqueue(HostFn fn, void* arg, bool always_run) {
  bool wake = false;
  try {
    std::lock_guard<std::mutex> lk(mu_);
    push(Task{fn, arg, always_run});
    wake = worker_asleep_;
  } catch (...) {  // the ring could not grow: the task is dropped
    fn(arg, false);
    throw;
  }
  if (wake) work_cv_.notify_one();  // a busy worker finds the task when it looks next
}

void SimStream::enqueue(std::function<void()> fn, bool always_run) {
  auto owned = std::make_unique<std::function<void()>>(std::move(fn));
  enqueue(&run_function, owned.release(), always_run);
}

void SimStream::run() {
  t_current = this;
  lower_wakeup_priority();
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (!stop_ && head_ == enqueued_) {
      worker_asleep_ = true;
      work_cv_.wait(lk, [&] { return stop_ || head_ != enqueued_; });
      worker_asleep_ = false;
    }
    if (head_ == enqueued_) return;  // stop requested and everything ran
    const Task task = ring_[head_++ & (ring_.size() - 1)];
    const bool skip = has_error_ && !task.always_run;
    lk.unlock();
    std::string failure;
    bool failed = false;
    try {
      task.fn(task.arg, !skip);  // releases what arg owns before completion is reported
    } catch (const std::exception& e) {
      failed = true;
      failure = e.what();
    } catch (...) {
      failed = true;
      failure = "unknown exception in a task";
    }
    lk.lock();
    if (failed && !has_error_) {
      has_error_ = true;
      error_ = "foo sim: asynchronous error on device " +
               std::to_string(device_) + " stream: " + failure;
    }
    ++completed_;
    if (waiters_ > 0) done_cv_.notify_all();
  }
}

void SimStream::wait_until(std::unique_lock<std::mutex>& lk, uint64_t target) {
  if (completed_ >= target) return;
  if (t_current == this)
    throw DriverError("foo sim: a task waited on its own stream (deadlock)");
  ++waiters_;
  done_cv_.wait(lk, [&] { return completed_ >= target; });
  --waiters_;
}

void SimStream::throw_error(std::unique_lock<std::mutex>& lk) {
  if (!has_error_) return;
  std::string msg = std::move(error_);
  error_.clear();
  has_error_ = false;
  lk.unlock();
  throw DriverError(msg);
}

bool SimStream::query() {
  std::unique_lock<std::mutex> lk(mu_);
  throw_error(lk);
  return completed_ == enqueued_;
}

void SimStream::synchronize() {
  std::unique_lock<std::mutex> lk(mu_);
  wait_until(lk, enqueued_);
  throw_error(lk);
}

void SimStream::wait_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  if (t_current == this) return;  // its own earlier work is done
  wait_until(lk, enqueued_);
}

std::string SimStream::peek_error() {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

}  // namespace foo::runtime::sim
