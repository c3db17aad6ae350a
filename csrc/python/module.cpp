// torch_foo._C: the thin extension. Loading it loads libtorch_foo, whose static initialisers
// register the device (rename, guard, hooks, allocator, ops); this file only adds the Python
// functions listed in docs/INTERFACES.md and the generated custom-op bindings (`_C._ops`).
#include <pthread.h>

#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <pybind11/functional.h>
#include <torch/csrc/utils/pybind.h>

#include "aten/fallback.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/driver/driver.h"
#include "runtime/fork.h"
#include "runtime/generator.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

namespace foo::python {
PyMethodDef* custom_op_methods();  // generated/FooPythonOps.cpp
}

namespace {

namespace py = pybind11;
namespace rt = foo::runtime;

c10::DeviceIndex checked(int device) {
  rt::check_device_index(static_cast<c10::DeviceIndex>(device));
  return static_cast<c10::DeviceIndex>(device);
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

void add_custom_ops(py::module_& m) {
  auto ops = m.def_submodule("_ops", "Generated bindings of the foo custom ops (see yaml/ops.yaml)");
  if (PyModule_AddFunctions(ops.ptr(), foo::python::custom_op_methods()) != 0) throw py::error_already_set();
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_foo native extension";
  m.def("_driver", [] {
    rt::lazy_init();
    return std::string(rt::driver().name());
  });
  m.def("_is_built_with_cuda", [] { return rt::built_with_cuda(); });
  m.def("_device_count", [] { return static_cast<int>(rt::device_count()); });
  m.def("_is_initialized", [] { return rt::is_initialized(); });
  m.def("_lazy_init", [] { rt::lazy_init(); });
  m.def("_current_device", [] { return static_cast<int>(rt::current_device()); });
  m.def("_set_device", [](int device) { rt::set_device(checked(device)); });
  m.def("_exchange_device", [](int device) {
    const auto previous = rt::current_device();
    if (device >= 0) rt::set_device(checked(device));
    return static_cast<int>(previous);
  });
  m.def("_synchronize", [](int device) {
    const auto index = checked(device);
    py::gil_scoped_release no_gil;  // a long queue must not stall other Python threads
    rt::driver().synchronize_device(index);
  });
  m.def("_is_in_bad_fork", [] { return rt::in_bad_fork(); });
  // Streams by (id, device): the driver handle (torch.foo.Stream.foo_stream, as cuda_stream), and
  // the id torch_foo gives a handle made elsewhere (torch.foo.ExternalStream).
  m.def("_stream_handle", [](int64_t stream_id, int device) {
    const c10::Stream stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, checked(device)),
                             stream_id);
    return reinterpret_cast<uintptr_t>(rt::native_stream(stream));
  });
  m.def("_hold_stream", [](int64_t stream_id, int device) {  // tests: returns the release function
    return rt::hold_stream(
        c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, checked(device)), stream_id));
  });
  m.def("_external_stream", [](uintptr_t handle, int device) {
    return rt::external_stream(reinterpret_cast<rt::StreamHandle>(handle), checked(device)).id();
  });
  m.def("_memory_stats", &memory_stats);
  m.def("_memory_snapshot", &memory_snapshot);
  m.def("_host_memory_stats", &host_memory_stats);
  m.def("_mem_get_info", [](int device) { return rt::allocator().getMemoryInfo(checked(device)); });
  m.def("_reset_peak_memory_stats", [](int device) { rt::allocator().resetPeakStats(checked(device)); });
  m.def("_empty_cache", [] { rt::allocator().emptyCache({0, 0}); });
  m.def("_default_generator", [](int device) {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(rt::default_generator(checked(device))));
  });
  m.def("_device_properties", &device_properties);
  m.def("_fallback_report", [] {
    py::dict d;
    for (const auto& [op, count] : foo::native::fallback_report()) d[py::str(op)] = count;
    return d;
  });
  m.def("_reset_fallback_report", &foo::native::reset_fallback_report);
  m.def("_set_fallback_policy", &foo::native::set_fallback_policy);
  m.def("_get_fallback_policy", &foo::native::fallback_policy_name);
  add_custom_ops(m);
  pthread_atfork(nullptr, nullptr, &mirror_bad_fork_into_torch);
}
