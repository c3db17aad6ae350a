// The Python side of the runtime's device queries, memory statistics and streams (called from
// module.cpp; listed in docs/INTERFACES.md).
#include <pthread.h>

#include <optional>
#include <string>
#include <utility>

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <torch/csrc/Export.h>
#include <torch/csrc/profiler/combined_traceback.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/csrc/utils/pybind.h>

#include "python/bindings.h"
#include "runtime/allocator.h"
#include "runtime/driver/driver.h"
#include "runtime/fork.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

// From torch/csrc/profiler/python/combined_traceback.h (libtorch_python), which the installed
// headers cannot include: it needs nlohmann/json.hpp, which torch does not ship.
namespace torch {
TORCH_API std::vector<pybind11::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
TORCH_PYTHON_API void freeDeadCapturedTracebackFrames();
}  // namespace torch

namespace foo::python {
namespace {

namespace py = pybind11;
namespace rt = foo::runtime;

c10::Stream foo_stream(int64_t stream_id, int device) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, checked(device)), stream_id);
}

int64_t aggregate(const c10::CachingAllocator::StatArray& stat, bool peak = false) {
  const auto& s = stat[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
  return peak ? s.peak : s.current;
}

py::dict memory_stats(int device) {
  const auto s = rt::device_stats(checked(device));
  py::dict d;
  d["allocated"] = aggregate(s.allocated_bytes);
  d["reserved"] = aggregate(s.reserved_bytes);
  d["peak_allocated"] = aggregate(s.allocated_bytes, /*peak=*/true);
  d["peak_reserved"] = aggregate(s.reserved_bytes, /*peak=*/true);
  d["num_allocs"] = s.allocation[0].allocated;
  d["num_frees"] = s.allocation[0].freed;
  d["num_device_allocs"] = s.num_device_alloc;
  d["num_device_frees"] = s.num_device_free;
  return d;
}

// Stacks of a snapshot, symbolized together once it is built (as torch/csrc/cuda/Module.cpp
// does): each recorded stack becomes the "frames" list of its dict; the others get [].
struct Frames {
  std::vector<torch::CapturedTraceback*> tracebacks;
  std::vector<py::dict> dicts;

  void add(py::dict d, const std::shared_ptr<c10::GatheredContext>& context) {
    auto* traceback = context ? dynamic_cast<torch::CapturedTraceback*>(context.get()) : nullptr;
    if (!traceback) {
      d["frames"] = py::list();
      return;
    }
    tracebacks.push_back(traceback);
    dicts.push_back(std::move(d));
  }
  void symbolize() {
    if (tracebacks.empty()) return;
    const auto frames = torch::py_symbolize(tracebacks);
    for (size_t i = 0; i < frames.size(); ++i) dicts[i]["frames"] = frames[i];
  }
};

// torch.cuda.memory_snapshot()'s segment format.
py::list segments_to_python(const std::vector<c10::CachingDeviceAllocator::SegmentInfo>& snapshot,
                            Frames& frames) {
  py::list segments;
  for (const auto& seg : snapshot) {
    py::list blocks;
    size_t offset = 0;
    for (const auto& b : seg.blocks) {
      py::dict block;
      block["address"] = seg.address + offset;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
      frames.add(block, b.context_when_allocated);
      blocks.append(block);
      offset += b.size;
    }
    py::dict d;
    d["device"] = static_cast<int>(seg.device);
    d["address"] = seg.address;
    d["total_size"] = seg.total_size;
    d["allocated_size"] = seg.allocated_size;
    d["active_size"] = seg.active_size;
    d["requested_size"] = seg.requested_size;
    d["stream"] = reinterpret_cast<uintptr_t>(seg.stream);
    d["segment_type"] = seg.is_large ? "large" : "small";
    d["segment_pool_id"] = py::make_tuple(seg.owner_private_pool_id.first, seg.owner_private_pool_id.second);
    d["is_expandable"] = false;
    frames.add(d, seg.context_when_allocated);
    d["blocks"] = blocks;
    segments.append(d);
  }
  return segments;
}

py::list memory_snapshot(int device) {
  Frames frames;
  auto segments = segments_to_python(rt::memory_snapshot(checked(device)), frames);
  frames.symbolize();
  return segments;
}

// torch.cuda.memory._snapshot()'s dict: every device's segments (with the stacks of their live
// blocks) and, per device, the recorded events (torch/csrc/cuda/memory_snapshot.cpp's format).
py::dict memory_history_snapshot(int num_devices) {
  torch::freeDeadCapturedTracebackFrames();
  Frames frames;
  py::list segments;
  py::list device_traces;
  static const char* const kActions[] = {"alloc", "free_requested", "free_completed",
                                         "segment_alloc", "segment_free", "oom"};
  for (int device = 0; device < num_devices; ++device) {
    std::vector<rt::TraceEntry> trace;
    for (auto seg : segments_to_python(rt::memory_snapshot(checked(device), &trace), frames)) {
      segments.append(seg);
    }
    py::list events;
    for (const auto& e : trace) {
      py::dict d;
      d["action"] = kActions[e.action];
      d[e.action == rt::TraceEntry::OOM ? "device_free" : "addr"] = e.addr;
      d["size"] = e.size;
      d["stream"] = e.stream;
      d["time_us"] = e.time_us;
      d["device"] = device;
      frames.add(d, e.context);
      events.append(d);
    }
    device_traces.append(events);
  }
  frames.symbolize();
  py::dict result;
  result["segments"] = segments;
  result["device_traces"] = device_traces;
  return result;
}

std::shared_ptr<c10::GatheredContext> gather_python() {
  return torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true, /*cpp=*/false);
}
std::shared_ptr<c10::GatheredContext> gather_python_and_cpp() {
  return torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true, /*cpp=*/true);
}

// torch.cuda.memory._record_memory_history's options (torch/csrc/cuda/memory_snapshot.cpp).
void record_memory_history(const std::optional<std::string>& enabled,
                           const std::optional<std::string>& context, const std::string& stacks,
                           size_t max_entries, bool clear) {
  TORCH_CHECK(!enabled || *enabled == "state" || *enabled == "all",
              "expected enabled to be 'state', 'all', or None");
  TORCH_CHECK(!context || *context == "state" || *context == "alloc" || *context == "all",
              "expected context to be 'state', 'alloc', 'all', or None");
  TORCH_CHECK(stacks == "python" || stacks == "all", "expected stacks to be 'python', or 'all'");
  auto gather = &gather_python;
  if (enabled && stacks == "all") {
    gather = &gather_python_and_cpp;
    torch::unwind::unwind();  // warm up C++ unwinding
  }
  auto when = rt::RecordContext::NEVER;
  if (context == "all") {
    when = rt::RecordContext::ALL;
  } else if (context == "alloc") {
    when = rt::RecordContext::ALLOC;
  } else if (context == "state") {
    when = rt::RecordContext::STATE;
  }
  rt::record_history(enabled.has_value(), gather, when, enabled == "all" ? max_entries : 0, clear);
}

py::dict host_memory_stats() {
  const auto s = rt::host_allocator().get_stats();
  py::dict d;
  auto put = [&](const char* name, const c10::CachingAllocator::Stat& stat) {
    d[(std::string(name) + ".current").c_str()] = stat.current;
    d[(std::string(name) + ".peak").c_str()] = stat.peak;
    d[(std::string(name) + ".allocated").c_str()] = stat.allocated;
    d[(std::string(name) + ".freed").c_str()] = stat.freed;
  };
  put("allocations", s.allocations);
  put("allocated_bytes", s.allocated_bytes);
  put("active_requests", s.active_requests);
  put("active_bytes", s.active_bytes);
  d["num_host_alloc"] = s.num_host_alloc;
  d["num_host_free"] = s.num_host_free;
  return d;
}

py::dict device_properties(int device) {
  const auto p = rt::driver().properties(checked(device));
  py::dict d;
  d["name"] = p.name;
  d["uuid"] = p.uuid;
  d["total_memory"] = p.total_memory;
  d["multi_processor_count"] = p.multi_processor_count;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
  d["max_shared_memory_per_block"] = p.max_shared_memory_per_block;
  d["shared_memory_per_block"] = p.max_shared_memory_per_block;
  d["shared_memory_per_block_optin"] = p.shared_memory_per_block_optin;
  d["shared_memory_per_multiprocessor"] = p.shared_memory_per_multiprocessor;
  d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
  d["warp_size"] = p.warp_size;
  d["L2_cache_size"] = p.l2_cache_size;
  d["is_integrated"] = p.is_integrated;
  d["is_multi_gpu_board"] = p.is_multi_gpu_board;
  return d;
}

// torch's own bad-fork flag (torch::utils::is_device_in_bad_fork) follows the runtime's, whose
// handler was registered first (at libtorch_foo load) and so has already run in the child.
void mirror_bad_fork_into_torch() {
  if (rt::in_bad_fork()) torch::utils::set_device_in_bad_fork(at::kPrivateUse1, true);
}

}  // namespace

void add_runtime_bindings(py::module_& m) {
  m.def("_is_in_bad_fork", [] { return rt::in_bad_fork(); });
  m.def("_device_properties", &device_properties);
  m.def("_memory_stats", &memory_stats);
  m.def("_memory_snapshot", &memory_snapshot);
  m.def("_host_memory_stats", &host_memory_stats);
  m.def("_memory_history_snapshot", &memory_history_snapshot);
  m.def("_record_memory_history", &record_memory_history);
  m.def("_set_memory_fraction", [](double fraction, int device) { rt::set_memory_fraction(fraction, checked(device)); });
  m.def("_get_memory_fraction", [](int device) { return rt::memory_fraction(checked(device)); });
  m.def("_caching_allocator_alloc", [](size_t nbytes, int device, std::optional<uintptr_t> stream) {
    return reinterpret_cast<uintptr_t>(rt::raw_alloc(nbytes, checked(device), stream));
  });
  m.def("_caching_allocator_delete", [](uintptr_t ptr) { rt::raw_delete(reinterpret_cast<void*>(ptr)); });
  m.def("_mem_pool_create", [] { return rt::create_pool(); });
  m.def("_mem_pool_release", &rt::release_pool);
  m.def("_mem_pool_use_count", &rt::pool_use_count);
  m.def("_mem_pool_begin", [](int device, uint64_t id) { rt::begin_allocate_to_pool(checked(device), id); });
  m.def("_mem_pool_end", [](int device, uint64_t id) { rt::end_allocate_to_pool(checked(device), id); });
  m.def("_mem_get_info", [](int device) { return rt::allocator().getMemoryInfo(checked(device)); });
  // Streams by (id, device): the driver handle (torch.foo.Stream.foo_stream, as cuda_stream), and
  // the id torch_foo gives a handle made elsewhere (torch.foo.ExternalStream).
  m.def("_stream_handle", [](int64_t stream_id, int device) {
    return reinterpret_cast<uintptr_t>(rt::native_stream(foo_stream(stream_id, device)));
  });
  m.def("_external_stream", [](uintptr_t handle, int device) {
    return rt::external_stream(reinterpret_cast<rt::StreamHandle>(handle), checked(device)).id();
  });
  // Tests only: stops a stream until the returned function is called (runtime/stream.h).
  m.def("_hold_stream", [](int64_t stream_id, int device) { return rt::hold_stream(foo_stream(stream_id, device)); });
  pthread_atfork(nullptr, nullptr, &mirror_bad_fork_into_torch);
}

}  // namespace foo::python
