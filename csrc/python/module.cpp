// torch_foo._C: the thin extension. Loading it loads libtorch_foo, whose static initialisers
// register the device (rename, guard, hooks, allocator, ops); this file only adds the Python
// functions listed in docs/INTERFACES.md and the generated custom-op bindings (`_C._ops`).
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include "aten/fallback.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/driver/driver.h"
#include "runtime/generator.h"

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

py::dict memory_stats(int device) {
  const auto s = rt::memory_stats(checked(device));
  py::dict d;
  d["allocated"] = s.allocated;
  d["reserved"] = s.reserved;
  d["peak_allocated"] = s.peak_allocated;
  d["peak_reserved"] = s.peak_reserved;
  d["num_allocs"] = s.num_allocs;
  d["num_frees"] = s.num_frees;
  d["num_device_allocs"] = s.num_device_allocs;
  d["num_device_frees"] = s.num_device_frees;
  return d;
}

py::dict device_properties(int device) {
  const auto p = rt::driver().properties(checked(device));
  py::dict d;
  d["name"] = p.name;
  d["total_memory"] = p.total_memory;
  d["multi_processor_count"] = p.multi_processor_count;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["max_shared_memory_per_block"] = p.max_shared_memory_per_block;
  d["warp_size"] = p.warp_size;
  return d;
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
  m.def("_memory_stats", &memory_stats);
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
}
