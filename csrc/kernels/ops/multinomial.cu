#include "kernels/ops/multinomial.h"

#include "kernels/core/det_math.h"
#include "kernels/core/exact_math.h"
#include "kernels/core/kernel.h"
#include "kernels/core/philox.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;  // fixed: the running sums' rounding depends on the chunking
constexpr int64_t kMaxBlocks = 1024;

enum : int { kBadWeight = 1, kZeroSum = 2 };  // bits of *error: the host reports bad weights first

// The uniform of element e of a launch: u0 or u1 of counter e / 2.
__device__ inline double uniform_of(int64_t e, uint64_t seed, uint64_t offset) {
  const Philox4 r = philox_draw(e / 2, seed, offset);
  return (e & 1) ? unit_double(r.v[2], r.v[3]) : unit_double(r.v[0], r.v[1]);
}

__device__ inline bool bad_weight(double p) { return !(p >= 0.0 && p < static_cast<double>(INFINITY)); }

// Running sums of each row: every thread sums a contiguous chunk, thread 0 turns the chunk
// totals into offsets, then every thread writes its chunk's running sums.
template <typename T>
__global__ void running_sums_kernel(const T* probs, int64_t n_rows, int64_t n_cat, double* sums, int* error) {
  __shared__ double chunk_start[kThreads];
  const int64_t chunk = (n_cat + kThreads - 1) / kThreads;
  const int64_t begin = threadIdx.x * chunk;
  const int64_t end = begin + chunk < n_cat ? begin + chunk : n_cat;
  for (int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const T* p = probs + row * n_cat;
    double* s = sums + row * n_cat;
    double total = 0.0;
    bool bad = false;
    for (int64_t c = begin; c < end; ++c) {
      const double w = static_cast<double>(static_cast<opmath_t<T>>(p[c]));
      bad = bad || bad_weight(w);
      total = add_rn(total, w);
    }
    chunk_start[threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.x == 0) {
      double run = 0.0;
      for (unsigned t = 0; t < kThreads; ++t) {
        const double next = add_rn(run, chunk_start[t]);
        chunk_start[t] = run;
        run = next;
      }
    }
    __syncthreads();
    double run = chunk_start[threadIdx.x];
    for (int64_t c = begin; c < end; ++c) {
      run = add_rn(run, static_cast<double>(static_cast<opmath_t<T>>(p[c])));
      s[c] = run;
    }
    if (bad) atomicOr(error, kBadWeight);
    __syncthreads();
    if (threadIdx.x == 0 && !(s[n_cat - 1] > 0.0)) atomicOr(error, kZeroSum);
    __syncthreads();
  }
}

// First index in [0, n) with pred(i), or n; pred monotone (false then true).
template <typename Pred>
__device__ inline int64_t first_where(int64_t n, Pred pred) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

__global__ void sample_kernel(const double* sums, int64_t n_rows, int64_t n_cat, int64_t n_sample, uint64_t seed,
                              uint64_t offset, int64_t* out) {
  const int64_t n = n_rows * n_sample;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double* s = sums + (i / n_sample) * n_cat;
    const double total = s[n_cat - 1];
    const double target = mul_rn(uniform_of(i, seed, offset), total);
    int64_t k = first_where(n_cat, [&](int64_t c) { return s[c] > target; });
    // u * total can round up to total: take the last category of non-zero weight.
    if (k == n_cat) k = first_where(n_cat, [&](int64_t c) { return s[c] >= total; });
    out[i] = k;
  }
}

// Keys p / E, then n_sample rounds of a block-wide argmax that retires the winner (key -1).
template <typename T>
__global__ void without_replacement_kernel(const T* probs, int64_t n_rows, int64_t n_cat, int64_t n_sample,
                                           uint64_t seed, uint64_t offset, double* keys, int64_t* out, int* error) {
  __shared__ double best_key[kThreads];
  __shared__ int64_t best_index[kThreads];
  for (int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const T* p = probs + row * n_cat;
    double* key = keys + row * n_cat;
    bool bad = false, positive = false;
    for (int64_t c = threadIdx.x; c < n_cat; c += blockDim.x) {
      const double w = static_cast<double>(static_cast<opmath_t<T>>(p[c]));
      bad = bad || bad_weight(w);
      positive = positive || w > 0.0;
      double lg = det_log(1.0 - uniform_of(row * n_cat + c, seed, offset));
      if (lg > -0x1p-53) lg = -0x1p-53;  // E > 0
      key[c] = div_rn(w, -lg);
    }
    const bool any_bad = __syncthreads_or(bad);
    const bool any_positive = __syncthreads_or(positive);
    if (threadIdx.x == 0 && (any_bad || !any_positive)) atomicOr(error, any_bad ? kBadWeight : kZeroSum);
    for (int64_t j = 0; j < n_sample; ++j) {
      double bk = -2.0;
      int64_t bi = n_cat;
      for (int64_t c = threadIdx.x; c < n_cat; c += blockDim.x) {
        if (key[c] > bk) {  // c increases: a tie keeps the lower index
          bk = key[c];
          bi = c;
        }
      }
      best_key[threadIdx.x] = bk;
      best_index[threadIdx.x] = bi;
      __syncthreads();
      for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
          const double ok = best_key[threadIdx.x + half];
          const int64_t oi = best_index[threadIdx.x + half];
          if (ok > best_key[threadIdx.x] || (ok == best_key[threadIdx.x] && oi < best_index[threadIdx.x])) {
            best_key[threadIdx.x] = ok;
            best_index[threadIdx.x] = oi;
          }
        }
        __syncthreads();
      }
      if (threadIdx.x == 0) {
        // A nan weight (an error the host raises) can leave no winner: keep indices valid.
        const int64_t winner = best_index[0] < n_cat ? best_index[0] : 0;
        out[row * n_sample + j] = winner;
        key[winner] = -1.0;
      }
      __syncthreads();
    }
  }
}

// A block per row (grid-stride past kMaxBlocks rows).
dim3 grid_of(int64_t rows) { return capped_grid(rows, kMaxBlocks); }

}  // namespace

void multinomial(Stream stream, DType dtype, const void* probs, int64_t n_rows, int64_t n_cat, int64_t n_sample,
                 bool replacement, uint64_t seed, uint64_t offset, double* scratch, int64_t* out, int* error) {
  dispatch<kFloatingTypes>(dtype, "multinomial", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n_rows == 0 || n_sample == 0) return;
    const T* p = static_cast<const T*>(probs);
    if (!replacement) {
      launch("multinomial", without_replacement_kernel<T>, grid_of(n_rows), dim3(kThreads), 0, stream, p, n_rows,
             n_cat, n_sample, seed, offset, scratch, out, error);
      return;
    }
    launch("multinomial", running_sums_kernel<T>, grid_of(n_rows), dim3(kThreads), 0, stream, p, n_rows, n_cat,
           scratch, error);
    launch_independent("multinomial", sample_kernel, blocks_for(n_rows * n_sample, kThreads, kMaxBlocks),
                       dim3(kThreads), stream, static_cast<const double*>(scratch), n_rows, n_cat, n_sample, seed,
                       offset, out);
  });
}

}  // namespace foo::kernels::FOO_TARGET
