// A sim stream: an in-order queue of host tasks run asynchronously by one
// worker thread, so sim work overlaps the host and other streams exactly where
// a GPU's would, and missing synchronisation shows up as a real race.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver.h"

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
  // blocked.
  void enqueue(HostFn fn, void* arg, bool always_run = false);
  void enqueue(std::function<void()> fn, bool always_run = false);

  // Like CUDA async errors: the first failing task's message is kept, later
  // tasks are skipped, and the next query/synchronize throws it (once: the
  // stream then recovers, so one failing test does not poison the process).
  bool query();
  void synchronize();
  // Waits for queued work without consuming the error (used by free()).
  void wait_idle();
  std::string peek_error();  // "" if none; for event markers

  int device() const { return device_; }
  int priority() const { return priority_; }
  // The stream whose worker runs the calling thread, else nullptr.
  static SimStream* current();

 private:
  struct Task {
    HostFn fn;
    void* arg;
    bool always_run;
  };
  void run();
  void push(const Task& task);  // caller holds mu_
  void wait_until(std::unique_lock<std::mutex>& lk, uint64_t target);
  void throw_error(std::unique_lock<std::mutex>& lk);  // if any, and clear

  const int device_;
  const int priority_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // worker: task queued or stop
  std::condition_variable done_cv_;  // waiters: a task completed
  // Queued tasks are ring_[head_ .. enqueued_) (indices modulo its size, a
  // power of two); it doubles when full.
  std::vector<Task> ring_;
  uint64_t head_ = 0;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool stop_ = false;
  bool worker_asleep_ = false;  // in work_cv_.wait: enqueue must notify
  int waiters_ = 0;             // threads in done_cv_.wait
  std::string error_;
  bool has_error_ = false;
  std::thread worker_;  // last: started after the state above exists
};

}  // namespace foo::runtime::sim
