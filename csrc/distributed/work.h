#pragma once
// The Work of a fooccl collective, with NCCL's semantics:
//   wait()/synchronize(): the calling thread's current stream waits for the collective (a stream
//     dependency; the host does not block), except a barrier, and wait(timeout) with a timeout,
//     which block the host until the collective is done;
//   is_completed(): the process group's stream has passed the collective (never blocks);
//   get_future(): a Future on the foo device, complete once issued; its users wait in stream order.
// A collective whose engine reports failure on its stream (Gloo) also makes the waiting stream
// fail: a host task behind the wait rethrows the failure there, so the next synchronisation of that
// stream (tensor.cpu(), torch.foo.synchronize()) raises it instead of returning stale data.
#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>

#include "distributed/call.h"

namespace foo::distributed {

class FooWork : public c10d::Work {
 public:
  FooWork(int rank, c10d::OpType type, std::string description, c10::Device device, bool blocking,
          bool fails_on_stream, std::shared_ptr<CallState> state, std::shared_ptr<Health> health,
          std::vector<at::Tensor> outputs);

  // Called once the call is queued: `end` is recorded on the process group's stream after it.
  void launched(c10::Event end);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override { return outputs_; }
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // "fooccl all_reduce #3 on foo:0 (gloo, staged through pinned host memory)".
  const std::string& description() const { return description_; }

 private:
  void throw_if_failed() const;
  std::string failure() const;  // empty unless this call failed (or was skipped after a failure)

  const std::string description_;
  const c10::Device device_;
  const bool blocking_;
  const bool fails_on_stream_;
  const std::shared_ptr<CallState> state_;
  const std::shared_ptr<Health> health_;
  const std::vector<at::Tensor> outputs_;
  std::optional<c10::Event> end_;  // set by launched()
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace foo::distributed
