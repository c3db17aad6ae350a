// Dense linear algebra on foo (kernels/linalg.cu): linalg_qr, linalg_cholesky_ex, triangular_solve
// and linalg_solve_triangular, _cholesky_solve_helper (what cholesky_solve calls). The structured
// ones (qr, cholesky_ex, triangular_solve) get ATen's meta checks, shapes and column-major output
// strides; the others replay the CPU's checks (LinearAlgebraUtils.h). float32 and float64; complex
// raises NotImplementedError. The composites above them (torch.linalg.cholesky's error from
// `info`, cholesky_solve's broadcasting, the derivative formulas) run unchanged on these.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>

#include <optional>

#include "aten/kernel_dtype.h"
#include "kernels/linalg.h"
#include "native/cholesky_solve_helper.h"
#include "native/linalg_cholesky_ex_out.h"
#include "native/linalg_qr_out.h"
#include "native/linalg_solve_triangular_out.h"
#include "native/triangular_solve_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::LinalgMatrix;

constexpr uint32_t kLinalgTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

foo::kernels::Stream stream_of(const at::Tensor& t) { return foo::runtime::current_native_stream(t.device().index()); }

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
  foo::kernels::CholeskyArgs args{};
  args.dtype = kernel_dtype(A.scalar_type());
  args.batch = at::native::batchCount(A);
  args.n = A.size(-1);
  // An upper factor U = L^T is the lower factor of the transposed view: its "lower triangle" is
  // U's upper one, read from A's upper triangle as the CPU's potrf('U') does.
  args.a = upper ? transposed(matrix_of(l)) : matrix_of(l);
  args.info = inf.data_ptr<int32_t>();
  FOO_CALL_KERNEL(linalg_cholesky, stream_of(A), args);
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

at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  check_kernel_dtype("cholesky_solve", self.scalar_type(), kLinalgTypes);
  at::Tensor x = at::native::cloneBatchedColumnMajor(self);
  // A = L L^T: L y = b, then L^T x = y; A = U^T U: U^T y = b, then U x = y.
  solve_in_place(A, x, /*lower=*/!upper, /*transpose=*/upper, /*unit=*/false);
  solve_in_place(A, x, /*lower=*/!upper, /*transpose=*/!upper, /*unit=*/false);
  return x;
}

}  // namespace foo::native
