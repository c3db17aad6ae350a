// cdist: _cdist_forward and _cdist_backward (kernels/ops/distance.cu). ATen's own implementation
// (Distance.cpp) refuses devices other than CPU and CUDA for its kernel path, so the host logic is
// repeated here with its checks and messages: batch dims broadcast and flattened, empty cases,
// and p = 2 on more than 25 rows (or compute_mode 1) through _euclidean_dist (matmul), as ATen.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <c10/util/accumulate.h>

#include <vector>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/distance.h"
#include "native/cdist_backward.h"
#include "native/cdist_forward.h"

namespace foo::native {
namespace {

constexpr uint32_t kCdistTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

// x1 [..., r1, c] and x2 [..., r2, c] with their batch dims broadcast: the expanded sizes.
struct CdistShape {
  std::vector<int64_t> batch;
  int64_t batch_product = 1, r1 = 0, r2 = 0, c = 0;
  std::vector<int64_t> with(int64_t rows, int64_t cols) const {
    std::vector<int64_t> s(batch);
    s.insert(s.end(), {rows, cols});
    return s;
  }
};

CdistShape cdist_shape(const at::Tensor& x1, const at::Tensor& x2) {
  CdistShape s;
  s.batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  s.batch_product = c10::multiply_integers(s.batch);
  s.r1 = x1.size(-2);
  s.r2 = x2.size(-2);
  s.c = x1.size(-1);
  return s;
}

// x expanded to `sizes`, dense, viewed as [batch, rows, c].
at::Tensor flat_batches(const at::Tensor& x, const std::vector<int64_t>& sizes, const CdistShape& s, int64_t rows) {
  return x.expand(sizes).contiguous().view({s.batch_product, rows, s.c});
}

}  // namespace

at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "cdist: X1 and X2 must have one dtype, got ", x1.scalar_type(),
              " and ", x2.scalar_type());
  const CdistShape s = cdist_shape(x1, x2);
  const std::vector<int64_t> output_shape = s.with(s.r1, s.r2);
  if (s.r1 == 0 || s.r2 == 0 || s.batch_product == 0) return at::empty(output_shape, x1.options());
  if (s.c == 0) return at::zeros(output_shape, x1.options());
  const at::Tensor t1 = flat_batches(x1, s.with(s.r1, s.c), s, s.r1);
  const at::Tensor t2 = flat_batches(x2, s.with(s.r2, s.c), s, s.r2);
  if (p == 2 && (mode == 1 || (mode == 0 && (s.r1 > 25 || s.r2 > 25)))) {
    // As ATen: the matmul formulation, whose backward autograd derives from its ops.
    const at::Tensor dist = s.batch_product == 1 ? at::_euclidean_dist(x1, x2) : at::_euclidean_dist(t1, t2);
    return dist.view(output_shape);
  }
  check_kernel_dtype("cdist", x1.scalar_type(), kCdistTypes);
  at::Tensor result = at::empty(output_shape, x1.options());
  const foo::kernels::CdistArgs args{t1.const_data_ptr(), t2.const_data_ptr(), s.batch_product, s.r1, s.r2, s.c, p};
  FOO_CALL_KERNEL(cdist_forward, stream_of(x1), kernel_dtype(x1.scalar_type()), args, result.mutable_data_ptr());
  return result;
}

// The gradient with respect to x1 (autograd calls it with x1 and x2 swapped for x2's), in x1's
// expanded shape: broadcasting is autograd's to undo.
at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2, double p,
                          const at::Tensor& cdist) {
  const CdistShape s = cdist_shape(x1, x2);
  const std::vector<int64_t> x1_shape = s.with(s.r1, s.c);
  if (s.r1 == 0 || s.r2 == 0 || s.c == 0 || s.batch_product == 0) return at::zeros_like(x1, x1.options());
  check_kernel_dtype("_cdist_backward", x1.scalar_type(), kCdistTypes);
  for (const at::Tensor* t : {&grad, &x2, &cdist}) {
    TORCH_CHECK(t->scalar_type() == x1.scalar_type(), "_cdist_backward: expected every tensor of dtype ",
                x1.scalar_type(), ", but got ", t->scalar_type());
  }
  const at::Tensor t1 = flat_batches(x1, x1_shape, s, s.r1);
  const at::Tensor t2 = flat_batches(x2, s.with(s.r2, s.c), s, s.r2);
  const at::Tensor g = grad.contiguous(), dist = cdist.contiguous();
  TORCH_CHECK(g.numel() == s.batch_product * s.r1 * s.r2 && dist.numel() == g.numel(),
              "_cdist_backward: grad and cdist must have ", s.batch_product * s.r1 * s.r2, " elements");
  at::Tensor grad_x1 = at::empty({s.batch_product, s.r1, s.c}, x1.options());
  const foo::kernels::CdistArgs args{t1.const_data_ptr(), t2.const_data_ptr(), s.batch_product, s.r1, s.r2, s.c, p};
  FOO_CALL_KERNEL(cdist_backward, stream_of(x1), kernel_dtype(x1.scalar_type()), args, g.const_data_ptr(),
                  dist.const_data_ptr(), grad_x1.mutable_data_ptr());
  return grad_x1.view(x1_shape);
}

}  // namespace foo::native
