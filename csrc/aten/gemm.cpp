// Matrix products: mm, bmm, addmm (tiled GEMM), addmv and dot (GEMV), csrc/kernels/gemm.cu.
// Shapes, dtypes and error messages follow the CPU kernels; operands are passed with their
// strides (transposed and sliced views, broadcast bias) and never copied, except when the output
// overlaps an input.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>

#include "aten/kernel_dtype.h"
#include "kernels/gemm.h"
#include "native/addmm_out.h"
#include "native/addmv_out.h"
#include "native/bmm_out.h"
#include "native/dot_out.h"
#include "native/mm_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {


void check_supported_dtype(const char* op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16, op,
                              ": foo has no kernel for dtype ", t,
                              " (matrix products support float32, float64, float16 and bfloat16)");
}

// As structured out= kernels check their out argument.
void check_out_dtype(const at::Tensor& out, caffe2::TypeMeta expected) {
  TORCH_CHECK(out.dtype() == expected, "Expected out tensor to have dtype ", expected, ", but got ", out.dtype(),
              " instead");
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

double scalar_value(const at::Scalar& s, const char* op, const char* name) {
  TORCH_CHECK(!s.isComplex(), op, ": foo does not support a complex ", name);
  return s.toDouble();
}

// result = alpha * a @ b + beta * c over batches (a: [B,]M,K; b: [B,]K,N; c broadcast to out's
// shape or undefined when beta == 0); out already has its final shape and dtype.
void run_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, double alpha, double beta,
              at::Tensor& out) {
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
  args.alpha = alpha;
  args.beta = beta;
  args.a = matrix_ref(a);
  args.b = matrix_ref(b);
  args.c = beta != 0.0 ? matrix_ref(c) : foo::kernels::MatrixRef{nullptr, 0, 0, 0};
  args.d = mutable_matrix_ref(target);
  FOO_CALL_KERNEL(gemm, foo::runtime::current_native_stream(out.device().index()), args);
  if (!target.is_same(out)) out.copy_(target);
}

// y = alpha * a @ x + beta * c (a: M,K; x: K; c broadcast to [M] or undefined when beta == 0;
// out: M elements, 0-d or 1-D).
void run_gemv(const at::Tensor& a, const at::Tensor& x, const at::Tensor& c, double alpha, double beta,
              at::Tensor& out) {
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
  args.alpha = alpha;
  args.beta = beta;
  args.a = a.const_data_ptr();
  args.a_row_stride = a.stride(0);
  args.a_col_stride = a.stride(1);
  args.x = x.const_data_ptr();
  args.x_stride = x.stride(0);
  if (beta != 0.0) {
    args.c = c.const_data_ptr();
    args.c_stride = c.dim() == 0 ? 0 : c.stride(0);
  }
  args.y = target.mutable_data_ptr();
  args.y_stride = target.dim() == 0 ? 0 : target.stride(0);
  FOO_CALL_KERNEL(gemv, foo::runtime::current_native_stream(out.device().index()), args);
  if (!target.is_same(out)) out.copy_(target);
}

// An out= argument: the functional overload passes an undefined one, which is allocated here.
void prepare_out(at::Tensor& out, at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!out.defined()) {
    out = at::empty(sizes, options);
    return;
  }
  check_out_dtype(out, options.dtype());
  at::native::resize_output(out, sizes);
}

void check_in_place_shape(const at::Tensor& self, const at::Tensor& out, at::IntArrayRef sizes) {
  if (out.defined() && out.is_same(self)) {
    TORCH_CHECK(self.sizes() == sizes, "Bad in-place call: input tensor size ", self.sizes(),
                " and output tensor size ", sizes, " should match");
  }
}

void check_mm_shapes(const at::Tensor& mat1, const at::Tensor& mat2) {
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
}

}  // namespace

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              self.dtype(), " != ", mat2.dtype());
  check_mm_shapes(self, mat2);
  check_supported_dtype("mm", self.scalar_type());
  prepare_out(out, {self.size(0), mat2.size(1)}, self.options());
  run_gemm(self, mat2, at::Tensor(), 1.0, 0.0, out);
  return out;
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t bs = self.size(0), contraction = self.size(2);
  TORCH_CHECK(mat2.size(0) == bs && mat2.size(1) == contraction,
              "Expected size for first two dimensions of batch2 tensor to be: [", bs, ", ", contraction,
              "] but got: [", mat2.size(0), ", ", mat2.size(1), "].");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", mat2.scalar_type());
  check_supported_dtype("bmm", self.scalar_type());
  prepare_out(out, {bs, self.size(1), mat2.size(2)}, self.options());
  run_gemm(self, mat2, at::Tensor(), 1.0, 0.0, out);
  return out;
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "self and mat2 must have the same dtype, but got ",
              self.scalar_type(), " and ", mat2.scalar_type());
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(), "mat1 and mat2 must have the same dtype, but got ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  TORCH_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  check_mm_shapes(mat1, mat2);
  check_supported_dtype("addmm", self.scalar_type());
  const std::vector<int64_t> sizes{mat1.size(0), mat2.size(1)};
  check_in_place_shape(self, out, sizes);
  const double beta_v = scalar_value(beta, "addmm", "beta");
  const double alpha_v = scalar_value(alpha, "addmm", "alpha");
  // Broadcast self ([N], [1, N], [M, 1], a scalar, ...) to [M, N]: stride 0, no copy.
  const at::Tensor c = self.expand(sizes);
  prepare_out(out, sizes, mat1.options());
  run_gemm(mat1, mat2, beta_v != 0.0 ? (out.is_same(self) ? out : c) : at::Tensor(), alpha_v, beta_v, out);
  return out;
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.size(0), "), mat (", mat.size(0),
              "x", mat.size(1), "), vec (", vec.size(0), ")");
  TORCH_CHECK(self.scalar_type() == mat.scalar_type() && mat.scalar_type() == vec.scalar_type(),
              "addmv input tensors must have the same dtype, but got ", self.scalar_type(), ", ", mat.scalar_type(),
              ", and ", vec.scalar_type());
  check_supported_dtype("addmv", self.scalar_type());
  const std::vector<int64_t> sizes{mat.size(0)};
  check_in_place_shape(self, out, sizes);
  const double beta_v = scalar_value(beta, "addmv", "beta");
  const double alpha_v = scalar_value(alpha, "addmv", "alpha");
  if (mat.numel() == 0 && beta_v != 0.0) {
    // As the CPU and CUDA kernels do, an empty matrix gives beta * self in self's own shape
    // (not broadcast to [M]: e.g. self of shape [1] and mat [4, 0] give a [1] result).
    prepare_out(out, self.sizes(), mat.options());
    run_gemv(mat.new_empty({self.numel(), 0}), vec, out.is_same(self) ? out : self.reshape({-1}), alpha_v, beta_v, out);
    return out;
  }
  const at::Tensor c = self.expand(sizes);
  prepare_out(out, sizes, mat.options());
  run_gemv(mat, vec, beta_v != 0.0 ? (out.is_same(self) ? out : c) : at::Tensor(), alpha_v, beta_v, out);
  return out;
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
  if (out.defined()) {
    TORCH_CHECK(out.scalar_type() == self.scalar_type(), "result dtype ", out.scalar_type(),
                " does not match input dtype ", self.scalar_type());
    at::native::resize_output(out, {});
  } else {
    out = at::empty({}, self.options());
  }
  // A 1 x K matrix (self) times a K-vector.
  run_gemv(self.unsqueeze(0), tensor, at::Tensor(), 1.0, 0.0, out);
  return out;
}

}  // namespace foo::native
