// Matrix products (docs/kernels.md, "Matrix products").
//
// gemm: d = alpha * a @ b + beta * c, batched over blockIdx.z, on the tiled core of
// gemm_tile.cuh (shared with the convolutions). Operands are read through arbitrary element
// strides, so transposed or sliced views need no copy; the tile load maps consecutive threads
// along whichever index of the operand has the smaller stride, keeping global reads coalesced
// for both row- and column-major operands.
//
// gemv: y = alpha * a @ x + beta * c. TPR threads share one row: lanes stride over k and the
// partial sums meet in a shared-memory tree (fixed order: the result does not depend on timing).
#include "kernels/ops/gemm.h"
#include "kernels/core/gemm_tile.cuh"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using gemm_tile::acc_t;

// An element of T as the accumulator: widened for 16-bit floats, reduced modulo 2^bits (two's
// complement, well defined for unsigned targets) for integers.
template <typename T>
__device__ __forceinline__ acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<acc_t<T>>(v);
  else return static_cast<acc_t<T>>(static_cast<opmath_t<T>>(v));
}

// The accumulator back to T: integers keep their low bits (the CPU's wrapped result).
template <typename T>
__device__ __forceinline__ T from_acc(acc_t<T> v) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
  else return cast<T>(v);
}

// alpha / beta as the CPU converts them (Scalar::to<opmath_t<T>>, checked on the host), then as
// accumulators.
template <typename T>
acc_t<T> scalar_acc(const ScalarArg& s) {
  return static_cast<acc_t<T>>(s.as<opmath_t<T>>());
}

// A matrix operand: element (b, outer, k) at data[b * sb + outer * s_outer + k * s_k] (outer: the row
// of a, the column of b), converted to the accumulation type.
template <typename T>
struct StridedOperand {
  using Cursor = const T*;
  const T* data;
  int64_t sb, s_outer, s_k;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t b, int64_t outer) const { return data + b * sb + outer * s_outer; }
  __device__ __forceinline__ acc_t<T> load(Cursor c, int64_t k) const { return to_acc(c[k * s_k]); }
  // gemm_tile's panel kernel (sim): neighbouring rows/columns adjacent, loaded as one run.
  __device__ __forceinline__ bool outer_adjacent() const { return s_outer == 1; }
  template <int N>
  __device__ __forceinline__ void load_adjacent(Cursor c, int64_t k, acc_t<T> (&out)[N]) const {
    for (int i = 0; i < N; ++i) out[i] = to_acc(c[k * s_k + i]);
  }
};

// d = alpha * acc (+ beta * c). With k == 0 the product is an empty sum and contributes exactly 0
// whatever alpha is, as on the CPU.
template <typename T>
struct GemmEpilogue {
  const T* c;
  T* d;
  int64_t c_sb, c_sm, c_sn, d_sb, d_sm, d_sn, k;
  acc_t<T> alpha, beta;
  bool use_c;  // beta != 0
  __device__ __forceinline__ void store(int64_t b, int64_t row, int64_t col, acc_t<T> acc) const {
    acc_t<T> v = k > 0 ? alpha * acc : acc_t<T>(0);
    if (use_c) v += beta * to_acc(c[b * c_sb + row * c_sm + col * c_sn]);
    d[b * d_sb + row * d_sm + col * d_sn] = from_acc<T>(v);
  }
};

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

template <typename T>
struct GemvParams {
  const T* a;
  const T* x;
  const T* c;
  T* y;
  int64_t m, k, a_sm, a_sk, x_s, c_s, y_s;
  acc_t<T> alpha, beta;
  bool use_c;
};

template <typename T>
__device__ __forceinline__ void gemv_store(const GemvParams<T>& p, int64_t row, acc_t<T> acc) {
  acc_t<T> v = p.k > 0 ? p.alpha * acc : acc_t<T>(0);
  if (p.use_c) v += p.beta * to_acc(p.c[row * p.c_s]);
  p.y[row * p.y_s] = from_acc<T>(v);
}

// One row per thread: for a with unit row stride (column-major), consecutive threads read
// consecutive addresses. No communication between threads.
template <typename T>
__global__ void gemv_row_per_thread_kernel(GemvParams<T> p) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.m) return;
  acc_t<T> acc(0);
  for (int64_t j = 0; j < p.k; ++j) acc += to_acc(p.a[row * p.a_sm + j * p.a_sk]) * to_acc(p.x[j * p.x_s]);
  gemv_store(p, row, acc);
}

// TPR threads per row, 256 / TPR rows per block; partial sums reduced in shared memory.
template <typename T, int TPR>
__global__ void __launch_bounds__(256) gemv_reduce_kernel(GemvParams<T> p) {
  constexpr int kRows = 256 / TPR;
  __shared__ acc_t<T> partial[256];
  const int tid = threadIdx.x, lane = tid % TPR;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRows + tid / TPR;
  acc_t<T> acc(0);
  if (row < p.m) {
    const T* a = p.a + row * p.a_sm;
    for (int64_t j = lane; j < p.k; j += TPR) acc += to_acc(a[j * p.a_sk]) * to_acc(p.x[j * p.x_s]);
  }
  partial[tid] = acc;
  __syncthreads();
#pragma unroll
  for (int w = TPR / 2; w > 0; w /= 2) {
    if (lane < w) partial[tid] += partial[tid + w];
    __syncthreads();
  }
  if (lane == 0 && row < p.m) gemv_store(p, row, partial[tid]);
}

template <typename T>
void launch_gemv(Stream stream, const GemvParams<T>& p) {
  if (p.k > 0 && !(p.a_sm == 1 && abs64(p.a_sk) > 1 && p.m >= 512)) {
    if (p.m < 512) {
      launch("foo::gemv", gemv_reduce_kernel<T, 256>, dim3(static_cast<unsigned>(p.m)), dim3(256), 0, stream, p);
    } else {
      launch("foo::gemv", gemv_reduce_kernel<T, 32>, dim3(static_cast<unsigned>((p.m + 7) / 8)), dim3(256), 0,
             stream, p);
    }
    return;
  }
  launch_independent("foo::gemv", gemv_row_per_thread_kernel<T>, blocks_for(p.m), dim3(256), stream, p);
}

}  // namespace

void gemm(Stream stream, const GemmArgs& args) {
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  dispatch<kNumericTypes>(args.dtype, "foo::gemm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const MatrixRef& a = args.a;
    const MatrixRef& b = args.b;
    // Consecutive threads go along the index with the smaller stride (ties: the contiguous one).
    const StridedOperand<T> ao{static_cast<const T*>(a.data), a.batch_stride, a.row_stride, a.col_stride,
                               a.col_stride == 1 || (a.row_stride != 1 && abs64(a.col_stride) <= abs64(a.row_stride))};
    const bool b_n_fast = b.col_stride == 1 || (b.row_stride != 1 && abs64(b.col_stride) <= abs64(b.row_stride));
    const StridedOperand<T> bo{static_cast<const T*>(b.data), b.batch_stride, b.col_stride, b.row_stride, !b_n_fast};
    GemmEpilogue<T> e;
    e.c = static_cast<const T*>(args.c.data);
    e.d = static_cast<T*>(args.d.data);
    e.c_sb = args.c.batch_stride, e.c_sm = args.c.row_stride, e.c_sn = args.c.col_stride;
    e.d_sb = args.d.batch_stride, e.d_sm = args.d.row_stride, e.d_sn = args.d.col_stride;
    e.k = args.k;
    e.alpha = scalar_acc<T>(args.alpha);
    e.beta = scalar_acc<T>(args.beta);
    e.use_c = args.use_c;
    gemm_tile::launch_product<acc_t<T>>("foo::gemm", stream, {args.batch, args.m, args.n, args.k}, ao, bo, e);
  });
}

void gemv(Stream stream, const GemvArgs& args) {
  if (args.m == 0) return;
  dispatch<kNumericTypes>(args.dtype, "foo::gemv", [&](auto tag) {
    using T = typename decltype(tag)::type;
    GemvParams<T> p;
    p.a = static_cast<const T*>(args.a);
    p.x = static_cast<const T*>(args.x);
    p.c = static_cast<const T*>(args.c);
    p.y = static_cast<T*>(args.y);
    p.m = args.m;
    p.k = args.k;
    p.a_sm = args.a_row_stride;
    p.a_sk = args.a_col_stride;
    p.x_s = args.x_stride;
    p.c_s = args.c_stride;
    p.y_s = args.y_stride;
    p.alpha = scalar_acc<T>(args.alpha);
    p.beta = scalar_acc<T>(args.beta);
    p.use_c = args.use_c;
    launch_gemv(stream, p);
  });
}

}  // namespace foo::kernels::FOO_TARGET
