// torch_foo._C: the thin extension. Loading it loads libtorch_foo, whose static initialisers
// register the device (rename, guard, hooks, allocator, ops); this file only adds the Python
// functions listed in docs/INTERFACES.md and the generated custom-op bindings (`_C._ops`).
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include "aten/core/call_counts.h"
#include "aten/glue/fallback.h"
#include "python/bindings.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/device_error.h"
#include "runtime/driver/driver.h"
#include "runtime/generator.h"
#include "runtime/profiler.h"
#include "runtime/sync_debug.h"
#include "sim/fast_paths.h"

namespace foo::python {
PyMethodDef* custom_op_methods();  // generated/FooPythonOps.cpp

c10::DeviceIndex checked(int device) {
  foo::runtime::check_device_index(static_cast<c10::DeviceIndex>(device));
  return static_cast<c10::DeviceIndex>(device);
}
}  // namespace foo::python

namespace {

namespace py = pybind11;
namespace rt = foo::runtime;
using foo::python::checked;

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
  m.def("_profiler_traces_device_kernels", [] { return rt::profiler_traces_device_kernels(); });
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
    rt::raise_device_error_after_device_wait(index);  // a kernel's bad-input report (runtime/device_error.h)
  });
  m.def("_set_sync_debug_mode", [](int mode) {
    TORCH_CHECK(mode >= 0 && mode <= 2, "invalid value of debug_mode, expected one of 0 (default), 1 (warn), 2 (error), got ", mode);
    rt::set_sync_debug_mode(static_cast<rt::SyncDebugMode>(mode));
  });
  m.def("_get_sync_debug_mode", [] { return static_cast<int>(rt::sync_debug_mode()); });
  m.def("_reset_peak_memory_stats", [](int device) { rt::allocator().resetPeakStats(checked(device)); });
  m.def("_empty_cache", [] { rt::allocator().emptyCache({0, 0}); });
  m.def("_default_generator", [](int device) {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(rt::default_generator(checked(device))));
  });
  m.def("_fallback_report", [] {
    py::dict d;
    for (const auto& [op, count] : foo::native::fallback_report()) d[py::str(op)] = count;
    return d;
  });
  m.def("_reset_fallback_report", &foo::native::reset_fallback_report);
  m.def("_call_counts", [] {
    py::dict d;  // kernel -> calls through its generated wrappers (a kernel may have several)
    for (const auto& [kernel, calls] : foo::native::call_counts()) {
      const py::str key(kernel);
      d[key] = (d.contains(key) ? d[key].cast<int64_t>() : 0) + calls;
    }
    return d;
  });
  m.def("_set_fallback_policy", &foo::native::set_fallback_policy);
  m.def("_get_fallback_policy", &foo::native::fallback_policy_name);
  m.def("_set_sim_only_paths", &foo::sim::set_sim_only_paths);
  m.def("_sim_only_paths", &foo::sim::sim_only_paths);
  foo::python::add_runtime_bindings(m);
  foo::python::add_distributed_bindings(m);
  add_custom_ops(m);
}
