// foo_pkg::scaled_add(a, b, alpha) = a + alpha * b: TensorIterator decides the output's shape
// (broadcast) and dtype (promotion); run_elementwise hands the kernel its geometry.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <torch/library.h>
#include <torch_foo/extension.h>

FOO_DECLARE_KERNEL_IN(foo_scaled_add, void, scaled_add,
                      (torch_foo::Stream stream, torch_foo::DType dtype, const torch_foo::ElementwiseGeometry& g,
                       double alpha))

namespace {

at::Tensor scaled_add(const at::Tensor& a, const at::Tensor& b, double alpha) {
  const c10::DeviceGuard guard(a.device());
  at::Tensor out;
  auto iter = at::TensorIterator::binary_op(out, a, b);
  // NotImplementedError naming the op and dtype for one the kernel has no case for (complex, ...).
  torch_foo::check_kernel_dtype("foo_pkg::scaled_add", iter.common_dtype(), torch_foo::kNumericTypes);
  const torch_foo::DType dtype = torch_foo::kernel_dtype(iter.common_dtype());
  torch_foo::run_elementwise(iter, [&](torch_foo::Stream stream, const torch_foo::ElementwiseGeometry& g) {
    FOO_CALL_KERNEL_IN(foo_scaled_add, scaled_add, stream, dtype, g, alpha);
  });
  return iter.output();
}

}  // namespace

TORCH_LIBRARY(foo_pkg, m) { m.def("scaled_add(Tensor a, Tensor b, float alpha=1) -> Tensor"); }

TORCH_LIBRARY_IMPL(foo_pkg, PrivateUse1, m) { m.impl("scaled_add", &scaled_add); }
