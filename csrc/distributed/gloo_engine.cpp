// The Gloo engine: foo tensors staged through pinned host memory, Gloo running on the host copies.
//
// On the process group's stream S, in order:
//   1. device -> pinned host copies of the operands the collective reads (non_blocking copies);
//   2. a host task: check that every rank called the same collective, run it with Gloo on the
//      host copies (issue every part, then wait), apply AVG / PREMUL_SUM scaling Gloo lacks;
//   3. pinned host -> device copies of the operands it writes.
// The caller's thread only queues; the host task blocks S (not the caller) while Gloo runs, so a
// collective completes in stream order like a device kernel. A failure in 2 is stored in the call's
// state and the process group's health, then rethrown so S skips the copies back.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>

#include <c10/core/Event.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "aten/core/torch_compat.h"
#include "distributed/engine.h"
#include "runtime/driver/driver.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

namespace foo::distributed {
namespace {

using HostOperands = std::vector<std::vector<at::Tensor>>;
using Works = std::vector<c10::intrusive_ptr<c10d::Work>>;

bool gloo_supports(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: case at::kDouble: case at::kHalf: case at::kBFloat16:
    case at::kChar: case at::kByte: case at::kBool: case at::kInt: case at::kLong:
      return true;
    default:
      return false;
  }
}

// What Gloo runs for a reduction, and what the host does around it.
struct HostReduction {
  c10d::ReduceOp op = c10d::ReduceOp::SUM;
  std::optional<double> premultiply;  // PREMUL_SUM: inputs scaled before the sum
  bool average = false;               // AVG: outputs divided by the group size after the sum
};

HostReduction host_reduction(const c10d::ReduceOp& reduce) {
  if (reduce.op_ == c10d::ReduceOp::AVG) return {c10d::ReduceOp::SUM, std::nullopt, true};
  if (reduce.op_ == c10d::ReduceOp::PREMUL_SUM) {
    const auto* factor = dynamic_cast<const FOO_C10D_PREMUL_SUM_SUPPLEMENT*>(reduce.supplement_.get());
    return {c10d::ReduceOp::SUM, factor->double_factor, false};
  }
  return {reduce, std::nullopt, false};
}

// Integers average as NCCL's ncclAvg does (sum, then division rounding toward zero).
void divide(at::Tensor& t, int64_t n) {
  if (at::isIntegralType(t.scalar_type(), /*includeBool=*/true)) {
    t.div_(n, "trunc");
  } else {
    t.div_(n);
  }
}

// Gloo's and c10's errors carry a C++ backtrace when TORCH_SHOW_CPP_STACKTRACES is set; the
// message that reaches the user names the collective and the cause only.
std::string without_backtrace(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return c10_error ? c10_error->what_without_backtrace() : e.what();
}

at::Tensor pinned_like(const at::Tensor& t) {
  return at::detail::empty_generic(t.sizes(), &foo::runtime::host_allocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::CPU), t.scalar_type(), std::nullopt);
}

// --- every rank called the same collective -------------------------------------------------------

constexpr int kRowFields = 3 + Fingerprint::kFields;  // sequence, type, parts, then part 0's fields

std::vector<int64_t> row_of(const Call& call) {
  std::vector<int64_t> row{call.sequence, static_cast<int64_t>(call.type), 0};
  Fingerprint summary;
  for (const auto& part : call.parts) {
    if (part.peer >= 0) continue;
    const auto& f = part.fingerprint;
    if (row[2]++ == 0) {
      summary = f;
    } else {  // a batch: fold the other parts in, so any difference shows
      summary.numel = summary.numel * 1000003 + f.numel * 31 + f.dtype * 7 + f.reduce * 3 + f.op;
    }
  }
  row.insert(row.end(), {summary.op, summary.reduce, summary.root, summary.dtype, summary.numel});
  return row;
}

std::string describe(const int64_t* row) {
  std::ostringstream out;
  out << "collective #" << row[0] << " ";
  if (row[2] > 1) {
    out << "a batch of " << row[2] << " " << op_name(static_cast<c10d::OpType>(row[3])) << " calls";
    return out.str();
  }
  out << op_name(static_cast<c10d::OpType>(row[3]));
  if (row[4] >= 0) out << "(" << reduce_name(row[4]) << ")";
  if (row[6] >= 0) out << " of " << row[7] << " " << c10::toString(static_cast<at::ScalarType>(row[6])) << " elements";
  if (row[5] >= 0) out << " from root " << row[5];
  return out.str();
}

// Gloo aborts the whole process when a message is larger than the buffer posted for it, and
// silently mixes dtypes of one size: so the ranks first exchange what they are about to run.
void verify_group(c10d::Backend& gloo, const Call& call) {
  const auto mine = row_of(call);
  if (mine[2] == 0) return;  // only point-to-point parts
  const int size = gloo.getSize();
  auto local = at::tensor(mine, at::kLong);
  auto all = at::empty({size * kRowFields}, at::kLong);
  gloo._allgather_base(all, local)->wait();
  const int64_t* rows = all.const_data_ptr<int64_t>();
  bool same = true;
  for (int r = 0; r < size && same; ++r) same = std::equal(mine.begin(), mine.end(), rows + r * kRowFields);
  if (same) return;
  std::ostringstream out;
  out << "the ranks called different collectives:";
  for (int r = 0; r < size; ++r) out << (r ? ";" : "") << " rank " << r << ": " << describe(rows + r * kRowFields);
  throw std::runtime_error(out.str());
}

// all_to_all_single: every rank sees every rank's send and receive counts, so all of them refuse a
// pair that disagrees (the receiver's buffer would not fit the sender's message).
void verify_exchange_counts(c10d::Backend& gloo, const Part& part) {
  const int size = gloo.getSize();
  std::vector<int64_t> mine(part.send_counts);
  mine.insert(mine.end(), part.recv_counts.begin(), part.recv_counts.end());
  auto all = at::empty({size * 2 * size}, at::kLong);
  auto local = at::tensor(mine, at::kLong);
  gloo._allgather_base(all, local)->wait();
  const int64_t* counts = all.const_data_ptr<int64_t>();  // row r: rank r's sends, then receives
  for (int from = 0; from < size; ++from) {
    for (int to = 0; to < size; ++to) {
      const int64_t sent = counts[from * 2 * size + to], expected = counts[to * 2 * size + size + from];
      if (sent == expected) continue;
      std::ostringstream out;
      out << "all_to_all_single split sizes disagree: rank " << from << " sends " << sent << " elements to rank "
          << to << ", which expects " << expected << " from it";
      throw std::runtime_error(out.str());
    }
  }
}

// --- point-to-point: the receiver learns dtype and size first ----------------------------------

// Sends each send part's (dtype, numel) ahead of its data; each receive part compares it with its
// own buffer. A mismatched receive gets a buffer the sender's size instead (so the sender is not
// left hanging and Gloo does not abort), and the returned message says what differed.
std::string exchange_headers(c10d::Backend& gloo, const Call& call, HostOperands& host) {
  const int rank = gloo.getRank();
  std::vector<at::Tensor> headers(call.parts.size());
  Works works;
  for (size_t i = 0; i < call.parts.size(); ++i) {
    const auto& part = call.parts[i];
    if (part.peer < 0) continue;
    const auto& t = host[i][0];
    std::vector<at::Tensor> header{part.sends ? at::tensor({static_cast<int64_t>(t.scalar_type()), t.numel()}, at::kLong)
                                              : at::empty({2}, at::kLong)};
    headers[i] = header[0];
    works.push_back(part.sends ? gloo.send(header, part.peer, part.tag) : gloo.recv(header, part.peer, part.tag));
  }
  for (auto& w : works) w->wait();
  std::string mismatch;
  for (size_t i = 0; i < call.parts.size(); ++i) {
    const auto& part = call.parts[i];
    if (part.peer < 0 || part.sends) continue;
    const auto dtype = static_cast<at::ScalarType>(headers[i][0].item<int64_t>());
    const auto numel = headers[i][1].item<int64_t>();
    auto& buffer = host[i][0];
    if (dtype == buffer.scalar_type() && numel == buffer.numel()) continue;
    std::ostringstream out;
    out << (mismatch.empty() ? "" : "; ") << "rank " << rank << " posted recv of " << buffer.numel() << " "
        << c10::toString(buffer.scalar_type()) << " elements but rank " << part.peer << " sent " << numel << " "
        << c10::toString(dtype) << " elements";
    mismatch += out.str();
    buffer = at::empty({numel}, dtype);  // drains the message; the foo tensor is left unchanged
  }
  return mismatch;
}

// Step 2, on the host. Works on its own references to the host copies (a receive may swap in a
// drain buffer), so none of the pinned buffers is freed here.
void run_on_host(c10d::Backend& gloo, const Call& call, HostOperands host) {
  verify_group(gloo, call);
  for (const auto& part : call.parts) {
    if (!part.send_counts.empty()) verify_exchange_counts(gloo, part);
  }
  const std::string mismatch = exchange_headers(gloo, call, host);
  std::vector<HostReduction> reductions;
  Works works;
  for (size_t i = 0; i < call.parts.size(); ++i) {
    const auto& part = call.parts[i];
    reductions.push_back(part.reduce ? host_reduction(*part.reduce) : HostReduction{});
    const auto& r = reductions.back();
    for (size_t k = 0; k < part.operands.size(); ++k) {
      if (r.premultiply && part.operands[k].read) host[i][k].mul_(*r.premultiply);
    }
    works.push_back(part.issue(gloo, host[i], r.op));
  }
  for (auto& w : works) w->wait();
  if (!mismatch.empty()) throw std::runtime_error(mismatch);
  for (size_t i = 0; i < call.parts.size(); ++i) {
    if (!reductions[i].average) continue;
    for (size_t k = 0; k < call.parts[i].operands.size(); ++k) {
      if (call.parts[i].operands[k].write) divide(host[i][k], gloo.getSize());
    }
  }
}

class GlooEngine final : public Engine {
 public:
  explicit GlooEngine(c10::intrusive_ptr<c10d::Backend> gloo) : gloo_(std::move(gloo)) {}

  const char* name() const override { return "gloo"; }
  const char* memory() const override { return "staged through pinned host memory"; }
  bool fails_on_stream() const override { return true; }

  void prepare(Call& call) const override {
    for (auto& part : call.parts) {
      for (const auto& operand : part.operands) {
        const auto dtype = operand.tensor.scalar_type();
        TORCH_CHECK(gloo_supports(dtype), "fooccl ", op_name(call.type), ": dtype ", dtype,
                    " is not supported by the gloo engine (float32, float64, float16, bfloat16, int8, uint8, int32, "
                    "int64, bool)");
        if (!part.reduce) continue;
        const auto op = part.reduce->op_;
        const bool bitwise = op == c10d::ReduceOp::BAND || op == c10d::ReduceOp::BOR || op == c10d::ReduceOp::BXOR;
        TORCH_CHECK(!bitwise || !at::isFloatingType(dtype), "fooccl ", op_name(call.type), ": ReduceOp.",
                    reduce_name(op), " needs an integer or bool dtype, got ", dtype);
      }
      // A device-resident PREMUL_SUM factor is read once here, on the caller's thread: the host task
      // must not touch device memory.
      if (part.reduce && part.reduce->op_ == c10d::ReduceOp::PREMUL_SUM) {
        const auto* factor = dynamic_cast<const FOO_C10D_PREMUL_SUM_SUPPLEMENT*>(part.reduce->supplement_.get());
        TORCH_CHECK(factor != nullptr, "fooccl ", op_name(call.type), ": PREMUL_SUM without a factor");
        if (factor->tensor_factor.defined()) {
          c10d::ReduceOp host_factor;  // as c10d::makePreMulSum, which 2.11/2.12 name otherwise
          host_factor.op_ = c10d::ReduceOp::PREMUL_SUM;
          host_factor.supplement_ =
              c10::make_intrusive<FOO_C10D_PREMUL_SUM_SUPPLEMENT>(factor->tensor_factor.item<double>());
          part.reduce = host_factor;
        }
      }
    }
  }

  void enqueue(std::shared_ptr<const Call> call, DenseOperands& dense, const c10::Stream& stream,
               std::shared_ptr<CallState> state, std::shared_ptr<Health> health) override {
    auto flight = std::make_shared<Flight>();
    flight->call = call;
    flight->host.resize(call->parts.size());
    for (size_t i = 0; i < call->parts.size(); ++i) {
      for (size_t k = 0; k < dense[i].size(); ++k) {
        flight->host[i].push_back(pinned_like(dense[i][k]));
        if (call->parts[i].operands[k].read) flight->host[i][k].copy_(dense[i][k], /*non_blocking=*/true);
      }
    }
    // The task holds no strong reference: see Flight.
    foo::runtime::driver().enqueue_host_task(
        foo::runtime::native_stream(stream), [gloo = gloo_, weak = std::weak_ptr<Flight>(flight), state, health] {
          const auto flight = weak.lock();  // alive: released only once the stream passed `done`
          if (!flight) {  // the process group was destroyed with this call still queued
            const std::string message = "a collective did not run: its process group was destroyed first";
            health->fail(message);
            state->fail(message);
            throw std::runtime_error(message);
          }
          try {
            run_on_host(*gloo, *flight->call, flight->host);
            state->succeed();
          } catch (const std::exception& e) {
            const std::string message = flight->call->description + " failed: " + without_backtrace(e);
            health->fail(message);
            state->fail(message);
            throw std::runtime_error(message);  // the stream skips the copies back
          }
        });
    for (size_t i = 0; i < call->parts.size(); ++i) {
      for (size_t k = 0; k < dense[i].size(); ++k) {
        if (call->parts[i].operands[k].write) dense[i][k].copy_(flight->host[i][k], /*non_blocking=*/true);
      }
    }
    flight->done.emplace(c10::DeviceType::PrivateUse1);
    flight->done->record(stream);
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(), [](const auto& f) { return f->done->query(); }),
                     in_flight_.end());
    in_flight_.push_back(std::move(flight));
  }

 private:
  // A queued call's host copies and operands. Released on a caller's thread once the stream has
  // passed the call, never by the host task: the last reference to a pinned or foo buffer frees
  // it, which records events on the stream, and on the cuda driver a host task must not call CUDA.
  struct Flight {
    std::shared_ptr<const Call> call;
    HostOperands host;
    std::optional<c10::Event> done;
  };

  c10::intrusive_ptr<c10d::Backend> gloo_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Flight>> in_flight_;
};

}  // namespace

std::unique_ptr<Engine> make_gloo_engine(c10::intrusive_ptr<c10d::Backend> gloo) {
  return std::make_unique<GlooEngine>(std::move(gloo));
}

}  // namespace foo::distributed
