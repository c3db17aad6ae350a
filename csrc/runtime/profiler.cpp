// torch.profiler on foo. Two paths, as for CUDA:
//
// - Kineto (torch.profiler.profile(activities=[CPU, PrivateUse1]), or use_kineto=True): an
//   activity profiler registered with torch's PrivateUse1 registry. While a session records,
//   kernel launches are timed on the device (runtime/driver/kernel_trace.h) and attributed to the
//   innermost op of the launching thread through the correlation ids torch announces around every
//   op; each kernel becomes a CONCURRENT_KERNEL activity linked to that op (so key_averages()
//   counts its device time under the op) plus a fooLaunchKernel runtime activity on the CPU row,
//   joined by a flow arrow in the Chrome trace.
// - Legacy (torch.autograd.profiler.profile(use_device="foo")): ProfilerStubs that record a
//   timing event on the current stream when each op begins and ends; the op's device time is
//   the time between them.
#include <c10/util/ApproximateClock.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "runtime/device.h"
#include "runtime/driver/driver.h"
#include "runtime/driver/kernel_trace.h"
#include "runtime/profiler.h"
#include "runtime/stream.h"

#ifdef FOO_WITH_KINETO
#ifndef USE_KINETO
#define USE_KINETO  // torch's Kineto headers are behind it; CMakeLists.txt found the registry
#endif
#include <libkineto.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <map>
#include <set>
#endif

namespace foo::runtime {
namespace {

// ---- legacy path ------------------------------------------------------------------------------

struct LegacyStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const c10::DeviceIndex d = current_device();
    if (device) *device = d;
    EventHandle e = driver().create_event(d, /*enable_timing=*/true);
    *event = std::shared_ptr<void>(e, [](void* h) {
      try {
        driver().destroy_event(h);
      } catch (...) {  // a deleter must not throw; the driver outlives every event
      }
    });
    if (cpu_ns) *cpu_ns = c10::getTime();
    driver().record_event(e, current_native_stream(d));
  }

  // Microseconds, as torch expects of every stub. A stream that failed has no time to give (its
  // error surfaces at the user's next synchronize); 0 makes torch skip the op's device time.
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* start,
                const torch::profiler::impl::ProfilerVoidEventStub* end) const override {
    try {
      driver().synchronize_event(end->get());
      return static_cast<float>(driver().elapsed_ms(start->get(), end->get()) * 1000.0);
    } catch (const DriverError&) {
      return 0.f;
    }
  }

  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, d));
      op(d);
    }
  }

  void synchronize() const override {
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) driver().synchronize_device(d);
  }
};

struct RegisterLegacyStubs {
  RegisterLegacyStubs() {
    static LegacyStubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
} register_legacy_stubs;

// ---- Kineto path ------------------------------------------------------------------------------

#ifdef FOO_WITH_KINETO
using libkineto::ActivityType;

std::string dims(const unsigned d[3]) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

class Session final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    kernel_trace::start();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    kernel_trace::stop();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override { processTrace(logger, nullptr, 0, 0); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked_op,
                    int64_t /*window_start*/, int64_t /*window_end*/) override {
    const auto records = kernel_trace::collect(&errors_);
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      const libkineto::ITraceActivity* op =
          r.correlation && linked_op ? linked_op(static_cast<int32_t>(r.correlation)) : nullptr;
      // Like CUDA's correlation id: one per launch, shared by the kernel and its launch (and
      // their flow arrow); the op that launched them is `linked`.
      const uint32_t launch_id = static_cast<uint32_t>(i + 1);

      auto& kernel = add(ActivityType::CONCURRENT_KERNEL, r.name);
      kernel.device = r.device;
      kernel.resource = r.stream;
      kernel.id = static_cast<int32_t>(launch_id);
      kernel.startTime = r.start_ns;
      kernel.endTime = r.end_ns;
      kernel.linked = op;
      kernel.addMetadataQuoted("device", std::to_string(r.device));
      kernel.addMetadataQuoted("stream", std::to_string(r.stream));
      kernel.addMetadataQuoted("grid", dims(r.grid));
      kernel.addMetadataQuoted("block", dims(r.block));
      streams_[r.device].insert(r.stream);

      // The launch on the CPU row of the op that made it, as cudaLaunchKernel is for CUDA.
      if (op) {
        kernel.flow.id = launch_id;
        kernel.flow.type = libkineto::kLinkAsyncCpuGpu;
        kernel.flow.start = false;
        auto& launch = add(ActivityType::PRIVATEUSE1_RUNTIME, "fooLaunchKernel");
        launch.device = static_cast<int32_t>(op->deviceId());
        launch.resource = static_cast<int32_t>(op->resourceId());
        launch.threadId = op->getThreadId();
        launch.id = static_cast<int32_t>(launch_id);
        launch.startTime = r.launch_begin_ns;
        launch.endTime = r.launch_end_ns;
        launch.linked = op;
        launch.flow.id = launch_id;
        launch.flow.type = libkineto::kLinkAsyncCpuGpu;
        launch.flow.start = true;
        launch.addMetadataQuoted("kernel", r.name);
        logger.handleActivity(launch);
      }
      logger.handleActivity(kernel);
    }
  }

  // Kineto names one device row per session; the others show as their device index.
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (streams_.empty()) return nullptr;
    const int d = streams_.begin()->first;
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{d, d, "foo:" + std::to_string(d), "foo " + std::to_string(d)});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [device, streams] : streams_)
      for (int s : streams)
        out.push_back(libkineto::ResourceInfo{s, s, device, "foo:" + std::to_string(device) + " stream " + std::to_string(s)});
    return out;
  }

  // The activities handed to the logger live in this buffer; Kineto keeps it alive with the trace.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { kernel_trace::push_correlation(id); }
  void popCorrelationId() override { kernel_trace::pop_correlation(); }

 private:
  libkineto::GenericTraceActivity& add(ActivityType type, const std::string& name) {
    buffer_->emplace_activity(buffer_->span, type, name);
    return *buffer_->activities.back();
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
  std::vector<std::string> errors_;
  std::map<int, std::set<int>> streams_;  // device -> streams that ran traced kernels
};

class ActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  // A session only when the user asked for device activity (ProfilerActivity.PrivateUse1):
  // a CPU-only profile leaves kernel launches untouched.
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    if (!types.count(ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<Session>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  const std::string name_ = "foo";
  const std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL, ActivityType::PRIVATEUSE1_RUNTIME};
};

REGISTER_PRIVATEUSE1_PROFILER(ActivityProfiler);
#endif  // FOO_WITH_KINETO

}  // namespace

bool profiler_traces_device_kernels() {
#ifdef FOO_WITH_KINETO
  return true;
#else
  return false;
#endif
}

}  // namespace foo::runtime
