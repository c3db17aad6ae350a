#include "distributed/backend.h"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/distributed/c10d/Utils.hpp>

#include "runtime/device.h"
#include "runtime/driver/driver.h"
#include "runtime/fork.h"
#include "runtime/stream.h"

namespace foo::distributed {

const char* op_name(c10d::OpType type) {
  using T = c10d::OpType;
  switch (type) {
    case T::BROADCAST: return "broadcast";
    case T::ALLREDUCE: return "all_reduce";
    case T::ALLREDUCE_COALESCED: return "all_reduce_coalesced";
    case T::REDUCE: return "reduce";
    case T::ALLGATHER: return "all_gather";
    case T::_ALLGATHER_BASE: return "all_gather_into_tensor";
    case T::GATHER: return "gather";
    case T::SCATTER: return "scatter";
    case T::REDUCE_SCATTER: return "reduce_scatter";
    case T::_REDUCE_SCATTER_BASE: return "reduce_scatter_tensor";
    case T::ALLTOALL_BASE: return "all_to_all_single";
    case T::SEND: return "send";
    case T::RECV: return "recv";
    case T::BARRIER: return "barrier";
    case T::COALESCED: return "coalesced batch";
    default: return "collective";
  }
}

const char* reduce_name(int64_t op) {
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"};
  return op >= 0 && op < 9 ? names[op] : "UNKNOWN";
}

namespace {

using c10d::OpType;

c10::impl::VirtualGuardImpl& foo_guard() {
  static c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
  return impl;
}

// A tensor the collective can use, or a clear error naming the collective.
const at::Tensor& checked(const at::Tensor& t, OpType type) {
  TORCH_CHECK(t.defined(), "fooccl ", op_name(type), ": got an undefined tensor");
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "fooccl ", op_name(type),
              ": expected foo tensors, got a tensor on ", t.device());
  TORCH_CHECK(t.layout() == at::kStrided, "fooccl ", op_name(type), ": only strided (dense) tensors, got ",
              t.layout());
  return t;
}

const at::Tensor& single(const std::vector<at::Tensor>& tensors, OpType type) {
  TORCH_CHECK(tensors.size() == 1, "fooccl ", op_name(type),
              ": takes one tensor per call (one device per process), got ", tensors.size());
  return checked(tensors[0], type);
}

// `list` holds `size` tensors shaped like `like` (all_gather's outputs, reduce_scatter's inputs...).
void check_list(const std::vector<at::Tensor>& list, const at::Tensor& like, int size, OpType type,
                const char* what) {
  TORCH_CHECK(static_cast<int>(list.size()) == size, "fooccl ", op_name(type), ": expected ", size, " ", what,
              " (one per rank), got ", list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    checked(list[i], type);
    TORCH_CHECK(list[i].numel() == like.numel() && list[i].scalar_type() == like.scalar_type(), "fooccl ",
                op_name(type), ": ", what, " ", i, " has ", list[i].numel(), " ", list[i].scalar_type(),
                " elements, expected ", like.numel(), " ", like.scalar_type());
  }
}

void check_same_dtype(const at::Tensor& output, const at::Tensor& input, OpType type) {
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "fooccl ", op_name(type), ": the output's dtype ",
              output.scalar_type(), " differs from the input's ", input.scalar_type());
}

Fingerprint fingerprint(OpType type, const at::Tensor& t, int64_t numel, int64_t reduce = -1, int64_t root = -1) {
  return {static_cast<int64_t>(type), reduce, root, static_cast<int64_t>(t.scalar_type()), numel};
}

// tensors[first..] reshaped as `like` (engines want list entries shaped as the single tensor).
std::vector<at::Tensor> shaped_as(std::vector<at::Tensor>& tensors, size_t first, const at::Tensor& like) {
  std::vector<at::Tensor> out;
  for (size_t i = first; i < tensors.size(); ++i) out.push_back(tensors[i].view(like.sizes()));
  return out;
}

// Elements exchanged with each rank by all_to_all_single (rows of `t` times the row size).
std::vector<int64_t> exchange_counts(const at::Tensor& t, const std::vector<int64_t>& splits, int size) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t row = rows == 0 ? 0 : t.numel() / rows;
  std::vector<int64_t> counts;
  for (int r = 0; r < size; ++r) counts.push_back(row * (splits.empty() ? rows / size : splits[r]));
  return counts;
}

Part reduction_part(OpType type, const at::Tensor& t, const c10d::ReduceOp& reduce, Issue issue) {
  Part part;
  part.operands = {{t, true, true}};
  part.reduce = reduce;
  part.fingerprint = fingerprint(type, t, t.numel(), reduce.op_);
  part.issue = std::move(issue);
  return part;
}

Issue allreduce_issue(std::chrono::milliseconds timeout) {
  return [timeout](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp& op) {
    c10d::AllreduceOptions o;
    o.reduceOp = op;
    o.timeout = timeout;
    return engine.allreduce(e, o);
  };
}

Part allgather_base_part(at::Tensor& output, at::Tensor& input, int size, const c10d::AllgatherOptions& opts) {
  const auto type = OpType::_ALLGATHER_BASE;
  checked(output, type);
  checked(input, type);
  check_same_dtype(output, input, type);
  TORCH_CHECK(output.numel() == input.numel() * size, "fooccl ", op_name(type), ": the output has ",
              output.numel(), " elements; it needs the input's ", input.numel(), " times the group size ", size);
  Part part;
  part.operands = {{input, true, false}, {output, false, true}};
  part.fingerprint = fingerprint(type, input, input.numel());
  part.issue = [timeout = opts.timeout](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    c10d::AllgatherOptions o;
    o.timeout = timeout;
    return engine._allgather_base(e[1], e[0], o);
  };
  return part;
}

Part reduce_scatter_base_part(at::Tensor& output, at::Tensor& input, int size,
                              const c10d::ReduceScatterOptions& opts) {
  const auto type = OpType::_REDUCE_SCATTER_BASE;
  checked(output, type);
  checked(input, type);
  check_same_dtype(output, input, type);
  TORCH_CHECK(input.numel() == output.numel() * size, "fooccl ", op_name(type), ": the input has ", input.numel(),
              " elements; it needs the output's ", output.numel(), " times the group size ", size);
  Part part;
  part.operands = {{output, false, true}, {input, true, false}};
  part.reduce = opts.reduceOp;
  part.fingerprint = fingerprint(type, output, output.numel(), opts.reduceOp.op_);
  part.issue = [timeout = opts.timeout](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp& op) {
    c10d::ReduceScatterOptions o;
    o.reduceOp = op;
    o.timeout = timeout;
    return engine._reduce_scatter_base(e[0], e[1], o);
  };
  return part;
}

// One part per (output, input) pair of a coalesced *_tensor call.
template <typename MakePart>
std::vector<Part> pairwise(const char* name, std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                           MakePart make_part) {
  TORCH_CHECK(outputs.size() == inputs.size(), "fooccl ", name, ": ", outputs.size(), " outputs for ", inputs.size(),
              " inputs");
  std::vector<Part> parts;
  for (size_t i = 0; i < inputs.size(); ++i) parts.push_back(make_part(outputs[i], inputs[i]));
  return parts;
}

Part p2p_part(const at::Tensor& t, int peer, int tag, bool sends) {
  Part part;
  part.operands = {{t, sends, !sends}};
  part.peer = peer;
  part.sends = sends;
  part.tag = tag;
  part.issue = [peer, tag, sends](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    std::vector<at::Tensor> one{e[0]};
    return sends ? engine.send(one, peer, tag) : engine.recv(one, peer, tag);
  };
  return part;
}

// Streams of destroyed process groups, reused by later groups of the same device. Never destroyed:
// a tensor a collective used records an event on the group's stream when it is freed, which may
// be long after the group is gone.
class StreamRecycler {
 public:
  std::optional<c10::Stream> take(c10::Device device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->device() != device) continue;
      const auto stream = *it;
      free_.erase(it);
      return stream;
    }
    return std::nullopt;
  }
  void put(const c10::Stream& stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(stream);
  }

 private:
  std::mutex mutex_;
  std::vector<c10::Stream> free_;
};

StreamRecycler& recycled_streams() {
  static auto* recycler = new StreamRecycler();  // leaked: stream workers may outlive static destructors
  return *recycler;
}

}  // namespace

FooBackend::FooBackend(std::unique_ptr<Engine> engine, int rank, int size, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), engine_(std::move(engine)), timeout_(timeout) {
  init();
}

FooBackend::~FooBackend() {
  if (!stream_ || foo::runtime::in_bad_fork()) return;
  try {
    // Idle: the next group may take it. Still busy (a collective blocked in its engine until the
    // engine's timeout): left alone.
    if (foo::runtime::driver().query_stream(foo::runtime::native_stream(*stream_))) recycled_streams().put(*stream_);
  } catch (const std::exception&) {
    // A failed collective's error, already reported through its Work; the stream is not reused.
  }
}

c10::intrusive_ptr<c10d::Backend::Options> FooBackend::getBackendOptions() {
  return c10::make_intrusive<Options>(kName, timeout_);
}

uint64_t FooBackend::getSequenceNumberForGroup() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sequence_;
}

void FooBackend::shutdown() {
  std::optional<c10::Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream = stream_;
  }
  if (!stream || foo::runtime::in_bad_fork()) return;
  try {
    foo::runtime::driver().synchronize_stream(foo::runtime::native_stream(*stream));
  } catch (const std::exception&) {
    // Reported through the failed collective's Work already.
  }
}

// --- launching ------------------------------------------------------------------------------------

c10::Device FooBackend::device_of(const Call& call, const std::optional<c10::Device>& hint) const {
  std::optional<c10::Device> device;
  for (const auto& part : call.parts) {
    for (const auto& operand : part.operands) {
      const auto d = operand.tensor.device();
      if (!device) device = d;
      TORCH_CHECK(d == *device, "fooccl ", op_name(call.type), ": all tensors must be on one foo device, got ",
                  *device, " and ", d);
    }
  }
  const auto bound = getBoundDeviceId();
  const bool bound_to_foo = bound && bound->type() == c10::DeviceType::PrivateUse1;
  if (!device) {  // barrier, an empty batch
    device = stream_ ? stream_->device()
             : bound_to_foo ? *bound
             : hint ? *hint
                    : c10::Device(c10::DeviceType::PrivateUse1, foo::runtime::current_device());
  }
  if (stream_) {
    TORCH_CHECK(stream_->device() == *device, "fooccl ", op_name(call.type), ": this process group runs on ",
                stream_->device(), " (where its first collective ran), got tensors on ", *device,
                "; use one process group per device, as with NCCL");
  } else if (bound_to_foo) {
    TORCH_CHECK(*bound == *device, "fooccl ", op_name(call.type), ": this process group is bound to ", *bound,
                " (init_process_group(device_id=...)), got tensors on ", *device);
  }
  return *device;
}

c10::Stream FooBackend::stream_on(c10::Device device) {
  if (!stream_) {
    // A stream of its own, not one of the device's pool: a group sharing it with others would
    // serialise behind their blocked collectives and could deadlock across ranks.
    stream_ = recycled_streams().take(device);
  }
  if (!stream_) {
    auto handle = foo::runtime::driver().create_stream(device.index(), /*priority=*/0);
    stream_ = foo::runtime::external_stream(handle, device.index());
  }
  return *stream_;
}

c10::intrusive_ptr<c10d::Work> FooBackend::submit(OpType type, std::vector<Part> parts, bool blocking) {
  Call call;
  call.type = type;
  call.parts = std::move(parts);
  call.blocking = blocking;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto failure = health_->failure();
  TORCH_CHECK_WITH(DistBackendError, failure.empty(), "fooccl ", op_name(type),
                   ": the process group is unusable after an earlier failure (as NCCL after a communicator "
                   "error); create a new one. The failure: ",
                   failure);
  const auto device = device_of(call);
  engine_->prepare(call);
  if (!batch_) return launch(std::move(call), device);
  // Inside a coalescing block: join the batch; the block's end launches it.
  for (auto& part : call.parts) batch_->parts.push_back(std::move(part));
  device_of(*batch_);  // one device per batch too
  return c10::make_intrusive<FooWork>(rank_, type, c10::str("fooccl ", op_name(type), " in a coalescing block"),
                                      device, false, false, std::make_shared<CallState>(), health_,
                                      std::vector<at::Tensor>{});
}

c10::intrusive_ptr<c10d::Work> FooBackend::launch(Call call, c10::Device device) {
  const auto stream = stream_on(device);
  // Only group-wide collectives count: point-to-point ones involve two ranks (and an empty
  // coalescing block none), so counting them would desynchronise the ranks' numbers.
  const bool group_wide = std::any_of(call.parts.begin(), call.parts.end(), [](const Part& p) { return p.peer < 0; });
  if (group_wide) call.sequence = static_cast<int64_t>(++sequence_);
  call.description = c10::str("fooccl ", op_name(call.type), " #", call.sequence, " on ", device, " (",
                              engine_->name(), ", ", engine_->memory(), ")");
  std::vector<at::Tensor> outputs;
  for (const auto& part : call.parts) {
    for (const auto& operand : part.operands) {
      if (operand.write) outputs.push_back(operand.tensor);
    }
  }
  auto state = std::make_shared<CallState>();
  auto work = c10::make_intrusive<FooWork>(rank_, call.type, call.description, device, call.blocking,
                                           engine_->fails_on_stream(), state, health_, outputs);

  // S waits for the producer: the caller's current stream, where the inputs were written.
  c10::Event ready(c10::DeviceType::PrivateUse1);
  ready.record(foo_guard().getStream(device));
  ready.block(stream);

  c10::StreamGuard on_s(stream);  // copies, temporaries and the engine's work go to S
  DenseOperands dense(call.parts.size());
  for (size_t i = 0; i < call.parts.size(); ++i) {
    for (const auto& operand : call.parts[i].operands) {
      const auto& t = operand.tensor;
      // Engines want dense memory; a strided operand goes through a dense temporary on S.
      dense[i].push_back(t.is_contiguous()   ? t
                         : operand.read ? t.contiguous()
                                        : at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous)));
      // The caller may free its tensors at once: their memory is not reused before S passes here.
      foo_guard().recordDataPtrOnStream(t.storage().data_ptr(), stream);
    }
  }
  auto shared = std::make_shared<const Call>(std::move(call));
  engine_->enqueue(shared, dense, stream, state, health_);
  for (size_t i = 0; i < shared->parts.size(); ++i) {
    for (size_t k = 0; k < dense[i].size(); ++k) {
      const auto& operand = shared->parts[i].operands[k];
      if (operand.write && !dense[i][k].is_same(operand.tensor)) operand.tensor.copy_(dense[i][k]);
    }
  }
  c10::Event end(c10::DeviceType::PrivateUse1);
  end.record(stream);
  work->launched(std::move(end));
  return work;
}

void FooBackend::startCoalescing() {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(!batch_, "fooccl: startCoalescing inside an open coalescing block");
  batch_.emplace();
  batch_->type = OpType::COALESCED;
}

c10::intrusive_ptr<c10d::Work> FooBackend::endCoalescing() {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(batch_, "fooccl: endCoalescing without startCoalescing");
  Call call = std::move(*batch_);
  batch_.reset();
  const auto device = device_of(call);
  return launch(std::move(call), device);
}

// --- the collectives -------------------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> FooBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceOptions& opts) {
  const auto type = OpType::ALLREDUCE;
  const auto& t = single(tensors, type);
  return submit(type, {reduction_part(type, t, opts.reduceOp, allreduce_issue(opts.timeout))});
}

c10::intrusive_ptr<c10d::Work> FooBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                               const c10d::AllreduceCoalescedOptions& opts) {
  std::vector<Part> parts;
  for (const auto& t : tensors) {
    parts.push_back(reduction_part(OpType::ALLREDUCE, checked(t, OpType::ALLREDUCE_COALESCED), opts.reduceOp,
                                   allreduce_issue(opts.timeout)));
  }
  return submit(OpType::ALLREDUCE_COALESCED, std::move(parts));
}

c10::intrusive_ptr<c10d::Work> FooBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                     const c10d::BroadcastOptions& opts) {
  const auto type = OpType::BROADCAST;
  const auto& t = single(tensors, type);
  const bool root = opts.rootRank == rank_;
  Part part;
  part.operands = {{t, root, !root}};  // the root's tensor is only read, as with NCCL
  part.fingerprint = fingerprint(type, t, t.numel(), -1, opts.rootRank);
  part.issue = [opts](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    c10d::BroadcastOptions o;
    o.rootRank = opts.rootRank;
    o.timeout = opts.timeout;
    return engine.broadcast(e, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  const auto type = OpType::REDUCE;
  const auto& t = single(tensors, type);
  const bool root = opts.rootRank == rank_;
  Part part;
  part.operands = {{t, true, root}};  // other ranks' tensors are left unchanged, as with NCCL
  part.reduce = opts.reduceOp;
  part.fingerprint = fingerprint(type, t, t.numel(), opts.reduceOp.op_, opts.rootRank);
  part.issue = [opts](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp& op) {
    c10d::ReduceOptions o;
    o.reduceOp = op;
    o.rootRank = opts.rootRank;
    o.timeout = opts.timeout;
    return engine.reduce(e, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) {
  const auto type = OpType::ALLGATHER;
  const auto& input = single(inputs, type);
  TORCH_CHECK(outputs.size() == 1, "fooccl all_gather: takes one output list, got ", outputs.size());
  check_list(outputs[0], input, size_, type, "output tensors");
  Part part;
  part.operands = {{input, true, false}};
  for (const auto& out : outputs[0]) part.operands.push_back({out, false, true});
  part.fingerprint = fingerprint(type, input, input.numel());
  part.issue = [timeout = opts.timeout](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    std::vector<std::vector<at::Tensor>> outs{shaped_as(e, 1, e[0])};
    std::vector<at::Tensor> in{e[0]};
    c10d::AllgatherOptions o;
    o.timeout = timeout;
    return engine.allgather(outs, in, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                           const c10d::AllgatherOptions& opts) {
  return submit(OpType::_ALLGATHER_BASE, {allgather_base_part(output, input, size_, opts)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                           std::vector<at::Tensor>& inputs,
                                                                           const c10d::AllgatherOptions& opts) {
  return submit(OpType::COALESCED, pairwise("all_gather_into_tensor_coalesced", outputs, inputs, [&](auto& o, auto& i) {
                  return allgather_base_part(o, i, size_, opts);
                }));
}

c10::intrusive_ptr<c10d::Work> FooBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                  std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  const auto type = OpType::GATHER;
  const auto& input = single(inputs, type);
  const bool root = opts.rootRank == rank_;
  Part part;
  part.operands = {{input, true, false}};
  if (root) {
    TORCH_CHECK(outputs.size() == 1, "fooccl gather: the root takes one output list, got ", outputs.size());
    check_list(outputs[0], input, size_, type, "output tensors");
    for (const auto& out : outputs[0]) part.operands.push_back({out, false, true});
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "fooccl gather: only the root (rank ", opts.rootRank, ") takes output tensors");
  }
  part.fingerprint = fingerprint(type, input, input.numel(), -1, opts.rootRank);
  part.issue = [opts](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    std::vector<std::vector<at::Tensor>> outs;
    if (e.size() > 1) outs.push_back(shaped_as(e, 1, e[0]));
    std::vector<at::Tensor> in{e[0]};
    c10d::GatherOptions o;
    o.rootRank = opts.rootRank;
    o.timeout = opts.timeout;
    return engine.gather(outs, in, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::scatter(std::vector<at::Tensor>& outputs,
                                                   std::vector<std::vector<at::Tensor>>& inputs,
                                                   const c10d::ScatterOptions& opts) {
  const auto type = OpType::SCATTER;
  const auto& output = single(outputs, type);
  const bool root = opts.rootRank == rank_;
  Part part;
  part.operands = {{output, false, true}};
  if (root) {
    TORCH_CHECK(inputs.size() == 1, "fooccl scatter: the root takes one input list, got ", inputs.size());
    check_list(inputs[0], output, size_, type, "input tensors");
    for (const auto& in : inputs[0]) part.operands.push_back({in, true, false});
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "fooccl scatter: only the root (rank ", opts.rootRank, ") takes input tensors");
  }
  part.fingerprint = fingerprint(type, output, output.numel(), -1, opts.rootRank);
  part.issue = [opts](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    std::vector<at::Tensor> out{e[0]};
    std::vector<std::vector<at::Tensor>> ins;
    if (e.size() > 1) ins.push_back(shaped_as(e, 1, e[0]));
    c10d::ScatterOptions o;
    o.rootRank = opts.rootRank;
    o.timeout = opts.timeout;
    return engine.scatter(out, ins, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                          std::vector<std::vector<at::Tensor>>& inputs,
                                                          const c10d::ReduceScatterOptions& opts) {
  const auto type = OpType::REDUCE_SCATTER;
  const auto& output = single(outputs, type);
  TORCH_CHECK(inputs.size() == 1, "fooccl reduce_scatter: takes one input list, got ", inputs.size());
  check_list(inputs[0], output, size_, type, "input tensors");
  Part part;
  part.operands = {{output, false, true}};
  for (const auto& in : inputs[0]) part.operands.push_back({in, true, false});
  part.reduce = opts.reduceOp;
  part.fingerprint = fingerprint(type, output, output.numel(), opts.reduceOp.op_);
  part.issue = [timeout = opts.timeout](c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp& op) {
    std::vector<at::Tensor> out{e[0]};
    std::vector<std::vector<at::Tensor>> ins{shaped_as(e, 1, e[0])};
    c10d::ReduceScatterOptions o;
    o.reduceOp = op;
    o.timeout = timeout;
    return engine.reduce_scatter(out, ins, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                const c10d::ReduceScatterOptions& opts) {
  return submit(OpType::_REDUCE_SCATTER_BASE, {reduce_scatter_base_part(output, input, size_, opts)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                           std::vector<at::Tensor>& inputs,
                                                                           const c10d::ReduceScatterOptions& opts) {
  return submit(OpType::COALESCED, pairwise("reduce_scatter_tensor_coalesced", outputs, inputs, [&](auto& o, auto& i) {
                  return reduce_scatter_base_part(o, i, size_, opts);
                }));
}

c10::intrusive_ptr<c10d::Work> FooBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                         std::vector<int64_t>& output_split_sizes,
                                                         std::vector<int64_t>& input_split_sizes,
                                                         const c10d::AllToAllOptions& opts) {
  const auto type = OpType::ALLTOALL_BASE;
  checked(output, type);
  checked(input, type);
  check_same_dtype(output, input, type);
  c10d::checkSplitSizes(input_split_sizes, input, size_);
  c10d::checkSplitSizes(output_split_sizes, output, size_);
  Part part;
  part.operands = {{input, true, false}, {output, false, true}};
  part.send_counts = exchange_counts(input, input_split_sizes, size_);
  part.recv_counts = exchange_counts(output, output_split_sizes, size_);
  part.fingerprint = fingerprint(type, input, 0);  // the counts are checked pair by pair instead
  part.issue = [output_split_sizes, input_split_sizes, timeout = opts.timeout](
                   c10d::Backend& engine, std::vector<at::Tensor>& e, const c10d::ReduceOp&) {
    auto out_splits = output_split_sizes;
    auto in_splits = input_split_sizes;
    c10d::AllToAllOptions o;
    o.timeout = timeout;
    return engine.alltoall_base(e[1], e[0], out_splits, in_splits, o);
  };
  return submit(type, {std::move(part)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  const auto& t = single(tensors, OpType::SEND);
  return submit(OpType::SEND, {p2p_part(t, dst_rank, tag, /*sends=*/true)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  const auto& t = single(tensors, OpType::RECV);
  return submit(OpType::RECV, {p2p_part(t, src_rank, tag, /*sends=*/false)});
}

c10::intrusive_ptr<c10d::Work> FooBackend::barrier(const c10d::BarrierOptions& opts) {
  // As NCCL: an all_reduce of one element on the group's device, and wait() blocks the host.
  std::optional<c10::Device> hint;
  if (opts.device && opts.device->type() == c10::DeviceType::PrivateUse1 && opts.device->has_index()) {
    hint = *opts.device;
  }
  const auto type = OpType::BARRIER;
  Call probe;
  probe.type = type;
  c10::Device device(c10::DeviceType::PrivateUse1, 0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    device = device_of(probe, hint);
  }
  const auto t = at::zeros({1}, at::TensorOptions().device(device).dtype(at::kByte));
  return submit(type, {reduction_part(type, t, c10d::ReduceOp::SUM, allreduce_issue(opts.timeout))},
                /*blocking=*/true);
}

}  // namespace foo::distributed
