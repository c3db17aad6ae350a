#pragma once
// cdist (distance.cu): p-norm distances between the rows of two batched matrices, and the
// gradient with respect to the first, with the per-order formulas of ATen's CPU kernels
// (DistanceOpsKernel.cpp). Every operand is contiguous and of `dtype`.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {
struct CdistArgs {
  const void* x1;  // [batch, r1, m]
  const void* x2;  // [batch, r2, m]
  int64_t batch, r1, r2, m;
  double p;  // >= 0; 0 counts nonzeros, infinity takes the max
};
}  // namespace foo::kernels

// dist [batch, r1, r2]: dist[b, i, j] = || x1[b, i] - x2[b, j] ||_p
FOO_DECLARE_KERNEL(void, cdist_forward, (Stream, DType dtype, const CdistArgs& args, void* dist))
// grad_x1 [batch, r1, m] = sum_j grad[b, i, j] * d dist[b, i, j] / d x1[b, i, k]
// (grad and dist: [batch, r1, r2])
FOO_DECLARE_KERNEL(void, cdist_backward,
                   (Stream, DType dtype, const CdistArgs& args, const void* grad, const void* dist, void* grad_x1))
