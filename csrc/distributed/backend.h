#pragma once
// fooccl: the c10d backend of the foo device (torch_foo/distributed.py registers it).
//
// Each c10d method checks its tensors, describes the collective as a Call and launches it on the
// process group's own foo stream S, created on the first collective's device:
//   S waits for the caller's current stream (the producer) -> the engine runs the call -> an end
//   event on S, which FooWork::wait() makes the caller's current stream (the consumer) wait for.
// The engine is an existing c10d backend: Gloo through pinned host memory, or NCCL on the cuda
// driver's device memory (engine.h). Calls are launched in the order they are made, under a
// mutex, so every rank's engine sees the same sequence of collectives.
#include <mutex>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "distributed/engine.h"
#include "distributed/work.h"

namespace foo::distributed {

class FooBackend : public c10d::Backend {
 public:
  static constexpr const char* kName = "fooccl";

  FooBackend(std::unique_ptr<Engine> engine, int rank, int size, std::chrono::milliseconds timeout);
  ~FooBackend() override;

  const std::string getBackendName() const override { return kName; }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  const char* engine_name() const { return engine_->name(); }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // A coalescing block (batch_isend_irecv, torch.distributed._coalescing_manager): the calls made
  // inside it run as one engine batch at endCoalescing, whose Work is the one to wait for.
  bool supportsCoalescing() const override { return true; }
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  // All ranks create the group at the same point, so the counter starts at 0 everywhere.
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override;

  void shutdown() override;

 private:
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType type, std::vector<Part> parts, bool blocking = false);
  c10::intrusive_ptr<c10d::Work> launch(Call call, c10::Device device);
  c10::Device device_of(const Call& call, const std::optional<c10::Device>& hint = std::nullopt) const;
  c10::Stream stream_on(c10::Device device);

  const std::unique_ptr<Engine> engine_;
  const std::chrono::milliseconds timeout_;
  const std::shared_ptr<Health> health_ = std::make_shared<Health>();

  mutable std::mutex mutex_;         // one launch at a time: the order of S is the collective order
  std::optional<c10::Stream> stream_;  // S, on the device of the first collective
  uint64_t sequence_ = 0;            // group-wide collectives launched so far
  std::optional<Call> batch_;        // the open coalescing block
};

}  // namespace foo::distributed
