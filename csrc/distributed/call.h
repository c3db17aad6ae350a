#pragma once
// One collective as the engines see it: the foo tensors it reads and writes, and how to run it on
// an engine process group (Gloo or NCCL) once those tensors are engine tensors (pinned host copies
// or CUDA aliases). FooBackend builds a Call per c10d method; an Engine runs it in stream order.
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace foo::distributed {

struct Operand {
  at::Tensor tensor;  // a foo tensor of the call's device
  bool read = false;  // the collective reads it (staged in)
  bool write = false; // the collective writes it (staged out)
};

// What every rank must agree on for a group-wide collective; the Gloo engine compares them across
// ranks before running the collective (Gloo itself aborts the process on mismatched sizes).
struct Fingerprint {
  int64_t op = -1;      // c10d::OpType
  int64_t reduce = -1;  // c10d::ReduceOp::RedOpType, -1 when not a reduction
  int64_t root = -1;    // root rank, -1 when none
  int64_t dtype = -1;   // c10::ScalarType
  int64_t numel = 0;    // the size every rank must share (see each collective in backend.cpp)
  static constexpr int kFields = 5;
};

// Runs the collective on the engine process group; `tensors` are the engine tensors of the part's
// operands, in order; `reduce` is the reduction the engine should use (the Gloo engine rewrites AVG
// and PREMUL_SUM, which Gloo lacks, as SUM plus host-side scaling).
using Issue = std::function<c10::intrusive_ptr<c10d::Work>(
    c10d::Backend& engine, std::vector<at::Tensor>& tensors, const c10d::ReduceOp& reduce)>;

// One engine operation. A call has several parts when it comes from a coalescing block or a
// coalesced c10d method; the engine issues all of them before waiting for any (NCCL's group
// semantics, so a batch of sends and receives between two ranks cannot deadlock).
struct Part {
  std::vector<Operand> operands;
  Issue issue;
  std::optional<c10d::ReduceOp> reduce;  // reductions only
  Fingerprint fingerprint;               // group-wide collectives
  int peer = -1;                         // send/recv: the other rank (p2p parts skip the group check)
  bool sends = false;                    // p2p direction
  int tag = 0;                           // p2p tag
  // all_to_all_single: elements this rank sends to / receives from each rank. The Gloo engine
  // checks all ranks agree on every pair (Gloo aborts the process on a mismatched message size).
  std::vector<int64_t> send_counts, recv_counts;
};

// torch.distributed's name of a collective ("all_reduce", "reduce_scatter_tensor", ...).
const char* op_name(c10d::OpType type);
// "SUM", "AVG", ...
const char* reduce_name(int64_t op);

struct Call {
  c10d::OpType type = c10d::OpType::UNKNOWN;
  std::vector<Part> parts;
  bool blocking = false;  // barrier: Work.wait() blocks the host, as NCCL's barrier
  // Set at launch: "fooccl all_reduce #3 on foo:0 (gloo, staged through pinned host memory)".
  std::string description;
  int64_t sequence = 0;  // the group-wide collectives' counter of the process group
};

// Where one launched call stands; shared by the Work, the engine's host task and stream checks.
class CallState {
 public:
  enum Status { kPending, kSucceeded, kFailed };
  void succeed() { status_.store(kSucceeded); }
  void fail(std::string message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      message_ = std::move(message);
    }
    status_.store(kFailed);
  }
  Status status() const { return static_cast<Status>(status_.load()); }
  std::string message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

 private:
  std::atomic<int> status_{kPending};
  mutable std::mutex mutex_;
  std::string message_;
};

// The first failure of a process group. After it the group refuses new collectives (as NCCL after
// a communicator error): the engine's stream skips work queued behind a failed collective, so
// later calls could never complete correctly.
class Health {
 public:
  void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (message_.empty()) message_ = message;
  }
  std::string failure() const {  // empty while healthy
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

 private:
  mutable std::mutex mutex_;
  std::string message_;
};

}  // namespace foo::distributed
