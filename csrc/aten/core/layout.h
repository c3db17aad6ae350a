#pragma once
// Host side of kernels/core/layout.h: where a tensor's logical elements live, for kernels that write
// (or read) a strided tensor in place.
#include <optional>
#include <utility>

#include <ATen/ATen.h>

#include "aten/core/kernel_dtype.h"
#include "kernels/core/layout.h"

namespace foo::native {

// The layout of t with size-1 dims dropped and mergeable neighbours merged (row-major order of
// the logical index is kept); nullopt when more than kLayoutMaxDims dims remain.
inline std::optional<foo::kernels::Layout> layout_of(const at::Tensor& t) {
  foo::kernels::Layout layout;
  if (t.is_contiguous()) return layout;
  int ndim = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {  // innermost first
    const int64_t size = t.size(d), stride = t.stride(d);
    if (size == 1) continue;
    if (ndim > 0 && stride == layout.strides[ndim - 1] * layout.sizes[ndim - 1]) {
      layout.sizes[ndim - 1] *= size;  // merges with the dim inside it
      continue;
    }
    if (ndim == foo::kernels::kLayoutMaxDims) return std::nullopt;
    layout.sizes[ndim] = size;
    layout.strides[ndim] = stride;
    ++ndim;
  }
  if (ndim == 1 && layout.strides[0] == 1) ndim = 0;  // contiguous after all
  layout.ndim = ndim;
  return layout;
}

// Runs write(target, layout) on out in place, or, when out's layout has too many dims for the
// kernels, on a contiguous temporary that is then copied into out. Returns out.
template <typename Write>
at::Tensor& write_in_place(at::Tensor& out, Write&& write) {
  if (auto layout = layout_of(out)) {
    write(out, *layout);
  } else {
    auto tmp = at::empty(out.sizes(), out.options());
    write(tmp, foo::kernels::Layout{});
    out.copy_(tmp);
  }
  return out;
}

// t itself when layout_of can describe it, else a contiguous copy; with its layout (for reading).
inline std::pair<at::Tensor, foo::kernels::Layout> readable_layout(const at::Tensor& t) {
  if (auto layout = layout_of(t)) return {t, *layout};
  return {t.contiguous(), foo::kernels::Layout{}};
}

}  // namespace foo::native
