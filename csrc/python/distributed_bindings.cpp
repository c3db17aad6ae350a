// torch_foo._C._distributed: the fooccl backend and its Work, as subclasses of c10d's Python types
// (so a Work returned by torch.distributed is a FooWork with a description).
#include <pybind11/chrono.h>

#include "distributed/backend.h"
#include "python/bindings.h"

namespace foo::python {

void add_distributed_bindings(pybind11::module_& m) {
  namespace py = pybind11;
  namespace fd = foo::distributed;
  py::module_::import("torch.distributed");  // c10d's Backend and Work types must exist first
  auto sub = m.def_submodule("_distributed", "fooccl, the c10d backend of foo (torch_foo/distributed.py)");

  py::class_<fd::FooWork, c10d::Work, c10::intrusive_ptr<fd::FooWork>>(sub, "FooWork")
      .def_property_readonly("description", &fd::FooWork::description,
                             "Which collective, on which device, run by which engine")
      .def("__repr__", [](const fd::FooWork& w) { return "<FooWork: " + w.description() + ">"; });

  py::class_<fd::FooBackend, c10d::Backend, c10::intrusive_ptr<fd::FooBackend>>(sub, "FooBackend")
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& engine_backend, const std::string& engine, int rank,
                       int size, std::chrono::milliseconds timeout) {
             std::unique_ptr<fd::Engine> e;
             if (engine == "gloo") {
               e = fd::make_gloo_engine(engine_backend);
             } else if (engine == "nccl") {
               e = fd::make_nccl_engine(engine_backend);
             } else {
               TORCH_CHECK(false, "fooccl: unknown engine '", engine, "' (gloo or nccl)");
             }
             return c10::make_intrusive<fd::FooBackend>(std::move(e), rank, size, timeout);
           }),
           py::arg("engine_backend"), py::arg("engine"), py::arg("rank"), py::arg("size"), py::arg("timeout"))
      .def_property_readonly("engine", &fd::FooBackend::engine_name, "The collective engine: 'gloo' or 'nccl'");
}

}  // namespace foo::python
