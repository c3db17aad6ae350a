// sort (stable or not: one total, stable order; argsort and msort reach it) and topk
// (kernels/ops/sort.cu). The sorted dim is moved last and copied into a dense [rows, n] buffer the
// kernel sorts in place along with the original positions; the results are copied out through
// the inverse permutation. topk sorts the whole row and keeps the first k (largest first when
// `largest`); sorted=False returns them sorted too.
#include <ATen/ATen.h>
#include <ATen/ops/sort_meta.h>
#include <ATen/ops/topk_meta.h>

#include "aten/core/layout.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/sort.h"
#include "native/sort_stable_out.h"
#include "native/topk_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

// The rows of `self` along `dim`, sorted: keys and original positions, dims in `self`'s order
// but `dim` last.
std::pair<at::Tensor, at::Tensor> sorted_rows(const at::Tensor& self, int64_t dim, bool descending) {
  const at::Tensor moved = self.movedim(dim, -1);
  at::Tensor keys = at::empty(moved.sizes(), self.options());
  keys.copy_(moved);
  at::Tensor positions = at::empty(moved.sizes(), self.options().dtype(at::kLong));
  const int64_t n = self.size(dim), rows = n == 0 ? 0 : self.numel() / n;
  at::Tensor scratch_keys, scratch_positions;
  if (n > foo::kernels::kSortTile) {
    scratch_keys = at::empty_like(keys);
    scratch_positions = at::empty_like(positions);
  }
  FOO_CALL_KERNEL(sort_rows, stream_of(self),
                  kernel_dtype(self.scalar_type()), keys.mutable_data_ptr(), positions.mutable_data_ptr<int64_t>(),
                  scratch_keys.defined() ? scratch_keys.mutable_data_ptr() : nullptr,
                  scratch_positions.defined() ? scratch_positions.mutable_data_ptr<int64_t>() : nullptr, rows, n,
                  descending);
  return {keys, positions};
}

void sort_impl(const at::Tensor& self, int64_t dim, bool descending, const at::Tensor& values,
               const at::Tensor& indices) {
  if (self.dim() == 0 && self.numel() == 1) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  if (self.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  auto [keys, positions] = sorted_rows(self, dim, descending);
  values.copy_(keys.movedim(-1, dim));
  indices.copy_(positions.movedim(-1, dim));
}

void topk_impl(const at::Tensor& self, int64_t k, int64_t dim, bool largest, const at::Tensor& values,
               const at::Tensor& indices) {
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(dim) : 1), "selected index k out of range");
  if (self.dim() == 0 && self.numel() == 1) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  if (k == 0 || self.numel() == 0) return;
  auto [keys, positions] = sorted_rows(self, dim, /*descending=*/largest);
  values.copy_(keys.narrow(-1, 0, k).movedim(-1, dim));
  indices.copy_(positions.narrow(-1, 0, k).movedim(-1, dim));
}

}  // namespace

TORCH_IMPL_FUNC(sort_stable_out)(const at::Tensor& self, std::optional<bool> /*stable*/, int64_t dim, bool descending,
                                 const at::Tensor& values, const at::Tensor& indices) {
  sort_impl(self, dim, descending, values, indices);
}

TORCH_IMPL_FUNC(topk_out)(const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool /*sorted*/,
                          const at::Tensor& values, const at::Tensor& indices) {
  topk_impl(self, k, dim, largest, values, indices);
}

}  // namespace foo::native
