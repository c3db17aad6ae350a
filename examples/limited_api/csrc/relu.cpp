// The host side through the stable ABI only: torch/csrc/stable (STABLE_TORCH_LIBRARY,
// torch::stable::Tensor, DeviceGuard, getCurrentStream) for torch, torch_foo/c_abi.h for the foo
// device, and Python's Limited API for the module. No c10/ATen/pybind11 symbol is used, so the
// binary depends on neither torch's C++ ABI nor the Python version (docs/extensions.md).
#include <Python.h>  // with Py_LIMITED_API (set by setup.py)

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

#include <string>

#include <torch_foo/c_abi.h>
#include "kernels/core/dispatch.h"  // FOO_DECLARE_KERNEL_IN only: declarations, no torch_foo C++ call

FOO_DECLARE_KERNEL_IN(foo_stable, void, relu, (void* stream, const float* x, float* y, int64_t n))

namespace {

void check(int32_t status) { STD_TORCH_CHECK(status == 0, "foo_stable: ", torch_foo_last_error()); }

torch::stable::Tensor relu(torch::stable::Tensor x) {
  STD_TORCH_CHECK(x.scalar_type() == torch::headeronly::ScalarType::Float, "foo_stable::relu: expected float32");
  x = torch::stable::contiguous(x);
  const auto device = x.get_device_index();
  torch::stable::accelerator::DeviceGuard guard(device);
  torch::stable::Tensor y = torch::stable::empty_like(x);
  void* stream = nullptr;
  check(torch_foo_native_stream(device, torch::stable::accelerator::getCurrentStream(device).id(), &stream));
  const auto* in = static_cast<const float*>(x.data_ptr());
  auto* out = static_cast<float*>(y.mutable_data_ptr());
  if (torch_foo_on_cuda()) {
#ifdef FOO_WITH_CUDA
    foo_stable::cuda::relu(stream, in, out, x.numel());
#else
    STD_TORCH_CHECK(false, "foo_stable: built without the cuda target, but the cuda driver runs");
#endif
  } else {
    foo_stable::sim::relu(stream, in, out, x.numel());
  }
  return y;
}

}  // namespace

STABLE_TORCH_LIBRARY(foo_stable, m) { m.def("relu(Tensor x) -> Tensor"); }

STABLE_TORCH_LIBRARY_IMPL(foo_stable, PrivateUse1, m) { m.impl("relu", TORCH_BOX(&relu)); }

// The module itself: importing foo_stable._C loads this library, which registers the op.
extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "foo_stable ops (torch.ops.foo_stable)", -1, nullptr};
  return PyModule_Create(&module);
}
