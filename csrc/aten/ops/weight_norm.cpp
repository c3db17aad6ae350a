// _weight_norm_interface and its backward (kernels/ops/weight_norm.h): what torch.nn.utils.weight_norm
// and parametrizations.weight_norm reach through ATen's _weight_norm for dim 0 or the last dim
// (other dims, and float16 on every device, take _weight_norm's composite of native ops). The
// CPU's checks and result dtypes: norms in float32 for 16-bit inputs (as CUDA), w and the
// gradients contiguous.
#include <ATen/ATen.h>
#include <ATen/OpMathType.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/weight_norm.h"
#include "native/weight_norm_interface.h"
#include "native/weight_norm_interface_backward.h"

namespace foo::native {
namespace {

// v as [rows, cols]: dim 0 normalises rows (one per g element), the last dim columns.
foo::kernels::WeightNormArgs shape_args(const at::Tensor& v, const at::Tensor& g, int64_t dim, const char* op) {
  check_kernel_dtype(op, v.scalar_type(), foo::kernels::kFloatingTypes);
  TORCH_CHECK(g.scalar_type() == v.scalar_type(), op, ": expected g of dtype ", v.scalar_type(), ", got ",
              g.scalar_type());
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1, "fused kernels can only be applied for first or last dim");
  foo::kernels::WeightNormArgs a{};
  a.dtype = kernel_dtype(v.scalar_type());
  a.per_row = dim == 0;
  const int64_t n = v.dim() == 0 ? 1 : v.size(dim);
  a.rows = a.per_row ? n : (n == 0 ? 0 : v.numel() / n);
  a.cols = a.per_row ? (n == 0 ? 0 : v.numel() / n) : n;
  TORCH_CHECK(g.numel() == n, op, ": expected g with ", n, " elements (v's size at dim ", dim, "), got ", g.sizes());
  return a;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> weight_norm_interface(const at::Tensor& v, const at::Tensor& g, int64_t dim) {
  foo::kernels::WeightNormArgs a = shape_args(v, g, dim, "weight_norm");
  const at::Tensor vc = v.contiguous(), gc = g.contiguous();
  at::Tensor w = at::empty_like(vc, at::MemoryFormat::Contiguous);
  at::Tensor norms = at::empty(g.sizes(), g.options().dtype(at::toOpMathType(g.scalar_type())));
  a.v = vc.const_data_ptr();
  a.g = gc.const_data_ptr();
  a.w = w.mutable_data_ptr();
  a.norms = norms.mutable_data_ptr();
  FOO_CALL_KERNEL(weight_norm_forward, stream_of(v), a);
  return {w, norms};
}

std::tuple<at::Tensor, at::Tensor> weight_norm_interface_backward(const at::Tensor& grad_w, const at::Tensor& saved_v,
                                                                  const at::Tensor& saved_g,
                                                                  const at::Tensor& saved_norms, int64_t dim) {
  // The CPU's checks: weight_norm records this op with contiguous v and g.
  TORCH_CHECK(saved_v.is_contiguous(), "saved_v must be contiguous");
  TORCH_CHECK(saved_g.is_contiguous(), "saved_g must be contiguous");
  TORCH_CHECK(saved_norms.is_contiguous(), "saved_norm must be contiguous");
  foo::kernels::WeightNormArgs a = shape_args(saved_v, saved_g, dim, "weight_norm_backward");
  TORCH_CHECK(saved_norms.scalar_type() == at::toOpMathType(saved_g.scalar_type()) && saved_norms.numel() == saved_g.numel(),
              "weight_norm_backward: saved_norms of dtype ", at::toOpMathType(saved_g.scalar_type()), " and ",
              saved_g.numel(), " elements expected, got ", saved_norms.scalar_type(), " ", saved_norms.sizes());
  TORCH_CHECK(grad_w.sizes() == saved_v.sizes() && grad_w.scalar_type() == saved_v.scalar_type(),
              "weight_norm_backward: grad_w must match saved_v");
  const at::Tensor gw = grad_w.contiguous();
  at::Tensor grad_v = at::empty_like(saved_v, at::MemoryFormat::Contiguous);
  at::Tensor grad_g = at::empty_like(saved_g, at::MemoryFormat::Contiguous);
  a.v = saved_v.const_data_ptr();
  a.g = saved_g.const_data_ptr();
  a.norms = const_cast<void*>(saved_norms.const_data_ptr());
  a.grad_w = gw.const_data_ptr();
  a.grad_v = grad_v.mutable_data_ptr();
  a.grad_g = grad_g.mutable_data_ptr();
  FOO_CALL_KERNEL(weight_norm_backward, stream_of(grad_w), a);
  return {grad_v, grad_g};
}

}  // namespace foo::native
