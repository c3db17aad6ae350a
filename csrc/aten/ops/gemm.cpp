// Matrix products: mm, bmm, addmm (tiled GEMM), addmv and dot (GEMV), csrc/kernels/ops/gemm.cu.
// mm, bmm, addmm and addmv are structured: ATen's meta functions check shapes and dtypes (with
// the CPU's messages) and size the output; impl() runs the kernel. Operands are passed with their
// strides (transposed and sliced views, broadcast bias) and never copied, except when the output
// overlaps an input.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/out_arg.h"
#include "aten/core/pointwise.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/gemm.h"
#include "native/addmm_out.h"
#include "native/addmv_out.h"
#include "native/bmm_out.h"
#include "native/dot_out.h"
#include "native/mm_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

// The CPU's set: floating types and the integer types (accumulated exactly, wrapping); not bool.
void check_supported_dtype(const char* op, at::ScalarType t) {
  check_kernel_dtype(op, t, foo::kernels::kNumericTypes);
}

// The tensor the kernel writes: `out` itself, or (when out overlaps an operand it would
// overwrite before reading) a fresh tensor copied into out afterwards.
bool overlaps(const at::Tensor& out, const at::Tensor& t) {
  return t.defined() && at::get_overlap_status(out, t) != at::MemOverlapStatus::No;
}

foo::kernels::MatrixRef matrix_ref(const at::Tensor& t) {
  // 2-D: one matrix for every batch entry (batch stride 0); 3-D: [batch, rows, cols].
  const int64_t d = t.dim();
  return {t.const_data_ptr(), d == 3 ? t.stride(0) : 0, t.stride(d - 2), t.stride(d - 1)};
}

foo::kernels::MutableMatrixRef mutable_matrix_ref(const at::Tensor& t) {
  const int64_t d = t.dim();
  return {t.mutable_data_ptr(), d == 3 ? t.stride(0) : 0, t.stride(d - 2), t.stride(d - 1)};
}

// alpha or beta as the kernel reads it: converted to the opmath type of `dtype` as the CPU does
// (Scalar::to, with its overflow errors, e.g. beta=300 for int8).
struct GemmScalar {
  foo::kernels::ScalarArg arg;
  bool nonzero;
};

GemmScalar gemm_scalar(const at::Scalar& s, at::ScalarType dtype, const char* op, const char* name) {
  TORCH_CHECK(!s.isComplex(), op, ": foo does not support a complex ", name);
  return {scalar_arg(s, opmath_dtype(dtype)), s.toDouble() != 0.0};
}

// result = alpha * a @ b + beta * c over batches (a: [B,]M,K; b: [B,]K,N; c broadcast to out's
// shape or undefined when beta == 0); out already has its final shape and dtype.
void run_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& alpha,
              const at::Scalar& beta, const at::Tensor& out) {
  if (out.numel() == 0) return;
  at::assert_no_internal_overlap(out);
  const bool in_place_c = c.defined() && c.is_same(out);
  at::Tensor target = out;
  if (overlaps(out, a) || overlaps(out, b) || (!in_place_c && overlaps(out, c))) {
    target = at::empty(out.sizes(), out.options());
  }
  const bool batched = out.dim() == 3;
  foo::kernels::GemmArgs args{};
  args.dtype = kernel_dtype(out.scalar_type());
  args.batch = batched ? out.size(0) : 1;
  args.m = out.size(-2);
  args.n = out.size(-1);
  args.k = a.size(-1);
  const auto alpha_arg = gemm_scalar(alpha, out.scalar_type(), "gemm", "alpha");
  const auto beta_arg = gemm_scalar(beta, out.scalar_type(), "gemm", "beta");
  args.alpha = alpha_arg.arg;
  args.beta = beta_arg.arg;
  args.use_c = beta_arg.nonzero;
  args.a = matrix_ref(a);
  args.b = matrix_ref(b);
  args.c = args.use_c ? matrix_ref(c) : foo::kernels::MatrixRef{nullptr, 0, 0, 0};
  args.d = mutable_matrix_ref(target);
  FOO_CALL_KERNEL(gemm, stream_of(out), args);
  if (!target.is_same(out)) out.copy_(target);
}

// y = alpha * a @ x + beta * c (a: M,K; x: K; c broadcast to [M] or undefined when beta == 0;
// out: M elements, 0-d or 1-D).
void run_gemv(const at::Tensor& a, const at::Tensor& x, const at::Tensor& c, const at::Scalar& alpha,
              const at::Scalar& beta, const at::Tensor& out) {
  if (out.numel() == 0) return;
  at::assert_no_internal_overlap(out);
  const bool in_place_c = c.defined() && c.is_same(out);
  at::Tensor target = out;
  if (overlaps(out, a) || overlaps(out, x) || (!in_place_c && overlaps(out, c))) {
    target = at::empty(out.sizes(), out.options());
  }
  foo::kernels::GemvArgs args{};
  args.dtype = kernel_dtype(out.scalar_type());
  args.m = out.numel();
  args.k = a.size(1);
  const auto alpha_arg = gemm_scalar(alpha, out.scalar_type(), "gemv", "alpha");
  const auto beta_arg = gemm_scalar(beta, out.scalar_type(), "gemv", "beta");
  args.alpha = alpha_arg.arg;
  args.beta = beta_arg.arg;
  args.use_c = beta_arg.nonzero;
  args.a = a.const_data_ptr();
  args.a_row_stride = a.stride(0);
  args.a_col_stride = a.stride(1);
  args.x = x.const_data_ptr();
  args.x_stride = x.stride(0);
  if (args.use_c) {
    args.c = c.const_data_ptr();
    args.c_stride = c.dim() == 0 ? 0 : c.stride(0);
  }
  args.y = target.mutable_data_ptr();
  args.y_stride = target.dim() == 0 ? 0 : target.stride(0);
  FOO_CALL_KERNEL(gemv, stream_of(out), args);
  if (!target.is_same(out)) out.copy_(target);
}

}  // namespace

// ATen's meta functions of mm and addmm leave the dtype checks to the kernels (the CPU's words).
TORCH_IMPL_FUNC(mm_out)(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              self.dtype(), " != ", mat2.dtype());
  check_supported_dtype("mm", self.scalar_type());
  run_gemm(self, mat2, at::Tensor(), 1.0, 0.0, out);
}

TORCH_IMPL_FUNC(bmm_out)(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out) {
  check_supported_dtype("bmm", self.scalar_type());
  run_gemm(self, mat2, at::Tensor(), 1.0, 0.0, out);
}

// In place (addmm_), out is self.
TORCH_IMPL_FUNC(addmm_out)(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "self and mat2 must have the same dtype, but got ",
              self.scalar_type(), " and ", mat2.scalar_type());
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(), "mat1 and mat2 must have the same dtype, but got ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  check_supported_dtype("addmm", self.scalar_type());
  const bool use_c = gemm_scalar(beta, self.scalar_type(), "addmm", "beta").nonzero;
  // Broadcast self ([N], [1, N], [M, 1], a scalar, ...) to [M, N]: stride 0, no copy.
  const at::Tensor c = out.is_same(self) ? out : self.expand(out.sizes());
  run_gemm(mat1, mat2, use_c ? c : at::Tensor(), alpha, beta, out);
}

TORCH_IMPL_FUNC(addmv_out)(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                           const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  check_supported_dtype("addmv", self.scalar_type());
  const bool use_c = gemm_scalar(beta, self.scalar_type(), "addmv", "beta").nonzero;
  gemm_scalar(alpha, self.scalar_type(), "addmv", "alpha");  // its errors before any launch
  if (mat.numel() == 0 && use_c) {
    // As the CPU: beta * self, through mul_out, which gives `out` self's own shape (self of
    // shape [1] and mat [4, 0] give a [1] result).
    at::mul_out(const_cast<at::Tensor&>(out), self,
                at::scalar_tensor(beta, at::TensorOptions().dtype(self.scalar_type()).device(at::kCPU)));
    return;
  }
  const at::Tensor c = out.is_same(self) ? out : self.expand(out.sizes());
  run_gemv(mat, vec, use_c ? c : at::Tensor(), alpha, beta, out);
}

at::Tensor& dot_out(const at::Tensor& self, const at::Tensor& tensor, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 1 && tensor.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == tensor.scalar_type(),
              "dot : expected both vectors to have same dtype, but found ", self.scalar_type(), " and ",
              tensor.scalar_type());
  TORCH_CHECK(self.numel() == tensor.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", tensor.numel(), "] to have the same number of elements, but got ", self.numel(),
              " and ", tensor.numel(), " elements respectively");
  check_supported_dtype("dot", self.scalar_type());
  TORCH_CHECK(!out.defined() || out.scalar_type() == self.scalar_type(), "result dtype ", out.scalar_type(),
              " does not match input dtype ", self.scalar_type());
  prepare_out(out, {}, self.options());
  // A 1 x K matrix (self) times a K-vector.
  run_gemv(self.unsqueeze(0), tensor, at::Tensor(), 1.0, 0.0, out);
  return out;
}

}  // namespace foo::native
