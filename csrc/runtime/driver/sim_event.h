// Sim events. Each record_event makes a new SimRecord (numbered by a
// per-event sequence) and enqueues a marker that completes it; waits and
// queries capture the latest record at call time, so re-recording an event
// never changes what an earlier wait is waiting for (CUDA semantics).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace foo::runtime::sim {

class SimRecord {
 public:
  explicit SimRecord(uint64_t seq) : seq(seq) {}
  const uint64_t seq;

  // Called by the marker task on the recording stream's worker;
  // mark_stream_past runs under the record's lock (see
  // SimStream::complete_running_task), so the event and its stream never
  // disagree about whether the stream reached it.
  template <class F>
  void complete(std::string stream_error, F&& mark_stream_past) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      time_ = std::chrono::steady_clock::now();
      error_ = std::move(stream_error);
      mark_stream_past();
      done_ = true;
    }
    cv_.notify_all();
  }
  bool done() {
    std::lock_guard<std::mutex> lk(mu_);
    return done_;
  }
  void wait() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return done_; });
  }
  // Valid once done(): when the stream reached the record, and the stream's
  // async error at that point ("" if none).
  std::chrono::steady_clock::time_point time() {
    std::lock_guard<std::mutex> lk(mu_);
    return time_;
  }
  std::string error() {
    std::lock_guard<std::mutex> lk(mu_);
    return error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::chrono::steady_clock::time_point time_;
  std::string error_;
};

class SimCapture;
class SimStream;

// Where an event was last recorded when that was on a capturing stream: the capture and the
// point in it (CUDA: a "captured event", which only streams may wait on).
struct CapturedRecord {
  std::shared_ptr<SimCapture> capture;
  SimStream* stream = nullptr;
  size_t position = 0;
};

struct SimEvent {
  SimEvent(int device, bool timing) : device(device), timing(timing) {}
  const int device;
  const bool timing;

  // Recording on a capturing stream replaces the latest record by a captured one; an ordinary
  // record clears it again.
  void record_captured(CapturedRecord rec) {
    std::lock_guard<std::mutex> lk(mu);
    captured = std::make_shared<CapturedRecord>(std::move(rec));
  }
  std::shared_ptr<CapturedRecord> captured_record() {  // nullptr: last recorded outside a capture
    std::lock_guard<std::mutex> lk(mu);
    return captured;
  }

  // Makes the next record and hands it to enqueue_marker under the event's
  // lock, so a concurrent snapshot() never sees a record whose marker is not
  // queued yet (a stream could otherwise wait on its own future marker).
  template <class F>
  void record(F&& enqueue_marker) {
    std::lock_guard<std::mutex> lk(mu);
    auto rec = std::make_shared<SimRecord>(last_seq + 1);
    enqueue_marker(rec);
    ++last_seq;
    latest = std::move(rec);
    captured.reset();
  }
  std::shared_ptr<SimRecord> snapshot() {  // nullptr: never recorded
    std::lock_guard<std::mutex> lk(mu);
    return latest;
  }

 private:
  std::mutex mu;
  std::shared_ptr<SimRecord> latest;
  std::shared_ptr<CapturedRecord> captured;
  uint64_t last_seq = 0;
};

}  // namespace foo::runtime::sim
