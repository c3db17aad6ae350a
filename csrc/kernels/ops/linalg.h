#pragma once
// Dense linear algebra on batches of small and medium matrices (linalg.cu): Householder QR
// (linalg_qr), Cholesky (linalg_cholesky_ex), triangular solves (linalg_solve_triangular,
// triangular_solve, _cholesky_solve_helper) and LU with partial pivoting (linalg_lu_factor_ex,
// linalg_lu_solve), and Jacobi eigendecomposition / SVD (_linalg_eigh, _linalg_svd). One block per matrix, the matrix in global memory
// and read through its strides, a grid-stride loop over the batch; float32 and float64.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

// Matrix b of a batch: element (i, j) is data[b * batch_stride + i * row_stride + j * col_stride]
// (strides in elements; batch_stride 0 repeats one matrix).
struct LinalgMatrix {
  void* data;
  int64_t batch_stride, row_stride, col_stride;
};

// Householder QR as LAPACK's geqrf + orgqr. `a` (m x n, a workspace holding A) is factored in
// place: R on and above the diagonal, the Householder vectors v_j (v_j[j] = 1 implied) below it,
// their scalars in tau (batch x min(m, n), contiguous), H_j = I - tau_j v_j v_j^T chosen as
// LAPACK's dlarfg does (beta = -sign(alpha) * norm, tau = 0 when the column below the diagonal is
// zero). Then R (r_rows x n, r_rows = min(m, n) or m; zeros below the diagonal) is written when
// r.data is set, and Q = H_0 ... H_{k-1} applied to the first q_cols columns of the identity
// (m x q_cols) when q_cols > 0.
struct QrArgs {
  DType dtype;
  int64_t batch, m, n;
  LinalgMatrix a;
  void* tau;
  int64_t r_rows;
  LinalgMatrix r;
  int64_t q_cols;
  LinalgMatrix q;
};

// Cholesky factorisation in place: a holds A (n x n); its lower triangle becomes L with
// A = L L^T, its strictly upper triangle zeros (an upper factor is the same call on transposed
// strides). Only the lower triangle of A is read. info[b] (int32, contiguous) is 0, or k when
// the leading minor of order k is not positive-definite (the pivot is <= 0 or NaN; the
// factorisation of that matrix stops there), as LAPACK's potrf. No host synchronisation.
struct CholeskyArgs {
  DType dtype;
  int64_t batch, n;
  LinalgMatrix a;
  int32_t* info;
};

// x <- op(A)^-1 x in place, A (n x n) triangular (`lower`; only that triangle is read; `unit`:
// its diagonal taken as ones), x n x k. A transposed A or a right-hand solve (X A = B) is the
// host's choice of strides. A zero pivot gives inf/NaN, as LAPACK's trsm.
struct TriangularSolveArgs {
  DType dtype;
  int64_t batch, n, k;
  LinalgMatrix a, x;
  bool lower, unit;
};

// LU factorisation with partial pivoting in place, as LAPACK's getrf: a (m x n) becomes L (unit
// lower, below the diagonal) and U (on and above it) with P A = L U. pivots (int32, batch x
// min(m, n), contiguous) are LAPACK's 1-based row interchanges (row j was swapped with row
// pivots[j] - 1, in order); the pivot is the first largest magnitude in its column. `pivot`
// false: no interchanges (pivots[j] = j + 1). info[b] is 0, or j + 1 for the first zero pivot U(j, j)
// (the factorisation still completes, as LAPACK's).
struct LuArgs {
  DType dtype;
  int64_t batch, m, n;
  LinalgMatrix a;
  int32_t* pivots;
  int32_t* info;
  bool pivot;
};

// The row interchanges of an LU factorisation applied to x (n x k): for j in 0..npiv-1 (reverse:
// from the last), rows j and pivots[j] - 1 swap (a value outside [1, n] is skipped). pivots: int32,
// npiv per matrix, contiguous.
struct PivotArgs {
  DType dtype;
  int64_t batch, n, k, npiv;
  LinalgMatrix x;
  const int32_t* pivots;
  bool reverse;
};

// Symmetric eigendecomposition by cyclic two-sided Jacobi, rotations in parallel (the round-robin
// order: n/2 disjoint pairs per step, every pair once in n - 1 steps per sweep), computed in
// double for float32 too. Reads the `lower` (else the upper) triangle of a (n x n). work: a double
// workspace, batch x (2 n^2 + 4 (n + 1)) elements (contiguous; the symmetric matrix, the
// eigenvectors, per-pair rotations). Writes the eigenvalues
// ascending to w (batch x n, contiguous) and, when v.data is set, the eigenvectors (unit 2-norm
// columns) to v in the same order. A pair rotates while |a_pq| > eps sqrt(|a_pp a_qq|) and
// |a_pq| > eps ||A||_F / n; at most `max_sweeps` sweeps.
struct EighArgs {
  DType dtype;
  int64_t batch, n;
  LinalgMatrix a;
  bool lower;
  void* work;
  void* w;
  LinalgMatrix v;
  int32_t max_sweeps;
};

// SVD of a (m x n, m >= n: the host passes A^T's strides for a wide matrix) by one-sided Jacobi
// (Hestenes): column pairs (p, q) of a workspace copy rotate until |u_p . u_q| <= eps ||u_p|| ||u_q||,
// round-robin order as EighArgs, at most `max_sweeps` sweeps, in double. work: batch x (m n + n^2 +
// 2 (n + 1)) doubles. Writes the singular values descending to s (batch x n, contiguous) and, when u.data is
// set, the left vectors u_p / sigma_p (m x n; a zero column where sigma_p = 0) to u and the right
// vectors (n x n) to v, columns in the same order.
struct SvdArgs {
  DType dtype;
  int64_t batch, m, n;
  LinalgMatrix a;
  void* work;
  void* s;
  LinalgMatrix u, v;
  int32_t max_sweeps;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, linalg_lu, (Stream stream, const LuArgs& args))
FOO_DECLARE_KERNEL(void, linalg_apply_pivots, (Stream stream, const PivotArgs& args))
FOO_DECLARE_KERNEL(void, linalg_qr, (Stream stream, const QrArgs& args))
FOO_DECLARE_KERNEL(void, linalg_cholesky, (Stream stream, const CholeskyArgs& args))
FOO_DECLARE_KERNEL(void, linalg_eigh, (Stream stream, const EighArgs& args))
FOO_DECLARE_KERNEL(void, linalg_svd, (Stream stream, const SvdArgs& args))
FOO_DECLARE_KERNEL(void, linalg_triangular_solve, (Stream stream, const TriangularSolveArgs& args))
