// torch_foo._C._Graph: the C++ half of torch.foo.FooGraph (runtime/graph.h); torch_foo/graphs.py
// wraps it with torch.cuda.CUDAGraph's Python API.
#include <optional>
#include <string>

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "python/bindings.h"
#include "runtime/allocator.h"
#include "runtime/graph.h"

namespace foo::python {
namespace {

namespace py = pybind11;
namespace rt = foo::runtime;

rt::CaptureMode capture_mode(const std::string& mode) {
  if (mode == "global") return rt::CaptureMode::Global;
  if (mode == "thread_local") return rt::CaptureMode::ThreadLocal;
  if (mode == "relaxed") return rt::CaptureMode::Relaxed;
  TORCH_CHECK_VALUE(false, "capture_error_mode must be one of \"global\", \"thread_local\", \"relaxed\", got \"",
                    mode, "\"");
}

}  // namespace

void add_graph_bindings(py::module_& m) {
  py::class_<rt::Graph>(m, "_Graph")
      .def(py::init<>())
      .def(
          "capture_begin",
          [](rt::Graph& g, std::optional<uint64_t> pool, const std::string& mode) {
            g.capture_begin(pool, capture_mode(mode));
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "global")
      // Ending a capture and resetting may wait for the device (a pool's last use frees its blocks).
      .def("capture_end", &rt::Graph::capture_end, py::call_guard<py::gil_scoped_release>())
      .def("replay", &rt::Graph::replay, py::call_guard<py::gil_scoped_release>())
      .def("reset", &rt::Graph::reset, py::call_guard<py::gil_scoped_release>())
      .def("pool", &rt::Graph::pool)
      .def("capturing", &rt::Graph::capturing)
      .def("size", &rt::Graph::size);
  // graph_pool_handle(): a pool no graph uses yet; it lives while graphs use it.
  m.def("_is_current_stream_capturing", [](int device) { return rt::current_stream_capturing(checked(device)); });
  m.def("_graph_pool_create", [] { return rt::create_pool(/*initial_uses=*/0); });
}

}  // namespace foo::python
