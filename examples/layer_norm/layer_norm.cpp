// Host side of the fused layer norm, registered as a torch operator (no pybind11): after loading
// the library, torch.ops.foo_ext.layer_norm_rows(x, weight, bias, eps) runs it on foo tensors.
#include <ATen/ATen.h>
#include <torch/library.h>
#include <torch_foo/extension.h>

FOO_DECLARE_KERNEL_IN(layer_norm, void, layer_norm_rows,
                      (torch_foo::Stream stream, const float* x, const float* weight, const float* bias, float* y,
                       int64_t rows, int64_t cols, float eps))

namespace {

at::Tensor layer_norm_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  TORCH_CHECK(x.dim() >= 1, "foo_ext::layer_norm_rows: x must have at least one dimension");
  const int64_t cols = x.size(-1);
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == cols && bias.dim() == 1 && bias.size(0) == cols,
              "foo_ext::layer_norm_rows: weight and bias must have shape [", cols, "]");
  for (const at::Tensor* t : {&x, &weight, &bias}) {
    TORCH_CHECK(t->scalar_type() == at::kFloat, "foo_ext::layer_norm_rows: expected float32, got ", t->scalar_type());
    TORCH_CHECK(t->device() == x.device(), "foo_ext::layer_norm_rows: all tensors must be on ", x.device());
  }
  const c10::DeviceGuard guard(x.device());
  const at::Tensor xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
  at::Tensor y = at::empty_like(xc);
  FOO_CALL_KERNEL_IN(layer_norm, layer_norm_rows, torch_foo::current_stream(xc), xc.const_data_ptr<float>(),
                     wc.const_data_ptr<float>(), bc.const_data_ptr<float>(), y.mutable_data_ptr<float>(),
                     xc.numel() / cols, cols, static_cast<float>(eps));
  return y;
}

}  // namespace

TORCH_LIBRARY(foo_ext, m) { m.def("layer_norm_rows(Tensor x, Tensor weight, Tensor bias, float eps) -> Tensor"); }

TORCH_LIBRARY_IMPL(foo_ext, PrivateUse1, m) { m.impl("layer_norm_rows", &layer_norm_rows); }
