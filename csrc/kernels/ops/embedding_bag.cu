// embedding_bag (embedding_bag.h). Forward: a block per bag (grid-stride over bags), a thread per
// column walking the bag's indices in order, so sums add in the CPU's order, in opmath_t, and max
// keeps the first of equal values (a later one replaces it only when strictly greater), as the
// CPU's. Backward: a block per index position adds its scaled gradient row with atomics (sum,
// mean); a thread per (bag, column) adds to the row its maximum came from (max); a block per
// position reduces a dot product (per_sample_weights).
#include <cmath>

#include "kernels/core/atomic_ops.h"
#include "kernels/core/block_reduce.h"
#include "kernels/core/dtype.h"
#include "kernels/ops/embedding_bag.h"
#include "kernels/core/kernel.h"
#include "kernels/core/softmax_reduce.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr uint32_t kIndexTypes = dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
constexpr unsigned kThreads = 256;

// v clamped into [lo, hi].
__device__ __forceinline__ int64_t clamp_to(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

template <typename I>
__global__ void offset2bag_kernel(const I* offsets, int64_t num_offsets, int64_t n, I* offset2bag) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t lo = 0, hi = num_offsets;  // the first offset greater than i (offsets are non-decreasing)
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (static_cast<int64_t>(offsets[mid]) <= i) lo = mid + 1;
      else hi = mid;
    }
    offset2bag[i] = static_cast<I>(lo - 1);
  }
}

template <typename T, typename I>
__global__ void forward_kernel(EmbeddingBagArgs a) {
  using A = opmath_t<T>;
  const T* weight = static_cast<const T*>(a.weight);
  const T* psw = static_cast<const T*>(a.per_sample_weights);
  const I* indices = static_cast<const I*>(a.indices);
  const I* offsets = static_cast<const I*>(a.offsets);
  T* out = static_cast<T*>(a.output);
  const int64_t n = a.num_indices;
  const int64_t cols = a.width > 0 ? a.width : 1;  // with no columns a thread still counts the bag
  for (int64_t b = blockIdx.x; b < a.num_bags; b += gridDim.x) {
    // Offsets clamped into [0, n] so that bad ones never read outside `indices`.
    const int64_t begin = clamp_to(offsets[b], 0, n);
    const int64_t end = b + 1 < a.num_bags ? clamp_to(offsets[b + 1], begin, n) : n;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const bool has_col = c < a.width;
      A acc(0);
      T best = cast<T>(A(0));
      int64_t arg = 0, count = 0;
      bool bad = false;
      for (int64_t i = begin; i < end; ++i) {
        const int64_t idx = indices[i];
        if (idx == a.padding_idx) continue;
        const bool first = count == 0;
        ++count;
        if (idx < 0 || idx >= a.num_weights) {
          bad = true;
          continue;
        }
        if (!has_col) continue;
        const T w = weight[idx * a.weight_stride0 + c * a.weight_stride1];
        if (a.mode == BagMode::Max) {
          if (first || static_cast<A>(w) > static_cast<A>(best)) {
            best = w;
            arg = idx;
          }
        } else if (psw != nullptr) {
          acc += static_cast<A>(w) * static_cast<A>(psw[i * a.psw_stride]);
        } else {
          acc += static_cast<A>(w);
        }
      }
      if (has_col) {
        T r;
        if (bad) r = cast<T>(A(NAN));
        else if (a.mode == BagMode::Max) r = best;
        // The CPU rounds the sum to T, then divides by the count in T: so do we, to agree with it.
        else if (a.mode == BagMode::Mean && count > 0) r = cast<T>(static_cast<A>(cast<T>(acc)) / static_cast<A>(count));
        else r = cast<T>(acc);
        out[b * a.width + c] = r;
        if (a.mode == BagMode::Max) static_cast<I*>(a.max_indices)[b * a.width + c] = static_cast<I>(arg);
      }
      if (c == 0 && a.mode != BagMode::Sum) {
        static_cast<I*>(a.bag_size)[b] = static_cast<I>(count);
        if (a.mode == BagMode::Mean) static_cast<I*>(a.max_indices)[b] = static_cast<I>(count);  // the CPU's copy
      }
    }
  }
}

template <typename I>
__global__ void count_kernel(const I* indices, int64_t n, int64_t num_weights, int64_t* counts) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t idx = indices[i];
    if (idx >= 0 && idx < num_weights) atomic_combine<Combine::Add>(counts + idx, int64_t{1});
  }
}

template <typename T, typename I>
__global__ void backward_sum_mean_kernel(EmbeddingBagArgs a) {
  using A = opmath_t<T>;
  const T* grad = static_cast<const T*>(a.grad);
  const T* psw = static_cast<const T*>(a.per_sample_weights);
  const I* indices = static_cast<const I*>(a.indices);
  const I* offset2bag = static_cast<const I*>(a.offset2bag);
  const I* bag_size = static_cast<const I*>(a.bag_size);
  const int64_t* counts = static_cast<const int64_t*>(a.counts);
  A* grad_weight = static_cast<A*>(a.grad_weight);
  for (int64_t i = blockIdx.x; i < a.num_indices; i += gridDim.x) {
    const int64_t idx = indices[i], bag = offset2bag[i];
    if (idx == a.padding_idx || idx < 0 || idx >= a.num_weights || bag < 0 || bag >= a.num_bags) continue;
    // The CPU's scale: psw / count / bag size in double, rounded once.
    double scale = psw != nullptr ? static_cast<double>(static_cast<A>(psw[i * a.psw_stride])) : 1.0;
    if (counts != nullptr) scale /= static_cast<double>(counts[idx]);
    if (a.mode == BagMode::Mean && bag_size[bag] != 0) scale /= static_cast<double>(bag_size[bag]);
    const A s = static_cast<A>(scale);
    for (int64_t c = threadIdx.x; c < a.width; c += blockDim.x) {
      atomic_combine<Combine::Add>(grad_weight + idx * a.width + c, s * static_cast<A>(grad[bag * a.width + c]));
    }
  }
}

template <typename T, typename I>
__global__ void backward_max_kernel(EmbeddingBagArgs a) {
  using A = opmath_t<T>;
  const T* grad = static_cast<const T*>(a.grad);
  const I* bag_size = static_cast<const I*>(a.bag_size);
  const I* max_indices = static_cast<const I*>(a.max_indices);
  A* grad_weight = static_cast<A*>(a.grad_weight);
  const int64_t total = a.num_bags * a.width;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = e / a.width, c = e % a.width, m = max_indices[e];
    // An empty bag (bag_size 0) took no row, as the CPU's backward says.
    if (bag_size[b] == 0 || m < 0 || m >= a.num_weights) continue;
    atomic_combine<Combine::Add>(grad_weight + m * a.width + c, static_cast<A>(grad[e]));
  }
}

template <typename T, typename I>
__global__ void psw_backward_kernel(EmbeddingBagArgs a) {
  using A = opmath_t<T>;
  __shared__ A scratch[kWarp];
  const T* grad = static_cast<const T*>(a.grad);
  const T* weight = static_cast<const T*>(a.weight);
  const I* indices = static_cast<const I*>(a.indices);
  const I* offset2bag = static_cast<const I*>(a.offset2bag);
  T* out = static_cast<T*>(a.grad_psw);
  for (int64_t i = blockIdx.x; i < a.num_indices; i += gridDim.x) {  // uniform over the block
    const int64_t idx = indices[i], bag = offset2bag[i];
    const bool used = idx != a.padding_idx && idx >= 0 && idx < a.num_weights && bag >= 0 && bag < a.num_bags;
    A dot(0);
    if (used) {
      for (int64_t c = threadIdx.x; c < a.width; c += blockDim.x) {
        dot += static_cast<A>(grad[bag * a.width + c]) *
               static_cast<A>(weight[idx * a.weight_stride0 + c * a.weight_stride1]);
      }
    }
    dot = block_reduce(dot, softmax_detail::SumOp(), A(0), scratch);
    if (threadIdx.x == 0) out[i] = cast<T>(dot);
  }
}

template <typename F>
void dispatch_both(const EmbeddingBagArgs& a, F&& f) {
  dispatch<kFloatingTypes>(a.dtype, "embedding_bag", [&](auto tag) {
    dispatch<kIndexTypes>(a.index_dtype, "embedding_bag", [&](auto itag) { f(tag, itag); });
  });
}

}  // namespace

void embedding_bag_offset2bag(Stream stream, DType index_dtype, const void* offsets, int64_t num_offsets,
                              int64_t num_indices, void* offset2bag) {
  if (num_indices == 0) return;
  dispatch<kIndexTypes>(index_dtype, "embedding_bag", [&](auto itag) {
    using I = typename decltype(itag)::type;
    launch_independent("embedding_bag_offset2bag", offset2bag_kernel<I>, blocks_for(num_indices, kThreads, 65535),
                       dim3(threads_for(num_indices, kThreads)), stream, static_cast<const I*>(offsets), num_offsets,
                       num_indices, static_cast<I*>(offset2bag));
  });
}

void embedding_bag_forward(Stream stream, const EmbeddingBagArgs& a) {
  if (a.num_bags == 0) return;
  dispatch_both(a, [&](auto tag, auto itag) {
    using T = typename decltype(tag)::type;
    using I = typename decltype(itag)::type;
    launch_independent("embedding_bag", forward_kernel<T, I>, capped_grid(a.num_bags),
                       dim3(threads_for(a.width > 0 ? a.width : 1, kThreads)), stream, a);
  });
}

void embedding_bag_count(Stream stream, const EmbeddingBagArgs& a, int64_t* counts) {
  if (a.num_indices == 0) return;
  dispatch<kIndexTypes>(a.index_dtype, "embedding_bag", [&](auto itag) {
    using I = typename decltype(itag)::type;
    launch_independent("embedding_bag_count", count_kernel<I>, blocks_for(a.num_indices, kThreads, 65535),
                       dim3(threads_for(a.num_indices, kThreads)), stream, static_cast<const I*>(a.indices),
                       a.num_indices, a.num_weights, counts);
  });
}

void embedding_bag_backward(Stream stream, const EmbeddingBagArgs& a) {
  if (a.width == 0) return;
  dispatch_both(a, [&](auto tag, auto itag) {
    using T = typename decltype(tag)::type;
    using I = typename decltype(itag)::type;
    if (a.mode == BagMode::Max) {
      const int64_t total = a.num_bags * a.width;
      if (total == 0) return;
      launch_independent("embedding_bag_backward_max", backward_max_kernel<T, I>, blocks_for(total, kThreads, 65535),
                         dim3(threads_for(total, kThreads)), stream, a);
    } else if (a.num_indices > 0) {
      launch_independent("embedding_bag_backward", backward_sum_mean_kernel<T, I>, capped_grid(a.num_indices),
                         dim3(threads_for(a.width, kThreads)), stream, a);
    }
  });
}

void embedding_bag_psw_backward(Stream stream, const EmbeddingBagArgs& a) {
  if (a.num_indices == 0) return;
  dispatch_both(a, [&](auto tag, auto itag) {
    using T = typename decltype(tag)::type;
    using I = typename decltype(itag)::type;
    launch("embedding_bag_per_sample_weights_backward", psw_backward_kernel<T, I>, capped_grid(a.num_indices),
           dim3(threads_for(a.width, kThreads)), 0, stream, a);
  });
}

}  // namespace foo::kernels::FOO_TARGET
