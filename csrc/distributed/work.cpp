#include "distributed/work.h"

#include <chrono>
#include <thread>

#include <ATen/core/jit_type.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "runtime/driver/driver.h"
#include "runtime/stream.h"

namespace foo::distributed {
namespace {

// Empty unless the call failed, or was skipped because an earlier call of its group failed (the
// stream skips work behind a failed host task, so such a call stays pending forever).
std::string failure_of(const CallState& state, const Health& health, const std::string& description) {
  switch (state.status()) {
    case CallState::kSucceeded:
      return {};
    case CallState::kFailed:
      return state.message();
    case CallState::kPending:
      break;
  }
  const auto earlier = health.failure();
  if (earlier.empty()) return {};
  return description + " did not run: an earlier collective of its process group failed: " + earlier;
}

c10::impl::VirtualGuardImpl& foo_guard() {
  static c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
  return impl;
}

}  // namespace

FooWork::FooWork(int rank, c10d::OpType type, std::string description, c10::Device device, bool blocking,
                 bool fails_on_stream, std::shared_ptr<CallState> state, std::shared_ptr<Health> health,
                 std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      description_(std::move(description)),
      device_(device),
      blocking_(blocking),
      fails_on_stream_(fails_on_stream),
      state_(std::move(state)),
      health_(std::move(health)),
      outputs_(std::move(outputs)) {}

void FooWork::launched(c10::Event end) { end_.emplace(std::move(end)); }

std::string FooWork::failure() const { return failure_of(*state_, *health_, description_); }

void FooWork::throw_if_failed() const {
  const auto message = failure();
  TORCH_CHECK_WITH(DistBackendError, message.empty(), message);
}

bool FooWork::isCompleted() {
  if (!end_) return false;
  return !failure().empty() || end_->query();
}

bool FooWork::isSuccess() const { return failure().empty(); }

std::exception_ptr FooWork::exception() const {
  const auto message = failure();
  return message.empty() ? nullptr : std::make_exception_ptr(std::runtime_error(message));
}

void FooWork::synchronize() {
  TORCH_CHECK(end_.has_value(), description_, ": wait() inside its coalescing block; wait for the work the block returns");
  throw_if_failed();
  const auto current = foo_guard().getStream(device_);
  end_->block(current);
  if (!fails_on_stream_) return;
  foo::runtime::driver().enqueue_host_task(
      foo::runtime::native_stream(current), [state = state_, health = health_, description = description_] {
        const auto message = failure_of(*state, *health, description);
        if (!message.empty()) throw std::runtime_error(message);
      });
}

bool FooWork::wait(std::chrono::milliseconds timeout) {
  synchronize();
  if (!blocking_ && timeout == kNoTimeout) return true;
  // The host waits too: a barrier (as NCCL's), or an explicit timeout (as NCCL's blocking wait).
  if (timeout == kNoTimeout) {
    try {
      end_->synchronize();
    } catch (const std::exception&) {
      // The stream's error is the call's failure (or an earlier one's), reported just below.
    }
  } else {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!end_->query()) {
      TORCH_CHECK_WITH(DistBackendError, std::chrono::steady_clock::now() < deadline, description_,
                       " did not complete within ", timeout.count(), " ms");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  throw_if_failed();
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> FooWork::getFuture() {
  TORCH_CHECK(end_.has_value(), description_, ": get_future() inside its coalescing block");
  if (future_) return future_;
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                     std::vector<c10::Device>{device_});
  const auto message = failure();
  if (!message.empty()) {
    future_->setError(std::make_exception_ptr(std::runtime_error(message)));
    return future_;
  }
  // As ProcessGroupNCCL's future: complete at once, with events in stream order. Completed on a
  // side stream that waits for the collective, so its users wait for exactly this collective.
  const auto side = foo_guard().getStreamFromGlobalPool(device_, /*isHighPriority=*/false);
  end_->block(side);
  c10::StreamGuard on_side(side);
  future_->markCompleted(c10::IValue(outputs_));
  return future_;
}

}  // namespace foo::distributed
