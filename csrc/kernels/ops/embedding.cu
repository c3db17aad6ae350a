// embedding_renorm_ (embedding.h): a block per listed row reduces the row's norm (in float, or
// double for float64), and every thread scales its share of the row when the norm is too large.
#include <cmath>

#include "kernels/core/dtype.h"
#include "kernels/ops/embedding.h"
#include "kernels/core/kernel.h"
#include "kernels/core/softmax_reduce.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace softmax_detail;

constexpr unsigned kThreads = 256;

struct MinOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};

template <typename T>
__global__ void renorm_kernel(T* table, int64_t row_stride, int64_t col_stride, int64_t width, const int64_t* rows,
                              int64_t n, double max_norm, double norm_type) {
  using A = opmath_t<T>;
  __shared__ A scratch[kWarp];
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {  // uniform over the block
    T* row = table + rows[r] * row_stride;
    const bool inf = norm_type == INFINITY, neg_inf = norm_type == -INFINITY;
    const A p = static_cast<A>(norm_type);
    A acc = neg_inf ? A(INFINITY) : A(0);
    for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
      const A x = static_cast<A>(row[c * col_stride]);
      const A ax = x < A(0) ? -x : x;
      if (inf) acc = MaxOp()(acc, ax);
      else if (neg_inf) acc = MinOp()(acc, ax);
      else if (norm_type == 0) acc += x != A(0) ? A(1) : A(0);
      else if (norm_type == 1) acc += ax;
      else if (norm_type == 2) acc += x * x;
      else acc += pow(ax, p);
    }
    A norm;
    if (inf) norm = block_reduce(acc, MaxOp(), A(0), scratch);
    else if (neg_inf) norm = block_reduce(acc, MinOp(), A(INFINITY), scratch);
    else norm = block_reduce(acc, SumOp(), A(0), scratch);
    if (norm_type == 2) norm = sqrt(norm);
    else if (!inf && !neg_inf && norm_type != 0 && norm_type != 1) norm = pow(norm, A(1) / p);
    if (static_cast<double>(norm) > max_norm) {
      const A scale = static_cast<A>(max_norm / (static_cast<double>(norm) + 1e-7));
      for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
        row[c * col_stride] = cast<T>(static_cast<A>(row[c * col_stride]) * scale);
      }
    }
  }
}

}  // namespace

void renorm_rows(Stream stream, DType dtype, void* table, int64_t row_stride, int64_t col_stride, int64_t width,
                 const int64_t* rows, int64_t n, double max_norm, double norm_type) {
  if (n == 0 || width == 0) return;
  dispatch<kFloatingTypes>(dtype, "embedding_renorm_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("embedding_renorm_", renorm_kernel<T>, capped_grid(n), dim3(kThreads), 0, stream, static_cast<T*>(table),
           row_stride, col_stride, width, rows, n, max_norm, norm_type);
  });
}

}  // namespace foo::kernels::FOO_TARGET
