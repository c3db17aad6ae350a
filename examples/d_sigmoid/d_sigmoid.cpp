// Host side of d_sigmoid: two pybind11 functions; d_sigmoid.py wraps them in an autograd.Function.
#include <torch/extension.h>
#include <torch_foo/extension.h>

FOO_DECLARE_KERNEL_IN(d_sigmoid, void, forward,
                      (torch_foo::Stream stream, torch_foo::DType dtype, const void* x, void* y, int64_t n))
FOO_DECLARE_KERNEL_IN(d_sigmoid, void, backward,
                      (torch_foo::Stream stream, torch_foo::DType dtype, const void* grad, const void* x,
                       void* grad_x, int64_t n))

namespace {

void check_foo(const torch::Tensor& t, const char* what) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "d_sigmoid: ", what, " must be a foo tensor, got ",
              t.device());
}

torch::Tensor forward(const torch::Tensor& x) {
  check_foo(x, "x");
  const c10::DeviceGuard guard(x.device());
  const torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  FOO_CALL_KERNEL_IN(d_sigmoid, forward, torch_foo::current_stream(xc), torch_foo::kernel_dtype(xc),
                     xc.const_data_ptr(), y.mutable_data_ptr(), xc.numel());
  return y;
}

torch::Tensor backward(const torch::Tensor& grad, const torch::Tensor& x) {
  check_foo(grad, "grad");
  check_foo(x, "x");
  TORCH_CHECK(grad.sizes() == x.sizes() && grad.scalar_type() == x.scalar_type(),
              "d_sigmoid.backward: grad and x must have the same shape and dtype");
  const c10::DeviceGuard guard(x.device());
  const torch::Tensor gc = grad.contiguous(), xc = x.contiguous();
  torch::Tensor grad_x = torch::empty_like(xc);
  FOO_CALL_KERNEL_IN(d_sigmoid, backward, torch_foo::current_stream(xc), torch_foo::kernel_dtype(xc),
                     gc.const_data_ptr(), xc.const_data_ptr(), grad_x.mutable_data_ptr(), xc.numel());
  return grad_x;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward, "sigmoid(x) on the foo device");
  m.def("backward", &backward, "grad * sigmoid'(x) on the foo device");
}
