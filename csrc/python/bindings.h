#pragma once
// Shared by the torch_foo._C sources.
#include <c10/core/Device.h>
#include <torch/csrc/utils/pybind.h>

namespace foo::python {

// `device` as a foo device index; throws naming the index and the device count when invalid.
c10::DeviceIndex checked(int device);

// _device_properties, memory statistics, streams, bad-fork state (runtime_bindings.cpp).
void add_runtime_bindings(pybind11::module_& m);

// _Graph, torch.foo.FooGraph's C++ half, and graph pools (graph_bindings.cpp).
void add_graph_bindings(pybind11::module_& m);

// _distributed: the fooccl c10d backend and its Work (distributed_bindings.cpp).
void add_distributed_bindings(pybind11::module_& m);

}  // namespace foo::python
