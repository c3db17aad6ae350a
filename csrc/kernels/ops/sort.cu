// Row sort (sort.h): every row is cut into tiles of up to kSortTile keys, each sorted by one block
// with a bitonic network in shared memory; then merge passes double the sorted runs until they
// cover the row. In a merge pass every key finds its place by itself: its rank in its own run
// plus the number of keys of the partner run that come before it (a binary search) — no
// communication, so a pass is one independent launch. Comparing (key, original index) makes
// the order total, hence stable and the same on every target and grid.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/ops/sort.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kMergeThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

template <typename T>
__device__ __forceinline__ bool key_is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    const auto x = static_cast<opmath_t<T>>(v);
    return x != x;
  }
}

// Whether (a, ia) comes before (b, ib).
template <typename T>
__device__ __forceinline__ bool before(T a, int64_t ia, T b, int64_t ib, bool descending) {
  const bool a_nan = key_is_nan(a), b_nan = key_is_nan(b);
  if (a_nan != b_nan) return descending ? a_nan : b_nan;
  if (!a_nan) {
    const auto x = static_cast<opmath_t<T>>(a), y = static_cast<opmath_t<T>>(b);
    if (x != y) return descending ? x > y : x < y;
  }
  return ia < ib;
}

// One block sorts one tile (at most kSortTile keys) of a row per iteration: keys and their
// indices in shared memory, padded to a power of two with slots that sort last.
template <typename T>
__global__ void sort_tiles(T* keys, int64_t* indices, int64_t rows, int64_t n, int64_t tile, bool descending) {
  FOO_DYNAMIC_SHARED(unsigned char, smem);
  const int64_t slots = 2 * static_cast<int64_t>(blockDim.x);  // a power of two >= tile
  int64_t* sidx = reinterpret_cast<int64_t*>(smem);
  T* skey = reinterpret_cast<T*>(smem + slots * sizeof(int64_t));
  const int64_t tiles_per_row = (n + tile - 1) / tile;
  for (int64_t t = blockIdx.x; t < rows * tiles_per_row; t += gridDim.x) {  // uniform over the block
    const int64_t row = t / tiles_per_row, start = (t - row * tiles_per_row) * tile;
    const int64_t len = n - start < tile ? n - start : tile;
    T* k = keys + row * n + start;
    for (int64_t s = threadIdx.x; s < slots; s += blockDim.x) {
      sidx[s] = s < len ? start + s : -1;  // -1: padding, after every key
      if (s < len) skey[s] = k[s];
    }
    __syncthreads();
    for (int64_t size = 2; size <= slots; size <<= 1) {
      for (int64_t stride = size / 2; stride > 0; stride >>= 1) {
        for (int64_t s = threadIdx.x; s < slots / 2; s += blockDim.x) {
          // The pair (lo, hi) of this step, and whether it sorts up or down in its bitonic run.
          const int64_t lo = 2 * s - (s & (stride - 1)), hi = lo + stride;
          const bool up = (lo & size) == 0;
          const int64_t il = sidx[lo], ih = sidx[hi];
          bool hi_first;
          if (il < 0 || ih < 0) hi_first = il < 0 && ih >= 0;
          else hi_first = before(skey[hi], ih, skey[lo], il, descending);
          if (hi_first == up) {
            sidx[lo] = ih;
            sidx[hi] = il;
            const T tmp = skey[lo];
            skey[lo] = skey[hi];
            skey[hi] = tmp;
          }
        }
        __syncthreads();
      }
    }
    int64_t* out_idx = indices + row * n + start;
    for (int64_t s = threadIdx.x; s < len; s += blockDim.x) {
      k[s] = skey[s];
      out_idx[s] = sidx[s];
    }
    __syncthreads();  // shared memory is reused by the block's next tile
  }
}

// Merges pairs of sorted runs of `width` keys (src -> dst): key p of a run goes to the merged
// position (p - run start) + (keys of the partner run before it).
template <typename T>
__global__ void merge_runs(const T* src_keys, const int64_t* src_idx, T* dst_keys, int64_t* dst_idx, int64_t rows,
                           int64_t n, int64_t width, bool descending) {
  const int64_t total = rows * n;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / n, p = e - row * n;
    const int64_t pair_start = p / (2 * width) * (2 * width);
    const bool left = p - pair_start < width;
    const int64_t own_start = left ? pair_start : pair_start + width;
    const int64_t other_start = left ? pair_start + width : pair_start;
    const int64_t other_end = std::min(other_start + width, n);
    const T* rk = src_keys + row * n;
    const int64_t* ri = src_idx + row * n;
    const T key = rk[p];
    const int64_t idx = ri[p];
    // Keys of the other run that come before this one (the order is total: no ties).
    int64_t lo = other_start, hi = other_start < other_end ? other_end : other_start;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (before(rk[mid], ri[mid], key, idx, descending)) lo = mid + 1;
      else hi = mid;
    }
    const int64_t q = pair_start + (p - own_start) + (lo - other_start);
    dst_keys[row * n + q] = key;
    dst_idx[row * n + q] = idx;
  }
}

template <typename T>
__global__ void copy_rows(const T* src_keys, const int64_t* src_idx, T* dst_keys, int64_t* dst_idx, int64_t total) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst_keys[e] = src_keys[e];
    dst_idx[e] = src_idx[e];
  }
}

dim3 grid_of(int64_t blocks) {
  return dim3(static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

template <typename T>
void run(Stream stream, T* keys, int64_t* indices, T* scratch_keys, int64_t* scratch_indices, int64_t rows,
         int64_t n, bool descending) {
  const int64_t tile = std::min<int64_t>(n, kSortTile);
  unsigned threads = 32;  // half the padded tile: each thread compares one pair per step
  while (2 * static_cast<int64_t>(threads) < tile) threads <<= 1;
  const size_t shared = 2 * static_cast<size_t>(threads) * (sizeof(int64_t) + sizeof(T));
  const int64_t tiles = rows * ((n + tile - 1) / tile);
  launch("sort", sort_tiles<T>, grid_of(tiles), dim3(threads), shared, stream, keys, indices, rows, n, tile,
         descending);
  if (n <= tile) return;
  T *src_k = keys, *dst_k = scratch_keys;
  int64_t *src_i = indices, *dst_i = scratch_indices;
  const dim3 grid = grid_of((rows * n + kMergeThreads - 1) / kMergeThreads);
  for (int64_t width = tile; width < n; width *= 2) {
    launch_independent("sort_merge", merge_runs<T>, grid, dim3(kMergeThreads), stream, src_k, src_i, dst_k, dst_i,
                       rows, n, width, descending);
    std::swap(src_k, dst_k);
    std::swap(src_i, dst_i);
  }
  if (src_k != keys) {
    launch_independent("sort_copy", copy_rows<T>, grid, dim3(kMergeThreads), stream, src_k, src_i, keys, indices,
                       rows * n);
  }
}

}  // namespace

void sort_rows(Stream stream, DType dtype, void* keys, int64_t* indices, void* scratch_keys, int64_t* scratch_indices,
               int64_t rows, int64_t n, bool descending) {
  if (rows * n == 0) return;
  dispatch<kAllTypes>(dtype, "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    run<T>(stream, static_cast<T*>(keys), indices, static_cast<T*>(scratch_keys), scratch_indices, rows, n,
           descending);
  });
}

}  // namespace foo::kernels::FOO_TARGET
