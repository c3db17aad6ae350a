// Dense linear algebra (linalg.h): one block per matrix (grid-stride over the batch), the matrix in
// global memory through its strides. Each algorithm is a loop over columns: the block reduces what
// a column needs (a norm, a pivot) with block_reduce.h and updates the rest in parallel, one
// __syncthreads per step. float32 and float64, computed in the element type as LAPACK does; the
// Jacobi eigh and SVD (a loop of sweeps over parallel rotations) compute in double.
#include "kernels/core/block_reduce.h"
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/ops/linalg.h"
#include "kernels/core/math.cuh"

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

// Machine epsilon of T (LAPACK's dlamch('E') * 2: 2^-23, 2^-52).
template <typename T>
__device__ __forceinline__ T linalg_eps() {
  return sizeof(T) == 4 ? T(1.1920928955078125e-7) : T(2.220446049250313e-16);
}

// The round-robin (circle) order of Jacobi sweeps over n2 (even) indices: in step k, slot i pairs
// the indices at positions i and n2 - 1 - i, position 0 fixed and the others shifted by k. Every
// pair meets once in n2 - 1 steps; the pairs of one step are disjoint, so their rotations commute.
__device__ __forceinline__ int64_t round_robin(int64_t position, int64_t k, int64_t n2) {
  return position == 0 ? 0 : (position - 1 + k) % (n2 - 1) + 1;
}

// The rotation (c, s) that diagonalises [[app, apq], [apq, aqq]] as J^T A J with J = [[c, s], [-s, c]]
// on (p, q) (Rutishauser's, |t| <= 1: the smaller angle): t = sign(theta) / (|theta| + sqrt(1 +
// theta^2)), theta = (aqq - app) / (2 apq); the new diagonal is app - t apq, aqq + t apq.
template <typename T>
__device__ __forceinline__ T jacobi_t(T app, T aqq, T apq) {
  const T theta = (aqq - app) / (T(2) * apq);
  const T t = T(1) / (math::fabs(theta) + math::hypot(T(1), theta));
  return theta < T(0) ? -t : t;
}

// NaN-last total order with index ties (a permutation even with NaN).
template <typename T>
__device__ __forceinline__ bool before(T x, T y, int64_t i, int64_t j, bool descending) {
  const bool x_nan = x != x, y_nan = y != y;
  if (x_nan || y_nan) return x_nan == y_nan ? i < j : y_nan;
  if (x == y) return i < j;
  return descending ? x > y : x < y;
}

// Cyclic two-sided Jacobi, a block per matrix: each step computes the rotations of its n2/2 disjoint
// pairs (a thread per pair), applies them to the rows, then to the columns (and to the eigenvector
// columns), a thread per (pair, element), then sets each pair's 2x2 block exactly (a_pq = 0). A
// sweep in which no pair rotated ends the iteration. T: the computation (double, whatever the
// input: float32's eigenvectors then come out orthogonal to float32's rounding, not to the
// rounding of some n^2 sweeps x rotations); IO: the element type of A and of the outputs.
template <typename T, typename IO>
__global__ void eigh_kernel(EighArgs a) {
  __shared__ T scratch[kWarp];
  const int64_t n = a.n, n2 = n + (n & 1), half = n2 / 2;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  const bool vecs = a.v.data != nullptr;
  const T eps = linalg_eps<IO>();  // convergence to the output's precision
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<IO> A = matrix<IO>(a.a, b);
    T* base = static_cast<T*>(a.work) + b * (2 * n * n + 4 * (n + 1));
    const Mat<T> W{base, n, 1};
    const Mat<T> V{base + n * n, n, 1};
    T* rot = base + 2 * n * n;
    T big(0);
    for (int64_t e = tid; e < n * n; e += nt) {
      const int64_t i = e / n, j = e % n;
      const T x = static_cast<T>((a.lower ? i >= j : i <= j) ? A(i, j) : A(j, i));
      W(i, j) = x;
      big = MaxNaN()(big, math::fabs(x));
      if (vecs) V(i, j) = i == j ? T(1) : T(0);
    }
    big = block_reduce(big, MaxNaN(), T(0), scratch);
    // A NaN or inf entry: no sweeps, every output NaN (the CPU raises LAPACK's non-convergence).
    const T poison = big - big;
    const bool finite = poison == T(0);
    T fro(0);
    if (big > T(0)) {
      for (int64_t e = tid; e < n * n; e += nt) {
        const T x = W(e / n, e % n) / big;
        fro += x * x;
      }
    }
    fro = block_reduce(fro, Add(), T(0), scratch);
    // Off-diagonal entries below eps ||A||_F / n change no eigenvalue by more than eps ||A||_F.
    const T small = eps * big * math::sqrt(fro) / T(n);
    for (int32_t sweep = 0; finite && sweep < a.max_sweeps; ++sweep) {
      T rotated(0);
      for (int64_t k = 0; k < n2 - 1; ++k) {
        for (int64_t i = tid; i < half; i += nt) {
          const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
          T c(1), s(0), app(0), aqq(0);
          if (p < n && q < n) {
            const T apq = W(p, q);
            app = W(p, p);
            aqq = W(q, q);
            const T mag = math::fabs(apq);
            if (mag > small && mag > eps * math::sqrt(math::fabs(app)) * math::sqrt(math::fabs(aqq))) {
              const T t = jacobi_t(app, aqq, apq);
              c = T(1) / math::sqrt(T(1) + t * t);
              s = t * c;
              app -= t * apq;
              aqq += t * apq;
              if (s != T(0)) rotated = T(1);  // theta overflowing gives t = 0: nothing to do
            }
          }
          rot[4 * i] = c;
          rot[4 * i + 1] = s;
          rot[4 * i + 2] = app;
          rot[4 * i + 3] = aqq;
        }
        __syncthreads();
        for (int64_t e = tid; e < half * n; e += nt) {  // rows p, q <- J^T: neighbouring threads, neighbouring columns
          const int64_t i = e / n, j = e % n;
          const T s = rot[4 * i + 1];
          if (s != T(0)) {
            const T c = rot[4 * i];
            const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
            const T x = W(p, j), y = W(q, j);
            W(p, j) = c * x - s * y;
            W(q, j) = s * x + c * y;
          }
        }
        __syncthreads();
        for (int64_t e = tid; e < half * n; e += nt) {  // columns p, q <- J
          const int64_t i = e % half, r = e / half;
          const T s = rot[4 * i + 1];
          if (s != T(0)) {
            const T c = rot[4 * i];
            const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
            const T x = W(r, p), y = W(r, q);
            W(r, p) = c * x - s * y;
            W(r, q) = s * x + c * y;
            if (vecs) {
              const T vx = V(r, p), vy = V(r, q);
              V(r, p) = c * vx - s * vy;
              V(r, q) = s * vx + c * vy;
            }
          }
        }
        __syncthreads();
        for (int64_t i = tid; i < half; i += nt) {
          if (rot[4 * i + 1] != T(0)) {
            const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
            W(p, p) = rot[4 * i + 2];
            W(q, q) = rot[4 * i + 3];
            W(p, q) = T(0);
            W(q, p) = T(0);
          }
        }
        __syncthreads();
      }
      rotated = block_reduce(rotated, MaxNaN(), T(0), scratch);
      if (rotated == T(0)) break;  // the same decision in every thread
    }
    // Ascending (NaN last): each eigenvalue's rank places it and its vector.
    IO* w = static_cast<IO*>(a.w) + b * n;
    const Mat<IO> Vout = vecs ? matrix<IO>(a.v, b) : Mat<IO>{nullptr, 0, 0};
    for (int64_t i = tid; i < n; i += nt) {
      const T d = finite ? W(i, i) : poison;
      int64_t rank = 0;
      for (int64_t j = 0; j < n; ++j) rank += before(finite ? W(j, j) : poison, d, j, i, false) ? 1 : 0;
      w[rank] = static_cast<IO>(d);
      if (vecs) {
        for (int64_t r = 0; r < n; ++r) Vout(r, rank) = static_cast<IO>(finite ? V(r, i) : poison);
      }
    }
    __syncthreads();
  }
}

// One-sided Jacobi (Hestenes), a block per matrix: each step computes its n2/2 pairs' rotations
// from the columns' dot products (a thread per pair, three sums over m), then rotates the column
// pairs of the workspace and of V, a thread per (pair, row). A sweep in which no pair rotated ends
// the iteration; the singular values are the columns' norms. T (double) and IO as eigh_kernel's.
template <typename T, typename IO>
__global__ void svd_kernel(SvdArgs a) {
  __shared__ T scratch[kWarp];
  const int64_t m = a.m, n = a.n, n2 = n + (n & 1), half = n2 / 2;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  const bool vecs = a.u.data != nullptr;
  const T eps = linalg_eps<IO>();
  for (int64_t b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const Mat<IO> A = matrix<IO>(a.a, b);
    T* base = static_cast<T*>(a.work) + b * (m * n + n * n + 2 * (n + 1));
    const Mat<T> U{base, 1, m};  // column-major: a thread's column sums walk contiguous memory
    const Mat<T> V{base + m * n, 1, n};
    T* rot = base + m * n + n * n;
    T big(0);
    for (int64_t e = tid; e < m * n; e += nt) {
      const T x = static_cast<T>(A(e % m, e / m));
      U(e % m, e / m) = x;
      big = MaxNaN()(big, math::fabs(x));
    }
    if (vecs) {
      for (int64_t e = tid; e < n * n; e += nt) V(e % n, e / n) = e % n == e / n ? T(1) : T(0);
    }
    big = block_reduce(big, MaxNaN(), T(0), scratch);  // its barriers order the copies too
    // A NaN or inf entry: no sweeps, every output NaN (the CPU raises LAPACK's non-convergence).
    const T poison = big - big;
    const bool finite = poison == T(0);
    for (int32_t sweep = 0; finite && sweep < a.max_sweeps; ++sweep) {
      T rotated(0);
      for (int64_t k = 0; k < n2 - 1; ++k) {
        for (int64_t i = tid; i < half; i += nt) {
          const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
          T c(1), s(0);
          if (p < n && q < n) {
            T alpha(0), beta(0), gamma(0);
            for (int64_t r = 0; r < m; ++r) {
              const T x = U(r, p), y = U(r, q);
              alpha += x * x;
              beta += y * y;
              gamma += x * y;
            }
            if (gamma != T(0) && math::fabs(gamma) > eps * math::sqrt(alpha) * math::sqrt(beta)) {
              const T t = jacobi_t(alpha, beta, gamma);
              c = T(1) / math::sqrt(T(1) + t * t);
              s = t * c;
              if (s != T(0)) rotated = T(1);
            }
          }
          rot[2 * i] = c;
          rot[2 * i + 1] = s;
        }
        __syncthreads();
        const int64_t rows = vecs ? m + n : m;
        for (int64_t e = tid; e < half * rows; e += nt) {
          const int64_t i = e / rows, r = e % rows;
          const T s = rot[2 * i + 1];
          if (s != T(0)) {
            const T c = rot[2 * i];
            const int64_t p = round_robin(i, k, n2), q = round_robin(n2 - 1 - i, k, n2);
            const Mat<T>& X = r < m ? U : V;
            const int64_t row = r < m ? r : r - m;
            const T x = X(row, p), y = X(row, q);
            X(row, p) = c * x - s * y;
            X(row, q) = s * x + c * y;
          }
        }
        __syncthreads();
      }
      rotated = block_reduce(rotated, MaxNaN(), T(0), scratch);
      if (rotated == T(0)) break;
    }
    // sigma_j = ||u_j||, scaled by the column's largest magnitude (no overflow/underflow of squares).
    for (int64_t j = tid; j < n; j += nt) {
      T col_big(0);
      for (int64_t r = 0; r < m; ++r) col_big = MaxNaN()(col_big, math::fabs(U(r, j)));
      T sum(0);
      if (col_big > T(0)) {
        for (int64_t r = 0; r < m; ++r) {
          const T x = U(r, j) / col_big;
          sum += x * x;
        }
      }
      rot[j] = finite ? (col_big != T(0) ? col_big * math::sqrt(sum) : col_big) : poison;
    }
    __syncthreads();
    IO* sv = static_cast<IO*>(a.s) + b * n;
    const Mat<IO> Uout = vecs ? matrix<IO>(a.u, b) : Mat<IO>{nullptr, 0, 0};
    const Mat<IO> Vout = vecs ? matrix<IO>(a.v, b) : Mat<IO>{nullptr, 0, 0};
    for (int64_t i = tid; i < n; i += nt) {  // descending (NaN last), by rank
      const T sigma = rot[i];
      int64_t rank = 0;
      for (int64_t j = 0; j < n; ++j) rank += before(rot[j], sigma, j, i, true) ? 1 : 0;
      sv[rank] = static_cast<IO>(sigma);
      if (vecs) {
        for (int64_t r = 0; r < m; ++r) Uout(r, rank) = static_cast<IO>(finite ? (sigma > T(0) ? U(r, i) / sigma : T(0)) : poison);
        for (int64_t r = 0; r < n; ++r) Vout(r, rank) = static_cast<IO>(finite ? V(r, i) : poison);
      }
    }
    __syncthreads();
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

void linalg_eigh(Stream stream, const EighArgs& args) {
  if (args.batch == 0 || args.n == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_eigh", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("linalg_eigh", eigh_kernel<double, T>, capped_grid(args.batch), dim3(threads_for_matrix(args.n * args.n / 2)), 0,
           stream, args);
  });
}

void linalg_svd(Stream stream, const SvdArgs& args) {
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  dispatch<kLinalgTypes>(args.dtype, "linalg_svd", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("linalg_svd", svd_kernel<double, T>, capped_grid(args.batch), dim3(threads_for_matrix(args.m * args.n / 2)), 0, stream,
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
