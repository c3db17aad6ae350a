#pragma once
// A collective engine: an existing c10d backend (Gloo or NCCL) that runs FooBackend's calls.
//   gloo: the foo tensors are staged through pinned host memory by copies on the process group's
//         stream, and Gloo runs on the host copies in a host task of that stream (docs/distributed.md).
//   nccl: the foo tensors are device memory of the CUDA driver; NCCL runs on them directly, its
//         stream ordered after and before the process group's stream.
#include <memory>

#include <c10/core/Stream.h>

#include "distributed/call.h"

namespace foo::distributed {

// A call's operands as dense foo tensors on the process group's stream, per part.
using DenseOperands = std::vector<std::vector<at::Tensor>>;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;    // "gloo" | "nccl"
  virtual const char* memory() const = 0;  // how the data reaches the engine, for descriptions

  // On the caller's thread, before anything is queued: refuses with a clear error what the engine
  // cannot run, and may rewrite the call into what it can.
  virtual void prepare(Call& call) const = 0;

  // Queues the call on `stream` (current on the calling thread, already ordered after the
  // producers of the operands). Marks `state` when the engine is done, and `health` on failure.
  virtual void enqueue(std::shared_ptr<const Call> call, DenseOperands& dense, const c10::Stream& stream,
                       std::shared_ptr<CallState> state, std::shared_ptr<Health> health) = 0;

  // True when failures are known only once the stream has run the call (Gloo's host task): a
  // consumer stream that waits for the call then also checks it did not fail.
  virtual bool fails_on_stream() const = 0;
};

std::unique_ptr<Engine> make_gloo_engine(c10::intrusive_ptr<c10d::Backend> gloo);
std::unique_ptr<Engine> make_nccl_engine(c10::intrusive_ptr<c10d::Backend> nccl);

}  // namespace foo::distributed
