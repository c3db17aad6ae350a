// The Python side of the runtime's device queries, memory statistics and streams (called from
// module.cpp; listed in docs/INTERFACES.md).
#include <pthread.h>

#include <pybind11/functional.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/csrc/utils/pybind.h>

#include "python/bindings.h"
#include "runtime/allocator.h"
#include "runtime/driver/driver.h"
#include "runtime/fork.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

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

// torch.cuda.memory_snapshot()'s segment format.
py::list memory_snapshot(int device) {
  py::list segments;
  for (const auto& seg : rt::memory_snapshot(checked(device))) {
    py::list blocks;
    size_t offset = 0;
    for (const auto& b : seg.blocks) {
      py::dict block;
      block["address"] = seg.address + offset;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
      block["frames"] = py::list();
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
    d["segment_pool_id"] = py::make_tuple(0, 0);
    d["is_expandable"] = false;
    d["frames"] = py::list();
    d["blocks"] = blocks;
    segments.append(d);
  }
  return segments;
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
