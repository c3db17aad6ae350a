// Dense linear algebra (linalg.h): one block per matrix (grid-stride over the batch), the matrix in
// global memory through its strides. Each algorithm is a loop over columns: the block reduces what
// a column needs (a norm, a pivot) with block_reduce.h and updates the rest in parallel, one
// __syncthreads per step. float32 and float64, computed in the element type as LAPACK does.
#include "kernels/block_reduce.h"
#include "kernels/dtype.h"
#include "kernels/kernel.h"
#include "kernels/linalg.h"
#include "kernels/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr uint32_t kLinalgTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

template <typename T>
struct Mat {
  T* p;
  int64_t rs, cs;
  __device__ __forceinline__ T& operator()(int64_t i, int64_t j) const { return p[i * rs + j * cs]; }
};

template <typename T>
__device__ __forceinline__ Mat<T> matrix(const LinalgMatrix& m, int64_t b) {
  return {static_cast<T*>(m.data) + b * m.batch_stride, m.row_stride, m.col_stride};
}

struct Add {
  template <typename A>
  __device__ __forceinline__ A operator()(A x, A y) const { return x + y; }
};

// NaN-propagating max (a NaN column gives NaN results, as LAPACK's).
struct MaxNaN {
  template <typename A>
  __device__ __forceinline__ A operator()(A x, A y) const { return (x != x || x > y) ? x : y; }
};

template <typename T>
__global__ void qr_kernel(QrArgs a) {
  __shared__ T scratch[kWarp];
  const int64_t m = a.m, n = a.n, k = m < n ? m : n;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<T> A = matrix<T>(a.a, b);
    T* tau = static_cast<T*>(a.tau) + b * k;
    // geqrf: column j's reflector, then its application to the columns right of it.
    for (int64_t j = 0; j < k; ++j) {
      // ||A[j+1:, j]||, scaled by the largest magnitude so that squares neither overflow nor underflow.
      T big(0);
      for (int64_t i = j + 1 + tid; i < m; i += nt) big = MaxNaN()(big, math::fabs(A(i, j)));
      big = block_reduce(big, MaxNaN(), T(0), scratch);
      T s(0);
      if (big > T(0)) {
        for (int64_t i = j + 1 + tid; i < m; i += nt) {
          const T x = A(i, j) / big;
          s += x * x;
        }
      }
      s = block_reduce(s, Add(), T(0), scratch);
      const T alpha = A(j, j);
      T t(0), beta = alpha, scale(0);
      if (big != T(0)) {  // NaN included: it propagates
        const T xnorm = big * math::sqrt(s);
        beta = -math::copysign(math::hypot(alpha, xnorm), alpha);
        t = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
      }
      __syncthreads();  // every thread has read A(j, j)
      if (big != T(0)) {
        for (int64_t i = j + 1 + tid; i < m; i += nt) A(i, j) *= scale;
      }
      if (tid == 0) {
        A(j, j) = beta;
        tau[j] = t;
      }
      __syncthreads();
      if (t != T(0)) {
        // A[j:, c] -= t * v (v^T A[j:, c]), a thread per column c > j.
        for (int64_t c = j + 1 + tid; c < n; c += nt) {
          T w = A(j, c);
          for (int64_t i = j + 1; i < m; ++i) w += A(i, j) * A(i, c);
          w *= t;
          A(j, c) -= w;
          for (int64_t i = j + 1; i < m; ++i) A(i, c) -= w * A(i, j);
        }
      }
      __syncthreads();
    }
    if (a.r.data != nullptr) {
      const Mat<T> R = matrix<T>(a.r, b);
      for (int64_t e = tid; e < a.r_rows * n; e += nt) {
        const int64_t i = e % a.r_rows, c = e / a.r_rows;
        R(i, c) = i <= c ? A(i, c) : T(0);
      }
    }
    if (a.q_cols > 0) {
      // orgqr: Q = H_0 (H_1 (... (H_{k-1} I))), a thread per column.
      const Mat<T> Q = matrix<T>(a.q, b);
      for (int64_t e = tid; e < m * a.q_cols; e += nt) {
        const int64_t i = e % m, c = e / m;
        Q(i, c) = i == c ? T(1) : T(0);
      }
      __syncthreads();
      for (int64_t j = k - 1; j >= 0; --j) {
        const T t = tau[j];
        if (t != T(0)) {
          // Columns left of j are still e_c there: H_j leaves them alone.
          for (int64_t c = j + tid; c < a.q_cols; c += nt) {
            T w = Q(j, c);
            for (int64_t i = j + 1; i < m; ++i) w += A(i, j) * Q(i, c);
            w *= t;
            Q(j, c) -= w;
            for (int64_t i = j + 1; i < m; ++i) Q(i, c) -= w * A(i, j);
          }
        }
        __syncthreads();
      }
    }
    __syncthreads();  // the next matrix's first reduction reuses scratch
  }
}

// Left-looking (Crout) Cholesky: column j's pivot is a block reduction over row j of L, then a
// thread per row i > j computes L(i, j) from rows i and j of the finished columns.
template <typename T>
__global__ void cholesky_kernel(CholeskyArgs a) {
  __shared__ T scratch[kWarp];
  const int64_t n = a.n;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<T> L = matrix<T>(a.a, b);
    int32_t info = 0;
    for (int64_t j = 0; j < n; ++j) {
      T s(0);
      for (int64_t c = tid; c < j; c += nt) s += L(j, c) * L(j, c);
      s = block_reduce(s, Add(), T(0), scratch);
      const T d = L(j, j) - s;
      if (!(d > T(0))) {  // not positive (or NaN): the same decision in every thread
        info = static_cast<int32_t>(j + 1);
        break;
      }
      const T ljj = math::sqrt(d);
      for (int64_t i = j + 1 + tid; i < n; i += nt) {
        T x = L(i, j);
        for (int64_t c = 0; c < j; ++c) x -= L(i, c) * L(j, c);
        L(i, j) = x / ljj;
      }
      __syncthreads();  // every thread has read L(j, j) (as d) before it changes
      if (tid == 0) L(j, j) = ljj;
      __syncthreads();
    }
    if (tid == 0) a.info[b] = info;
    for (int64_t e = tid; e < n * n; e += nt) {
      const int64_t i = e % n, c = e / n;
      if (c > i) L(i, c) = T(0);
    }
    __syncthreads();
  }
}

// Column-oriented substitution (LAPACK's trsm order for one column): step i finishes row i of x,
// then every (row r past i, column c) pair subtracts A(r, i) x(i, c); rows r fastest across threads.
template <typename T>
__global__ void triangular_solve_kernel(TriangularSolveArgs a) {
  const int64_t n = a.n, k = a.k;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<T> A = matrix<T>(a.a, b);
    const Mat<T> X = matrix<T>(a.x, b);
    for (int64_t step = 0; step < n; ++step) {
      const int64_t i = a.lower ? step : n - 1 - step;
      if (!a.unit) {
        const T d = A(i, i);
        for (int64_t c = tid; c < k; c += nt) X(i, c) /= d;
      }
      __syncthreads();
      const int64_t rows = a.lower ? n - 1 - i : i;  // rows still to update: below (lower) or above i
      const int64_t first = a.lower ? i + 1 : 0;
      for (int64_t e = tid; e < rows * k; e += nt) {
        const int64_t r = first + e % rows, c = e / rows;
        X(r, c) -= A(r, i) * X(i, c);
      }
      __syncthreads();
    }
  }
}

struct MinIndex {
  __device__ __forceinline__ int64_t operator()(int64_t x, int64_t y) const { return x < y ? x : y; }
};

// Right-looking unblocked LU (LAPACK's getf2): per column, the pivot search (two block
// reductions: the largest magnitude, then the first row holding it), the row swap, the scaling
// of the column below the pivot, and the rank-1 update of the trailing matrix.
template <typename T>
__global__ void lu_kernel(LuArgs a) {
  __shared__ T scratch[kWarp];
  __shared__ int64_t index_scratch[kWarp];
  const int64_t m = a.m, n = a.n, k = m < n ? m : n;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  const int64_t none = m;  // "no row": larger than every candidate
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<T> A = matrix<T>(a.a, b);
    int32_t* piv = a.pivots + b * k;
    int32_t info = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t p = j;
      if (a.pivot) {
        T big(0);
        for (int64_t i = j + tid; i < m; i += nt) big = MaxNaN()(big, math::fabs(A(i, j)));
        big = block_reduce(big, MaxNaN(), T(0), scratch);
        int64_t first = none;
        for (int64_t i = j + tid; i < m; i += nt) {
          const T x = math::fabs(A(i, j));
          if ((x == big || (big != big && x != x)) && i < first) first = i;
        }
        first = block_reduce(first, MinIndex(), none, index_scratch);
        p = first == none ? j : first;
      }
      const T d = A(p, j);
      if (d == T(0) && info == 0) info = static_cast<int32_t>(j + 1);
      if (tid == 0) piv[j] = static_cast<int32_t>(p + 1);
      __syncthreads();  // every thread has read A(p, j)
      if (p != j) {
        for (int64_t c = tid; c < n; c += nt) {
          const T t = A(j, c);
          A(j, c) = A(p, c);
          A(p, c) = t;
        }
      }
      __syncthreads();
      if (d != T(0)) {
        for (int64_t i = j + 1 + tid; i < m; i += nt) A(i, j) /= d;
      }
      __syncthreads();
      const int64_t rows = m - j - 1;
      for (int64_t e = tid; e < rows * (n - j - 1); e += nt) {
        const int64_t i = j + 1 + e % rows, c = j + 1 + e / rows;
        A(i, c) -= A(i, j) * A(j, c);
      }
      __syncthreads();
    }
    if (tid == 0) a.info[b] = info;
  }
}

// A thread per column of x walks the interchanges in order (or in reverse).
template <typename T>
__global__ void apply_pivots_kernel(PivotArgs a) {
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<T> X = matrix<T>(a.x, b);
    const int32_t* piv = a.pivots + b * a.npiv;
    for (int64_t c = threadIdx.x; c < a.k; c += blockDim.x) {
      for (int64_t s = 0; s < a.npiv; ++s) {
        const int64_t j = a.reverse ? a.npiv - 1 - s : s;
        const int64_t p = piv[j] - 1;
        if (p != j && p >= 0 && p < a.n) {  // a pivot out of range (not LAPACK's) is ignored, never followed
          const T t = X(j, c);
          X(j, c) = X(p, c);
          X(p, c) = t;
        }
      }
    }
  }
}

unsigned threads_for_matrix(int64_t cols) { return threads_for(cols, 256); }

}  // namespace

void linalg_qr(Stream stream, const QrArgs& args) {
  if (args.batch == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_qr", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t widest = args.n > args.q_cols ? args.n : args.q_cols;
    launch("linalg_qr", qr_kernel<T>, capped_grid(args.batch), dim3(threads_for_matrix(widest > args.m ? widest : args.m)),
           0, stream, args);
  });
}

void linalg_cholesky(Stream stream, const CholeskyArgs& args) {
  if (args.batch == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_cholesky", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("linalg_cholesky", cholesky_kernel<T>, capped_grid(args.batch), dim3(threads_for_matrix(args.n)), 0, stream,
           args);
  });
}

void linalg_triangular_solve(Stream stream, const TriangularSolveArgs& args) {
  if (args.batch == 0 || args.n == 0 || args.k == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_triangular_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("linalg_triangular_solve", triangular_solve_kernel<T>, capped_grid(args.batch),
           dim3(threads_for_matrix(args.n * args.k)), 0, stream, args);
  });
}

void linalg_lu(Stream stream, const LuArgs& args) {
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_lu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("linalg_lu", lu_kernel<T>, capped_grid(args.batch), dim3(threads_for_matrix(args.m > args.n ? args.m : args.n)),
           0, stream, args);
  });
}

void linalg_apply_pivots(Stream stream, const PivotArgs& args) {
  if (args.batch == 0 || args.npiv == 0 || args.k == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_apply_pivots", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("linalg_apply_pivots", apply_pivots_kernel<T>, capped_grid(args.batch),
                       dim3(threads_for_matrix(args.k)), stream, args);
  });
}

}  // namespace foo::kernels::FOO_TARGET
