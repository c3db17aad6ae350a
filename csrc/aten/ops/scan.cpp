// cumsum and cumprod (kernels/ops/scan.cu). ATen's meta functions decide the result's dtype (integral
// inputs promote to int64) and shape; the impl scans the input cast to that dtype, as the CPU
// does, seen as a contiguous [outer, size, inner] array.
#include <ATen/ATen.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>

#include "aten/core/layout.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/scan.h"
#include "native/cumprod_out.h"
#include "native/cumsum_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::ScanOp;

// ATen's impl_func_cum_ops.
void cumulative_impl(ScanOp op, const at::Tensor& self, int64_t dim, const at::Tensor& result) {
  if (self.dim() == 0) {
    result.fill_(self);
    return;
  }
  if (self.numel() == 0) {
    result.zero_();
    return;
  }
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor input = self.to(result.scalar_type()).contiguous();
  const at::Tensor target = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  FOO_CALL_KERNEL(scan, stream_of(self), op,
                  kernel_dtype(result.scalar_type()), input.const_data_ptr(), target.mutable_data_ptr(), outer,
                  self.size(dim), inner);
  if (!target.is_same(result)) result.copy_(target);
}

}  // namespace

TORCH_IMPL_FUNC(cumsum_out)(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> /*dtype*/,
                            const at::Tensor& out) {
  cumulative_impl(ScanOp::Sum, self, dim, out);
}

TORCH_IMPL_FUNC(cumprod_out)(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> /*dtype*/,
                             const at::Tensor& out) {
  cumulative_impl(ScanOp::Prod, self, dim, out);
}

}  // namespace foo::native
