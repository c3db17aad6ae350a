#pragma once
// Where the elements of a (possibly non-contiguous) tensor live: a kernel that writes logical
// element i (row-major order over the tensor's sizes) writes data[offset_of(layout, i)]. This
// lets a fill write a strided view in place instead of filling a contiguous temporary and
// copying it. (Elementwise ops use the general strided launcher, kernels/core/elementwise.cuh; the
// fills keep this logical-index contract.)
#include <cstdint>

#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int kLayoutMaxDims = 16;

struct Layout {
  int32_t ndim = 0;           // 0: contiguous (offset == i); else the dims below
  int64_t sizes[kLayoutMaxDims] = {};    // innermost dimension first
  int64_t strides[kLayoutMaxDims] = {};  // in elements
};

FOO_HD int64_t offset_of(const Layout& layout, int64_t i) {
  if (layout.ndim == 0) return i;
  int64_t offset = 0;
  for (int d = 0; d < layout.ndim; ++d) {
    const int64_t size = layout.sizes[d];
    const int64_t q = i / size;
    offset += (i - q * size) * layout.strides[d];
    i = q;
  }
  return offset;
}

}  // namespace foo::kernels
