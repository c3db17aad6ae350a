// The host side: checks, output allocation, the launch on torch's current foo stream, and a
// pybind11 binding (the classic extension shape).
#include <torch/extension.h>
#include <torch_foo/extension.h>

FOO_DECLARE_KERNEL_IN(addone, void, add_one, (torch_foo::Stream stream, const float* x, float* y, int64_t n))

torch::Tensor add_one(const torch::Tensor& x) {
  TORCH_CHECK(x.device().type() == c10::DeviceType::PrivateUse1, "add_one: expected a foo tensor, got ", x.device());
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "add_one: expected float32, got ", x.scalar_type());
  const c10::DeviceGuard guard(x.device());
  const torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  FOO_CALL_KERNEL_IN(addone, add_one, torch_foo::current_stream(xc), xc.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), xc.numel());
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one, "y = x + 1 on the foo device"); }
