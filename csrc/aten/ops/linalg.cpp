// Dense linear algebra on foo (kernels/ops/linalg.cu): linalg_qr, linalg_cholesky_ex, triangular_solve
// and linalg_solve_triangular, _cholesky_solve_helper (what cholesky_solve calls), cholesky_inverse, and LU:
// linalg_lu_factor_ex, linalg_lu_solve and what the CPU builds on them (_linalg_solve_ex,
// linalg_inv_ex, _linalg_det, _linalg_slogdet: the CPU's impl() bodies, on these kernels), and the
// Jacobi kernels' _linalg_eigh and _linalg_svd (what eigh/eigvalsh, svd/svdvals, pinv, matrix_rank,
// matrix_norm(2/nuc) and cond reach), and linalg_lstsq as CUDA's 'gels' on QR. The
// structured ones get ATen's meta checks, shapes and column-major output strides;
// linalg_solve_triangular and _cholesky_solve_helper replay the CPU's checks (LinearAlgebraUtils.h). float32 and float64; complex
// raises NotImplementedError. The composites above them (torch.linalg.cholesky's error from
// `info`, cholesky_solve's broadcasting, the derivative formulas) run unchanged on these.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <optional>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/linalg.h"
#include "native/cholesky_inverse_out.h"
#include "native/cholesky_out.h"
#include "native/cholesky_solve_helper.h"
#include "native/linalg_cholesky_ex_out.h"
#include "native/linalg_det_out.h"
#include "native/linalg_eigh_out.h"
#include "native/linalg_inv_ex_out.h"
#include "native/linalg_lstsq_out.h"
#include "native/linalg_lu_factor_ex_out.h"
#include "native/linalg_lu_solve_out.h"
#include "native/linalg_qr_out.h"
#include "native/linalg_slogdet_out.h"
#include "native/linalg_solve_ex_out.h"
#include "native/linalg_solve_triangular_out.h"
#include "native/linalg_svd_out.h"
#include "native/lu_unpack_out.h"
#include "native/triangular_solve_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::LinalgMatrix;

constexpr uint32_t kLinalgTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

// The one stride that walks t's batch dims in order (row-major over them), if there is one: dims
// of size 1 do not count, an expanded (stride 0) batch is one. A 2-D tensor has batch stride 0.
std::optional<int64_t> batch_stride(const at::Tensor& t) {
  int64_t stride = 0, extent = 1;
  bool found = false;
  for (int64_t d = t.dim() - 3; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (!found) {
      stride = t.stride(d);
      extent = t.size(d);
      found = true;
    } else if (t.stride(d) == stride * extent) {
      extent *= t.size(d);
    } else {
      return std::nullopt;
    }
  }
  return stride;
}

// For reading: t itself when its batch dims walk with one stride, else a contiguous copy.
at::Tensor readable(const at::Tensor& t) { return batch_stride(t) ? t : t.contiguous(); }

LinalgMatrix matrix_of(const at::Tensor& t) {
  const auto bs = batch_stride(t);
  TORCH_INTERNAL_ASSERT(bs.has_value(), "linalg: batch dims of ", t.sizes(), " / ", t.strides(), " do not collapse");
  return {t.numel() == 0 ? nullptr : t.data_ptr(), *bs, t.stride(-2), t.stride(-1)};
}

LinalgMatrix transposed(LinalgMatrix m) {
  std::swap(m.row_stride, m.col_stride);
  return m;
}

at::Tensor empty_column_major(at::IntArrayRef sizes, const at::TensorOptions& options) {
  return at::empty_strided(sizes, at::native::batched_matrix_contiguous_strides(sizes, /*f_contig=*/true), options);
}

// Where a kernel writes `out`: out itself when its batch dims collapse and it overlaps none of
// `inputs`, else a column-major temporary the caller copies into out.
at::Tensor writable(const at::Tensor& out, std::initializer_list<at::Tensor> inputs = {}) {
  bool ok = batch_stride(out).has_value() && at::has_internal_overlap(out) == at::MemOverlap::No;
  for (const at::Tensor& t : inputs) {
    ok = ok && !(t.defined() && at::get_overlap_status(out, t) != at::MemOverlapStatus::No);
  }
  return ok ? out : empty_column_major(out.sizes(), out.options());
}

void copy_back(const at::Tensor& out, const at::Tensor& target) {
  if (!target.is_same(out)) out.copy_(target);
}

// x <- op(a)^-1 x in place: a [..., n, n] triangular (lower, unit diagonal), broadcast over x's
// batch [..., n, k]; transpose solves with a^T. x's batch dims must collapse (writable()).
void solve_in_place(const at::Tensor& a, const at::Tensor& x, bool lower, bool transpose, bool unit) {
  if (x.numel() == 0) return;
  at::DimVector a_sizes(x.sizes().begin(), x.sizes().end() - 2);
  a_sizes.push_back(a.size(-2));
  a_sizes.push_back(a.size(-1));
  const at::Tensor ar = readable(a.expand(a_sizes));
  foo::kernels::TriangularSolveArgs args{};
  args.dtype = kernel_dtype(x.scalar_type());
  args.batch = at::native::batchCount(x);
  args.n = x.size(-2);
  args.k = x.size(-1);
  args.a = transpose ? transposed(matrix_of(ar)) : matrix_of(ar);
  args.x = matrix_of(x);
  args.lower = transpose ? !lower : lower;
  args.unit = unit;
  FOO_CALL_KERNEL(linalg_triangular_solve, stream_of(x), args);
}

// The Cholesky factor of l (holding A; its batch dims must collapse) in place, the other triangle
// zeroed; info (int32, contiguous, one per matrix) as LAPACK's potrf.
void cholesky_in_place(const at::Tensor& l, const at::Tensor& info, bool upper) {
  foo::kernels::CholeskyArgs args{};
  args.dtype = kernel_dtype(l.scalar_type());
  args.batch = at::native::batchCount(l);
  args.n = l.size(-1);
  // An upper factor U = L^T is the lower factor of the transposed view: its "lower triangle" is
  // U's upper one, read from A's upper triangle as the CPU's potrf('U') does.
  args.a = upper ? transposed(matrix_of(l)) : matrix_of(l);
  args.info = info.data_ptr<int32_t>();
  FOO_CALL_KERNEL(linalg_cholesky, stream_of(l), args);
}

// x <- P^T x (reverse: P x) for LAPACK's interchanges `pivots`, broadcast over x's batch: laswp.
void apply_pivots(const at::Tensor& pivots, const at::Tensor& x, bool reverse) {
  if (x.numel() == 0) return;
  at::DimVector p_sizes(x.sizes().begin(), x.sizes().end() - 2);
  p_sizes.push_back(pivots.size(-1));
  const at::Tensor piv = pivots.expand(p_sizes).contiguous();
  foo::kernels::PivotArgs p{};
  p.dtype = kernel_dtype(x.scalar_type());
  p.batch = at::native::batchCount(x);
  p.n = x.size(-2);
  p.k = x.size(-1);
  p.npiv = piv.size(-1);
  p.x = matrix_of(x);
  p.pivots = piv.const_data_ptr<int32_t>();
  p.reverse = reverse;
  FOO_CALL_KERNEL(linalg_apply_pivots, stream_of(x), p);
}

// x <- A^-1 x (adjoint: A^-T x) for A = P L U given as LAPACK's (lu, pivots), as getrs: the
// interchanges, then L (unit lower) and U; adjoint: U^T, L^T, then the interchanges in reverse.
// lu and pivots broadcast over x's batch; x's batch dims must collapse.
void lu_solve_in_place(const at::Tensor& lu, const at::Tensor& pivots, const at::Tensor& x, bool adjoint) {
  if (x.numel() == 0) return;
  if (!adjoint) {
    apply_pivots(pivots, x, /*reverse=*/false);
    solve_in_place(lu, x, /*lower=*/true, /*transpose=*/false, /*unit=*/true);
    solve_in_place(lu, x, /*lower=*/false, /*transpose=*/false, /*unit=*/false);
  } else {
    solve_in_place(lu, x, /*lower=*/false, /*transpose=*/true, /*unit=*/false);
    solve_in_place(lu, x, /*lower=*/true, /*transpose=*/true, /*unit=*/true);
    apply_pivots(pivots, x, /*reverse=*/true);
  }
}

// The sign of the permutation of LAPACK's pivots: -1 for an odd number of interchanges (the CPU's
// lu_det_P, on native ops).
at::Tensor lu_det_P(const at::Tensor& pivots) {
  return (at::arange(1, pivots.size(-1) + 1, pivots.options()) != pivots)
      .sum(-1, /*keepdim=*/false, /*dtype=*/at::kLong)
      .fmod_(2)
      .mul_(-2)
      .add_(1);
}

}  // namespace

TORCH_IMPL_FUNC(linalg_qr_out)(const at::Tensor& A, c10::string_view mode, const at::Tensor& Q, const at::Tensor& R) {
  check_kernel_dtype("linalg_qr", A.scalar_type(), kLinalgTypes);
  const auto [compute_q, reduced] = at::native::_parse_qr_mode(mode);
  (void)reduced;  // the meta function sized Q and R
  const int64_t batch = at::native::batchCount(A);
  const bool want_q = compute_q && Q.numel() > 0;
  if (batch == 0 || (R.numel() == 0 && !want_q)) return;
  // The factorisation's workspace, row-major: the trailing updates run a thread per column, so
  // neighbouring threads read neighbouring elements.
  const at::Tensor work = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  work.copy_(A);
  const int64_t m = A.size(-2), n = A.size(-1);
  const at::Tensor tau = at::empty({batch, std::min(m, n)}, A.options());
  const at::Tensor r = R.numel() > 0 ? writable(R) : R;
  const at::Tensor q = want_q ? writable(Q) : Q;
  foo::kernels::QrArgs args{};
  args.dtype = kernel_dtype(A.scalar_type());
  args.batch = batch;
  args.m = m;
  args.n = n;
  args.a = matrix_of(work);
  args.tau = tau.numel() == 0 ? nullptr : tau.data_ptr();
  args.r_rows = R.size(-2);
  args.r = R.numel() > 0 ? matrix_of(r) : LinalgMatrix{nullptr, 0, 0, 0};
  args.q_cols = want_q ? Q.size(-1) : 0;
  args.q = want_q ? matrix_of(q) : LinalgMatrix{nullptr, 0, 0, 0};
  FOO_CALL_KERNEL(linalg_qr, stream_of(A), args);
  if (R.numel() > 0) copy_back(R, r);
  if (want_q) copy_back(Q, q);
}

TORCH_IMPL_FUNC(linalg_cholesky_ex_out)(const at::Tensor& A, bool upper, bool check_errors, const at::Tensor& L,
                                        const at::Tensor& info) {
  check_kernel_dtype("linalg_cholesky", A.scalar_type(), kLinalgTypes);
  if (L.numel() == 0) {
    info.zero_();
    return;
  }
  const at::Tensor l = writable(L, {A});
  l.copy_(A);
  const at::Tensor inf = info.is_contiguous() ? info : at::empty(info.sizes(), info.options());
  cholesky_in_place(l, inf, upper);
  copy_back(L, l);
  copy_back(info, inf);
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
}

TORCH_IMPL_FUNC(triangular_solve_out)(const at::Tensor& self, const at::Tensor& A, bool upper, bool transpose,
                                      bool unitriangular, const at::Tensor& result, const at::Tensor& clone_A) {
  check_kernel_dtype("triangular_solve", self.scalar_type(), kLinalgTypes);
  const auto [self_b, A_b] = at::native::_linalg_broadcast_batch_dims(self, A, "triangular_solve");
  const at::Tensor x = writable(result, {self, A});
  const at::Tensor a = writable(clone_A, {self, A});
  x.copy_(self_b);
  a.copy_(A_b);
  solve_in_place(a, x, /*lower=*/!upper, transpose, unitriangular);
  copy_back(result, x);
  copy_back(clone_A, a);
}

at::Tensor& linalg_solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                        bool unitriangular, at::Tensor& out) {
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  const auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, /*name=*/nullptr);
  if (!out.defined()) {
    out = empty_column_major(B_.sizes(), B.options());
  } else {
    at::native::resize_output(out, B_.sizes());
  }
  check_kernel_dtype("linalg_solve_triangular", out.scalar_type(), kLinalgTypes);
  if (out.numel() == 0) return out;
  const at::Tensor x = writable(out, {A});
  x.copy_(B_);
  const at::Tensor a = A_.scalar_type() == out.scalar_type() ? A_ : A_.to(out.scalar_type());
  if (left) {
    solve_in_place(a, x, /*lower=*/!upper, /*transpose=*/false, unitriangular);
  } else {
    // X A = B is A^T X^T = B^T: the transposed views of both, A^T lower when A is upper.
    solve_in_place(a, x.mT(), /*lower=*/!upper, /*transpose=*/true, unitriangular);
  }
  copy_back(out, x);
  return out;
}

// The deprecated torch.cholesky: the CPU's checks, warning and error ("cholesky: The
// factorization could not be completed ..."), on the Cholesky kernel.
at::Tensor& cholesky_out(const at::Tensor& self, bool upper, at::Tensor& out) {
  TORCH_WARN_ONCE(
      "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be ", "removed in a future PyTorch release.\n",
      "L = torch.cholesky(A)\n", "should be replaced with\n", "L = torch.linalg.cholesky(A)\n", "and\n",
      "U = torch.cholesky(A, upper=True)\n", "should be replaced with\n", "U = torch.linalg.cholesky(A).mH\n",
      "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.");
  if (out.defined()) at::native::checkLinalgCompatibleDtype("cholesky", out, self);
  at::Tensor result;
  if (self.numel() == 0) {
    result = at::empty_like(self, at::MemoryFormat::Contiguous);
  } else {
    at::native::squareCheckInputs(self, "cholesky");
    check_kernel_dtype("cholesky", self.scalar_type(), kLinalgTypes);
    result = at::native::cloneBatchedColumnMajor(self);
    const at::Tensor info = at::empty(self.sizes().slice(0, self.dim() - 2), self.options().dtype(at::kInt));
    cholesky_in_place(result, info, upper);
    at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  }
  if (!out.defined()) {
    out = result;
  } else {
    at::native::resize_output(out, result.sizes());
    out.copy_(result);
  }
  return out;
}

at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  check_kernel_dtype("cholesky_solve", self.scalar_type(), kLinalgTypes);
  at::Tensor x = at::native::cloneBatchedColumnMajor(self);
  // A = L L^T: L y = b, then L^T x = y; A = U^T U: U^T y = b, then U x = y.
  solve_in_place(A, x, /*lower=*/!upper, /*transpose=*/upper, /*unit=*/false);
  solve_in_place(A, x, /*lower=*/!upper, /*transpose=*/!upper, /*unit=*/false);
  return x;
}

// (L L^T)^-1 (upper: (U^T U)^-1) as cholesky_solve of the identity, then symmetrised as the CPU's
// potri result is (one triangle computed, mirrored). A zero diagonal gives inf/NaN: the CPU's
// error for it (potri's info) would need a host synchronisation.
at::Tensor& cholesky_inverse_out(const at::Tensor& self, bool upper, at::Tensor& out) {
  at::native::squareCheckInputs(self, "cholesky_inverse");
  if (out.defined()) {
    at::native::checkSameDevice("cholesky_inverse", out, self);
    at::native::checkLinalgCompatibleDtype("cholesky_inverse", out, self);
  }
  check_kernel_dtype("cholesky_inverse", self.scalar_type(), kLinalgTypes);
  at::Tensor x = empty_column_major(self.sizes(), self.options());
  if (x.numel() > 0) {
    x.zero_();
    x.diagonal(0, -2, -1).fill_(1.);
    const at::Tensor a = readable(self);
    solve_in_place(a, x, /*lower=*/!upper, /*transpose=*/upper, /*unit=*/false);
    solve_in_place(a, x, /*lower=*/!upper, /*transpose=*/!upper, /*unit=*/false);
    x = at::add(x, x.mT()).mul_(0.5);
  }
  if (!out.defined()) {
    out = x;
  } else {
    at::native::resize_output(out, x.sizes());
    out.copy_(x);
  }
  return out;
}

TORCH_IMPL_FUNC(linalg_lu_factor_ex_out)(const at::Tensor& A, bool pivot, bool check_errors, const at::Tensor& LU,
                                          const at::Tensor& pivots, const at::Tensor& info) {
  if (A.numel() == 0) {
    info.zero_();  // one element for a 0 x 0 matrix
    return;
  }
  check_kernel_dtype("linalg_lu_factor", A.scalar_type(), kLinalgTypes);
  const at::Tensor lu = writable(LU, {A});
  lu.copy_(A);
  const at::Tensor piv = pivots.is_contiguous() ? pivots : at::empty(pivots.sizes(), pivots.options());
  const at::Tensor inf = info.is_contiguous() ? info : at::empty(info.sizes(), info.options());
  foo::kernels::LuArgs args{};
  args.dtype = kernel_dtype(A.scalar_type());
  args.batch = at::native::batchCount(A);
  args.m = A.size(-2);
  args.n = A.size(-1);
  args.a = matrix_of(lu);
  args.pivots = piv.data_ptr<int32_t>();
  args.info = inf.data_ptr<int32_t>();
  args.pivot = pivot;
  FOO_CALL_KERNEL(linalg_lu, stream_of(A), args);
  copy_back(LU, lu);
  copy_back(pivots, piv);
  copy_back(info, inf);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
}

TORCH_IMPL_FUNC(linalg_lu_solve_out)(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B, bool left,
                                     bool adjoint, const at::Tensor& result) {
  if (result.numel() == 0) return;
  check_kernel_dtype("linalg_lu_solve", LU.scalar_type(), kLinalgTypes);
  const at::Tensor x = writable(result, {LU, pivots, B});
  x.copy_(B);
  // X A = B is A^T X^T = B^T: the transposed view, with adjoint flipped.
  lu_solve_in_place(LU, pivots, left ? x : x.mT(), left ? adjoint : !adjoint);
  copy_back(result, x);
}

TORCH_IMPL_FUNC(linalg_solve_ex_out)(const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors,
                                     const at::Tensor& result, const at::Tensor& LU, const at::Tensor& pivots,
                                     const at::Tensor& info) {
  // torch 2.13's CPU factors A itself whatever its layout (older releases factored a row-major A
  // as A^T and solved with adjoint); linalg_solve's backward reuses these LU and pivots, so they
  // must be A's: checked against the CPU in tests/test_linalg.py.
  at::linalg_lu_factor_ex_out(const_cast<at::Tensor&>(LU), const_cast<at::Tensor&>(pivots),
                              const_cast<at::Tensor&>(info), A);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(LU, B);
  at::Tensor result_ = vector_case ? result.unsqueeze(-1) : result;
  const at::Tensor B_ = vector_case ? B.unsqueeze(-1) : B;
  at::linalg_lu_solve_out(result_, LU, pivots, B_, left, /*adjoint=*/false);
}

TORCH_IMPL_FUNC(linalg_inv_ex_out)(const at::Tensor& A, bool check_errors, const at::Tensor& result,
                                   const at::Tensor& info) {
  result.zero_();
  result.diagonal(0, -2, -1).fill_(1.);
  at::linalg_solve_ex_out(const_cast<at::Tensor&>(result), const_cast<at::Tensor&>(info), A, result, /*left=*/true);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
}

TORCH_IMPL_FUNC(linalg_det_out)(const at::Tensor& A, const at::Tensor& result, const at::Tensor& LU,
                                const at::Tensor& pivots) {
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  // det(A^T) = det(A): a row-major A is factored as its column-major transpose, as the CPU does.
  at::linalg_lu_factor_ex_out(const_cast<at::Tensor&>(LU), const_cast<at::Tensor&>(pivots), info,
                              A.is_contiguous() && !A.is_complex() ? A.mH() : A);
  at::mul_out(const_cast<at::Tensor&>(result), lu_det_P(pivots), at::prod(LU.diagonal(0, -2, -1), /*dim=*/-1));
}

TORCH_IMPL_FUNC(linalg_slogdet_out)(const at::Tensor& A, const at::Tensor& sign, const at::Tensor& logabsdet,
                                    const at::Tensor& LU, const at::Tensor& pivots) {
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(const_cast<at::Tensor&>(LU), const_cast<at::Tensor&>(pivots), info,
                              A.is_contiguous() && !A.is_complex() ? A.mH() : A);
  const at::Tensor diag_U = LU.diagonal(0, -2, -1);
  at::mul_out(const_cast<at::Tensor&>(sign), diag_U.sgn().prod(-1), lu_det_P(pivots));
  at::sum_out(const_cast<at::Tensor&>(logabsdet), diag_U.abs().log_(), -1);
}

TORCH_IMPL_FUNC(lu_unpack_out)(const at::Tensor& LU, const at::Tensor& pivots, bool unpack_data, bool unpack_pivots,
                               const at::Tensor& P, const at::Tensor& L, const at::Tensor& U) {
  const int64_t m = LU.size(-2), n = LU.size(-1);
  if (unpack_data) {  // the CPU's: L = tril(LU, -1) + I, U = triu(LU), in an order safe when LU is L or U
    if (m > n || LU.is_same(L)) {
      at::triu_out(const_cast<at::Tensor&>(U), m == n ? LU : LU.narrow(-2, 0, n), 0);
      at::tril_out(const_cast<at::Tensor&>(L), LU, -1);
      L.diagonal(0, -2, -1).fill_(1.);
    } else {
      at::tril_out(const_cast<at::Tensor&>(L), m == n ? LU : LU.narrow(-1, 0, m), -1);
      L.diagonal(0, -2, -1).fill_(1.);
      at::triu_out(const_cast<at::Tensor&>(U), LU, 0);
    }
  }
  if (unpack_pivots && P.numel() > 0) {
    // The interchanges applied to the identity give P^T (getrs applies them to compute P^T B).
    check_kernel_dtype("lu_unpack", P.scalar_type(), kLinalgTypes);
    at::DimVector sizes(P.sizes().begin(), P.sizes().end());
    const at::Tensor pt = at::eye(m, P.options()).expand(sizes).contiguous();
    apply_pivots(pivots, pt, /*reverse=*/false);
    P.copy_(pt.mT());
  }
}

// Sweeps of the Jacobi kernels: they converge quadratically, a handful of sweeps up to n = 512; the
// limit only ends what cannot converge (NaN or inf entries).
constexpr int32_t kJacobiSweeps = 40;

TORCH_IMPL_FUNC(linalg_eigh_out)(const at::Tensor& A, c10::string_view uplo, bool compute_v, const at::Tensor& L,
                                 const at::Tensor& V) {
  if (A.numel() == 0) return;
  check_kernel_dtype("linalg_eigh", A.scalar_type(), kLinalgTypes);
  const at::Tensor ar = readable(A);
  const int64_t batch = at::native::batchCount(A), n = A.size(-1);
  const at::Tensor work = at::empty({batch, 2 * n * n + 4 * (n + 1)}, A.options().dtype(at::kDouble));
  const at::Tensor w = L.is_contiguous() ? L : at::empty(L.sizes(), L.options());
  const at::Tensor v = compute_v ? writable(V, {A}) : V;
  foo::kernels::EighArgs args{};
  args.dtype = kernel_dtype(A.scalar_type());
  args.batch = batch;
  args.n = n;
  args.a = matrix_of(ar);
  args.lower = std::toupper(static_cast<unsigned char>(uplo[0])) != 'U';
  args.work = work.data_ptr();
  args.w = w.data_ptr();
  args.v = compute_v ? matrix_of(v) : LinalgMatrix{nullptr, 0, 0, 0};
  args.max_sweeps = kJacobiSweeps;
  FOO_CALL_KERNEL(linalg_eigh, stream_of(A), args);
  copy_back(L, w);
  if (compute_v) copy_back(V, v);
  // The CPU raises when LAPACK's syevd does not converge (info > 0, NaN input): reading info would
  // synchronise; Jacobi ends after kJacobiSweeps with what it has.
}

TORCH_IMPL_FUNC(linalg_svd_out)(const at::Tensor& A, bool full_matrices, bool compute_uv,
                                std::optional<c10::string_view> driver, const at::Tensor& U, const at::Tensor& S,
                                const at::Tensor& Vh) {
  if (A.numel() == 0) {  // the CPU's: the identity is an SVD of an empty matrix
    if (compute_uv && full_matrices) {
      if (U.numel() != 0) {
        U.zero_();
        U.diagonal(0, -2, -1).fill_(1.);
      }
      if (Vh.numel() != 0) {
        Vh.zero_();
        Vh.diagonal(0, -2, -1).fill_(1.);
      }
    }
    return;
  }
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  check_kernel_dtype("linalg_svd", A.scalar_type(), kLinalgTypes);
  // A wide matrix is the SVD of A^T = V S U^T: the kernel sees m >= n.
  const int64_t m = A.size(-2), n = A.size(-1);
  const bool wide = m < n;
  const int64_t rows = wide ? n : m, k = wide ? m : n;
  const at::Tensor ar = readable(A);
  const int64_t batch = at::native::batchCount(A);
  const at::Tensor work = at::empty({batch, rows * k + k * k + 2 * (k + 1)}, A.options().dtype(at::kDouble));
  const at::Tensor s = S.is_contiguous() ? S : at::empty(S.sizes(), S.options());
  at::DimVector left_sizes(A.sizes().begin(), A.sizes().end() - 2), right_sizes = left_sizes;
  left_sizes.append({rows, k});
  right_sizes.append({k, k});
  const at::Tensor left = compute_uv ? empty_column_major(left_sizes, A.options()) : at::Tensor();
  const at::Tensor right = compute_uv ? empty_column_major(right_sizes, A.options()) : at::Tensor();
  foo::kernels::SvdArgs args{};
  args.dtype = kernel_dtype(A.scalar_type());
  args.batch = batch;
  args.m = rows;
  args.n = k;
  args.a = wide ? transposed(matrix_of(ar)) : matrix_of(ar);
  args.work = work.data_ptr();
  args.s = s.data_ptr();
  args.u = compute_uv ? matrix_of(left) : LinalgMatrix{nullptr, 0, 0, 0};
  args.v = compute_uv ? matrix_of(right) : LinalgMatrix{nullptr, 0, 0, 0};
  args.max_sweeps = kJacobiSweeps;
  FOO_CALL_KERNEL(linalg_svd, stream_of(A), args);
  copy_back(S, s);
  if (!compute_uv) return;
  // The left vectors u_j / sigma_j are orthonormal up to rounding, but zero where sigma_j = 0 (the
  // last columns, sigma descending) and only k of them: a Householder QR completes them (complete
  // mode for full_matrices) and re-orthonormalises; Q's columns times sign(R_jj) are the u_j.
  const auto [q, r] = at::linalg_qr(left, full_matrices && rows > k ? "complete" : "reduced");
  const at::Tensor sign = at::ge(r.diagonal(0, -2, -1), 0).to(A.scalar_type()).mul_(2).sub_(1);
  q.narrow(-1, 0, k).mul_(sign.unsqueeze(-2));
  if (!wide) {
    U.copy_(q);
    Vh.copy_(right.mT());
  } else {
    U.copy_(right);
    Vh.copy_(q.mT());
  }
}

// torch.linalg.lstsq as CUDA runs it: the CPU's checks, then driver 'gels' only (CUDA's default and
// only driver; the CPU's default gelsy and gelss/gelsd compute rank and singular values, which stay
// empty here as on CUDA). A is assumed of full rank, as gels does: a tall or square A is solved by
// its Householder QR (x = R^-1 Q^T b, residuals ||b - A x||^2 per column when m > n), a wide one
// by the QR of A^T (the minimum-norm x = Q R^-T b). A rank-deficient A gives inf/NaN: the CPU's
// gels error reads info (a sync). Batch dims broadcast; a vector b gives a vector x.
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_lstsq_out(
    const at::Tensor& self, const at::Tensor& b, std::optional<double> rcond, std::optional<c10::string_view> driver,
    at::Tensor& solution, at::Tensor& residuals, at::Tensor& rank, at::Tensor& singular_values) {
  (void)rcond;  // only the rank-revealing drivers use it
  TORCH_CHECK(self.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(b.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  TORCH_CHECK(self.scalar_type() == b.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype ",
              self.scalar_type(), " and other's dtype ", b.scalar_type());
  const int64_t dim_diff = self.dim() - b.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  const bool vector_case = dim_diff == 1;
  const at::Tensor b2 = vector_case ? b.unsqueeze(-1) : b;
  TORCH_CHECK(self.size(-2) == b2.size(-2), vector_case ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                                                         : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  at::native::checkSameDevice("torch.linalg.lstsq", b, self, "other");
  // The functional form (CompositeExplicitAutograd upstream, registered here from this entry)
  // passes undefined outputs: the CPU's functional allocates them empty, so do we.
  const at::ScalarType real_dtype = c10::toRealValueType(self.scalar_type());
  if (!solution.defined()) solution = at::empty({0}, self.options());
  if (!residuals.defined()) residuals = at::empty({0}, self.options().dtype(real_dtype));
  if (!rank.defined()) rank = at::empty({0}, self.options().dtype(at::kLong));
  if (!singular_values.defined()) singular_values = at::empty({0}, self.options().dtype(real_dtype));
  at::native::checkSameDevice("torch.linalg.lstsq", solution, self, "solution");
  at::native::checkSameDevice("torch.linalg.lstsq", residuals, self, "residuals");
  at::native::checkSameDevice("torch.linalg.lstsq", rank, self, "rank");
  at::native::checkSameDevice("torch.linalg.lstsq", singular_values, self, "singular_values");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", solution, self, "solution");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", residuals.scalar_type(), real_dtype, "solution");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", rank.scalar_type(), at::kLong, "rank");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", singular_values.scalar_type(), real_dtype,
                                         "singular_values");
  if (driver.has_value()) {
    std::string name(*driver);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    TORCH_CHECK(name == "gels", "torch.linalg.lstsq: `driver` other than `gels` is not supported on foo (as on CUDA)");
  }
  check_kernel_dtype("linalg_lstsq", self.scalar_type(), kLinalgTypes);
  const int64_t m = self.size(-2), n = self.size(-1), nrhs = b2.size(-1);
  at::DimVector batch = at::infer_size_dimvector(self.sizes().slice(0, self.dim() - 2), b2.sizes().slice(0, b2.dim() - 2));
  at::DimVector a_sizes = batch, b_sizes = batch, x_sizes = batch;
  a_sizes.append({m, n});
  b_sizes.append({m, nrhs});
  x_sizes.append({n, nrhs});
  const at::Tensor A = self.expand(a_sizes), B = b2.expand(b_sizes);
  at::Tensor x, res;
  if (m == 0 || n == 0 || nrhs == 0) {  // gels' quick return zeroes B: x and the residuals are 0
    x = at::zeros(x_sizes, self.options());
    at::DimVector res_sizes = batch;
    res_sizes.push_back(nrhs);
    if (m > n) res = at::zeros(res_sizes, self.options());
  } else if (m >= n) {
    const auto [q, r] = at::linalg_qr(A, "reduced");
    x = at::linalg_solve_triangular(r, at::matmul(q.mT(), B), /*upper=*/true);
    if (m > n) res = (B - at::matmul(A, x)).pow_(2).sum(-2);
  } else {
    const auto [q, r] = at::linalg_qr(A.mT(), "reduced");  // A^T = Q R: A x = R^T Q^T x = b
    x = at::matmul(q, at::linalg_solve_triangular(r.mT(), B, /*upper=*/false));
  }
  const at::Tensor sol = vector_case ? x.squeeze(-1) : x;
  at::native::resize_output(solution, sol.sizes());
  solution.copy_(sol);
  if (res.defined()) {
    at::native::resize_output(residuals, res.sizes());
    residuals.copy_(res);
  }
  return std::forward_as_tuple(solution, residuals, rank, singular_values);
}

}  // namespace foo::native
