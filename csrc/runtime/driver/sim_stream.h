// A sim stream: an in-order queue of host tasks run asynchronously by one
// worker thread, so sim work overlaps the host and other streams exactly where
// a GPU's would, and missing synchronisation shows up as a real race.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver.h"
#include "sim_graph.h"

namespace foo::runtime::sim {

class SimStream {
 public:
  SimStream(int device, int priority);
  ~SimStream();  // runs what is queued, then joins the worker
  SimStream(const SimStream&) = delete;
  SimStream& operator=(const SimStream&) = delete;

  // Queues fn(arg, true): a record of three words in a ring, no allocation
  // (the kernel launch path). When the stream skips the task after an error it
  // calls fn(arg, false) instead. always_run tasks (event markers) run even
  // after an error, so streams waiting on this one's events are never left
  // blocked. Any thread may enqueue.
  void enqueue(HostFn fn, void* arg, bool always_run = false);
  // A replayable task (Driver::enqueue_replayable): run, then released.
  void enqueue_replayable(HostFn fn, void* arg);
  // Replayable: a capture keeps the function and a replay calls it again.
  void enqueue(std::function<void()> fn, bool always_run = false);

  // Graph capture (sim_graph.h). While a capture is attached, replayable tasks go to it instead of
  // the queue; a one-shot task, a synchronize or a query is refused (DriverError, the capture
  // invalidated). attach throws if one is attached already.
  void attach_capture(std::shared_ptr<SimCapture> capture);
  void detach_capture();
  std::shared_ptr<SimCapture> capture();  // nullptr when not capturing
  // Throws the "not permitted" DriverError and invalidates the capture when one is attached.
  void refuse_if_capturing(const std::string& what);

  // Like CUDA async errors: the first failing task's message is kept, later
  // tasks are skipped, and the next query/synchronize throws it (once: the
  // stream then recovers, so one failing test does not poison the process).
  bool query();
  void synchronize();
  // Waits for queued work without consuming the error (used by free()).
  void wait_idle();
  std::string peek_error();  // "" if none; for event markers
  // From inside a task on this stream's worker: counts the running task as
  // complete now rather than after it returns. An event marker calls it under
  // its record's lock, so whoever sees the event done sees the stream past
  // it, and whoever sees the stream past it then finds the event done.
  void complete_running_task();

  int device() const { return device_; }
  int priority() const { return priority_; }
  // The stream whose worker runs the calling thread, else nullptr.
  static SimStream* current();

 private:
  struct Task {
    HostFn fn;
    void* arg;
    bool always_run;
    bool replayable;  // fn(arg, true) keeps arg: the worker releases it with fn(arg, false)
  };
  void push(Task task);
  // The attached capture when there is one (then the caller gives it the task instead).
  std::shared_ptr<SimCapture> capturing();
  void run();
  // Waits until a task follows task `head`; false: stop requested and none
  // does. `spin`: poll for a while before sleeping (updated for next time).
  bool wait_for_work(uint64_t head, bool& spin);
  void wait_until(uint64_t target);
  void publish_completed(uint64_t count);  // completed_ = count, waking waiters
  void throw_error(std::unique_lock<std::mutex>& lk);  // if any, and clear

  const int device_;
  const int priority_;

  // The queue (docs/performance.md, "Launch queue"): a ring of tasks that
  // producers fill under push_mu_ and the worker drains without any lock.
  // Queued tasks are ring_[head_ .. tail_) (indices modulo capacity_, a power
  // of two). A full ring is replaced by one twice as large holding the same
  // tasks; the old one stays allocated until the stream dies, since the
  // worker may still be reading a task from it.
  struct Ring {
    explicit Ring(uint64_t capacity) : mask(capacity - 1), tasks(new Task[capacity]) {}
    const uint64_t mask;
    const std::unique_ptr<Task[]> tasks;
  };
  // Producers' and worker's fields on separate cache lines, so neither side's
  // writes evict what the other keeps reading.
  alignas(64) std::mutex push_mu_;  // producers only
  std::atomic<Ring*> ring_;
  std::vector<std::unique_ptr<Ring>> rings_;  // the current ring and retired ones; under push_mu_
  std::atomic<uint64_t> tail_{0};       // tasks ever queued; written under push_mu_
  alignas(64) std::atomic<uint64_t> head_{0};  // next task the worker runs; written by the worker
  std::atomic<uint64_t> completed_{0};  // tasks ever finished; written by the worker
  uint64_t running_ = 0;  // the running task's number + 1; worker only

  // Sleeping and waking: the worker sleeps on work_cv_, waiters on done_cv_,
  // both under mu_; the flags tell the other side a notify is needed.
  alignas(64) std::mutex mu_;
  std::condition_variable work_cv_;  // worker: task queued or stop
  std::condition_variable done_cv_;  // waiters: a task completed
  std::atomic<bool> worker_asleep_{false};  // in work_cv_.wait: enqueue must notify
  std::atomic<int> waiters_{0};             // threads in done_cv_.wait
  bool stop_ = false;                       // under mu_
  std::atomic<bool> has_error_{false};
  std::string error_;  // under mu_
  std::shared_ptr<SimCapture> capture_;  // under push_mu_
  std::atomic<bool> has_capture_{false};  // capture_ != nullptr, read without the lock
  std::thread worker_;  // last: started after the state above exists
};

}  // namespace foo::runtime::sim
