#pragma once
// Weight normalisation (weight_norm.cu): _weight_norm_interface and its backward, the fused ops
// torch.nn.utils.weight_norm and parametrizations.weight_norm reach for dim 0 (a norm per row of
// v seen as a contiguous [rows, cols] array) and for the last dim (a norm per column), as CUDA's
// and the CPU's fused kernels. Sums run in opmath_t (float for 16-bit types, double for float64).
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

struct WeightNormArgs {
  DType dtype;  // of v, g and every result; norms are opmath_t of it (float32 for 16-bit dtypes)
  int64_t rows, cols;
  bool per_row;  // dim 0: norms[r] over row r; else the last dim: norms[c] over column c
  // Forward: w = v * (g / norms), norms = ||v|| (rows or columns).
  const void* v;
  const void* g;
  void* w;
  void* norms;
  // Backward (norms read): grad_g = sum(grad_w * v) / norms,
  // grad_v = (g / norms) * grad_w - (g / norms) * grad_g / norms * v.
  const void* grad_w;
  void* grad_v;
  void* grad_g;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, weight_norm_forward, (Stream stream, const WeightNormArgs& a))
FOO_DECLARE_KERNEL(void, weight_norm_backward, (Stream stream, const WeightNormArgs& a))
