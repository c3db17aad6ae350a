#pragma once
// Matrix products: a register-tiled shared-memory GEMM (mm, bmm, addmm) and a GEMV (addmv, dot).
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/scalar_arg.h"

namespace foo::kernels {

// A matrix operand as the kernels see it: element (b, i, j) of a batch of matrices is
// data[b * batch_stride + i * row_stride + j * col_stride]. Strides are in elements and may be
// anything (transposed and sliced views need no copy; 0 broadcasts, e.g. a bias vector).
struct MatrixRef {
  const void* data;
  int64_t batch_stride, row_stride, col_stride;
};
struct MutableMatrixRef {
  void* data;
  int64_t batch_stride, row_stride, col_stride;
};

// d[b] = alpha * a[b] @ b[b] + beta * c[b] for b < batch, a[b]: m x k, b[b]: k x n, c[b] and
// d[b]: m x n, all of element type `dtype` (float32, float64, float16, bfloat16, or an integer
// type: uint8, int8/16/32/64), accumulated in float (16-bit types), the type itself (float32/64),
// or, for integers, exactly modulo 2^bits (the CPU's wrapping result, gemm_tile::acc_t).
// alpha and beta hold the opmath type of dtype (ScalarArg::as<opmath_t<T>>: float for 16-bit
// floats, T otherwise), converted on the host as the CPU converts them. use_c == false (beta == 0)
// never reads c (its NaNs do not propagate; c.data may be null); k == 0 gives beta * c (zeros when
// beta == 0). d may be c itself (in-place) but must not overlap a or b.
struct GemmArgs {
  DType dtype;
  int64_t batch, m, n, k;
  ScalarArg alpha, beta;
  bool use_c;
  MatrixRef a, b, c;
  MutableMatrixRef d;
};

// y[i] = alpha * sum_j a[i, j] * x[j] + beta * c[i] for i < m (a: m x k; x, c, y: vectors with
// element strides). Same dtype, accumulation and beta/k conventions as gemm.
struct GemvArgs {
  DType dtype;
  int64_t m, k;
  ScalarArg alpha, beta;
  bool use_c;
  const void* a;
  int64_t a_row_stride, a_col_stride;
  const void* x;
  int64_t x_stride;
  const void* c;
  int64_t c_stride;
  void* y;
  int64_t y_stride;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, gemm, (Stream stream, const GemmArgs& args))
FOO_DECLARE_KERNEL(void, gemv, (Stream stream, const GemvArgs& args))
