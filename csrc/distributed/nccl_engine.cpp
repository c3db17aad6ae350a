// The NCCL engine (cuda driver, torch built with NCCL): NCCL runs on the foo tensors' device memory.
//
// On the cuda driver a foo tensor's memory is cudaMalloc'd memory of the same CUDA device, and a
// foo stream handle is a cudaStream_t. So each dense operand is aliased as a CUDA tensor (no copy)
// and the process group's stream S is made the current CUDA stream while ProcessGroupNCCL issues:
// NCCL's stream waits for S before the collective, and Work::wait() makes S wait for NCCL's stream
// after it (stream dependencies only, as inside torch.cuda). Nothing here calls CUDA directly;
// torch's CUDA guard and ProcessGroupNCCL do, so this file compiles without CUDA headers.
#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>

#include "distributed/engine.h"
#include "runtime/stream.h"

namespace foo::distributed {
namespace {

// The same bytes as a CUDA tensor of `cuda`; `t` (kept alive by the caller until S passes the
// collective) owns them.
at::Tensor alias_on_cuda(const at::Tensor& t, c10::Device cuda) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), [](void*) {}, t.options().device(cuda), cuda);
}

class NcclEngine final : public Engine {
 public:
  explicit NcclEngine(c10::intrusive_ptr<c10d::Backend> nccl) : nccl_(std::move(nccl)) {}

  const char* name() const override { return "nccl"; }
  const char* memory() const override { return "on device memory"; }
  bool fails_on_stream() const override { return false; }  // NCCL reports through its own watchdog
  void prepare(Call&) const override {}  // NCCL has every reduction and checks its inputs itself

  void enqueue(std::shared_ptr<const Call> call, DenseOperands& dense, const c10::Stream& stream,
               std::shared_ptr<CallState> state, std::shared_ptr<Health>) override {
    const c10::Device cuda(c10::DeviceType::CUDA, stream.device_index());
    std::vector<std::vector<at::Tensor>> aliases(dense.size());
    for (size_t i = 0; i < dense.size(); ++i) {
      for (const auto& t : dense[i]) aliases[i].push_back(alias_on_cuda(t, cuda));
    }
    // torch.cuda names an external stream by its cudaStream_t (c10::cuda::getStreamFromExternal,
    // torch.cuda.ExternalStream(ptr).stream_id == ptr); torch_foo/distributed.py checks this holds.
    const auto handle = reinterpret_cast<intptr_t>(foo::runtime::native_stream(stream));
    const c10::Stream cuda_stream(c10::Stream::UNSAFE, cuda, static_cast<c10::StreamId>(handle));
    c10::StreamGuard on_s(cuda_stream);  // current CUDA device and stream, restored on exit

    // Several parts (a coalescing block, e.g. batch_isend_irecv) form one NCCL group.
    const bool group = call->parts.size() > 1;
    if (group) nccl_->startCoalescing();
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (size_t i = 0; i < call->parts.size(); ++i) {
      const auto& part = call->parts[i];
      works.push_back(part.issue(*nccl_, aliases[i], part.reduce.value_or(c10d::ReduceOp::SUM)));
    }
    if (group) works = {nccl_->endCoalescing()};
    for (auto& w : works) {
      if (w) w->wait();  // S waits for NCCL's stream; the host does not wait
    }
    state->succeed();  // issued; completion is S reaching this point
  }

 private:
  c10::intrusive_ptr<c10d::Backend> nccl_;
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine(c10::intrusive_ptr<c10d::Backend> nccl) {
  return std::make_unique<NcclEngine>(std::move(nccl));
}

}  // namespace foo::distributed
