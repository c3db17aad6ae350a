// Coordinate-mapped copies, unfold's backward sum and triangle indices (shape_copy.h). All are a
// thread per output element (grid-stride), with no communication.
#include <algorithm>

#include "kernels/core/atomic_ops.h"
#include "kernels/core/dtype.h"
#include "kernels/core/element_bits.h"
#include "kernels/core/elementwise.cuh"
#include "kernels/core/kernel.h"
#include "kernels/ops/shape_copy.h"

namespace foo::kernels::FOO_TARGET {
namespace {

dim3 block_for(int64_t n) { return dim3(threads_for(n)); }

dim3 grid_for(int64_t n) { return blocks_for(n, threads_for(n), kMaxElementwiseBlocks); }

// Padding's source coordinate of x = c - shift (shape_copy.h, CoordMap::Reflect / Clamp).
__device__ __forceinline__ int64_t reflect(int64_t x, int64_t in_size) {
  x = x < 0 ? -x : x;
  return x >= in_size ? 2 * (in_size - 1) - x : x;
}

__device__ __forceinline__ int64_t clamp_to(int64_t x, int64_t in_size) { return x < 0 ? 0 : x >= in_size ? in_size - 1 : x; }

template <typename E>
__global__ void map_copy_kernel(MapCopy m, const E* in, E* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, in_offset = 0, out_offset = 0, row = 0, col = 0;
    for (int d = m.ndim - 1; d >= 0; --d) {
      const MapDim& md = m.dims[d];
      const int64_t q = rest / md.size, c = rest - q * md.size;
      rest = q;
      if (d == m.ndim - 1) col = c;
      if (d == m.ndim - 2) row = c;
      int64_t source = c;
      if (md.map == CoordMap::Flip) source = md.size - 1 - c;
      else if (md.map == CoordMap::Roll) source = c >= md.shift ? c - md.shift : c - md.shift + md.size;
      else if (md.map == CoordMap::Wrap) source = c % md.in_size;
      else if (md.map == CoordMap::Reflect) source = reflect(c - md.shift, md.in_size);
      else if (md.map == CoordMap::Clamp) source = clamp_to(c - md.shift, md.in_size);
      in_offset += source * md.in_stride;
      out_offset += c * md.out_stride;
    }
    bool keep = true;
    if (m.triangle == Triangle::Lower) keep = col - row <= m.diagonal;
    else if (m.triangle == Triangle::Upper) keep = col - row >= m.diagonal;
    out[out_offset] = keep ? in[in_offset] : E{};  // E{}: zero bits, also for Bits128
  }
}

template <typename T>
__global__ void unfold_backward_kernel(UnfoldBackward u, const T* grad_in, T* grad_input, int64_t numel) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, base = 0, j = 0;
    for (int d = u.ndim - 1; d >= 0; --d) {
      const int64_t q = rest / u.sizes[d], c = rest - q * u.sizes[d];
      rest = q;
      if (d == u.dim) j = c;
      else base += c * u.grad_strides[d];
    }
    // Windows w with w * step <= j < w * step + size.
    const int64_t first = j >= u.size ? (j - u.size) / u.step + 1 : 0;
    const int64_t last = std::min(j / u.step, u.windows - 1);
    T sum = T(0);
    for (int64_t w = first; w <= last; ++w) {
      const T v = grad_in[base + w * u.grad_strides[u.dim] + (j - w * u.step) * u.grad_strides[u.ndim]];
      sum = combine_values<Combine::Add>(sum, v);
    }
    grad_input[i] = sum;
  }
}

// The output coordinates of one padded dim that read input coordinate i: at most 3 runs
// [lo, hi), in increasing order (Reflect: the left mirror -i, i itself, the right mirror
// 2 (in_size - 1) - i, each one element; Clamp: one run, to the edge for the edge elements).
struct Readers {
  int64_t lo[3], hi[3];
  int n = 0;
  __device__ __forceinline__ void add(int64_t a, int64_t b, int64_t size) {
    a = a < 0 ? 0 : a;
    b = b > size ? size : b;
    if (a < b) {
      lo[n] = a;
      hi[n] = b;
      ++n;
    }
  }
};

__device__ __forceinline__ Readers readers_of(const MapDim& md, int64_t i) {
  Readers r;
  const int64_t p = md.shift;
  if (md.map == CoordMap::Reflect) {
    if (i > 0) r.add(p - i, p - i + 1, md.size);
    r.add(p + i, p + i + 1, md.size);
    if (i < md.in_size - 1) r.add(p + 2 * (md.in_size - 1) - i, p + 2 * (md.in_size - 1) - i + 1, md.size);
  } else {  // Clamp
    r.add(i == 0 ? 0 : p + i, i == md.in_size - 1 ? md.size : p + i + 1, md.size);
  }
  return r;
}

template <typename T>
__global__ void pad_backward_kernel(MapCopy m, const T* grad_output, T* grad_input, int64_t numel) {
  using Acc = opmath_t<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // Input coordinates, innermost first; Same dims fix the grad_output offset, padded ones
    // (innermost first in r/stride) give runs of readers.
    int64_t rest = i, in_offset = 0, out_base = 0;
    Readers r[kMaxPaddedDims];
    int64_t stride[kMaxPaddedDims] = {0, 0, 0};
    int padded = 0;
    for (int d = m.ndim - 1; d >= 0; --d) {
      const MapDim& md = m.dims[d];
      const int64_t q = rest / md.in_size, c = rest - q * md.in_size;
      rest = q;
      in_offset += c * md.in_stride;
      if (md.map == CoordMap::Same) {
        out_base += c * md.out_stride;
      } else {
        r[padded] = readers_of(md, c);
        stride[padded] = md.out_stride;
        ++padded;
      }
    }
    for (int k = padded; k < kMaxPaddedDims; ++k) r[k].add(0, 1, 1);  // absent dims: one reader, stride 0
    // Outermost padded dim first: the readers in increasing output order, as the CPU adds them.
    Acc sum(0);
    for (int a = 0; a < r[2].n; ++a) {
      for (int64_t j2 = r[2].lo[a]; j2 < r[2].hi[a]; ++j2) {
        for (int b = 0; b < r[1].n; ++b) {
          for (int64_t j1 = r[1].lo[b]; j1 < r[1].hi[b]; ++j1) {
            const T* row = grad_output + out_base + j2 * stride[2] + j1 * stride[1];
            for (int c = 0; c < r[0].n; ++c) {
              for (int64_t j0 = r[0].lo[c]; j0 < r[0].hi[c]; ++j0) sum += static_cast<Acc>(row[j0 * stride[0]]);
            }
          }
        }
      }
    }
    grad_input[in_offset] = cast<T>(sum);
  }
}

template <typename I>
__global__ void triangle_indices_kernel(I* out, int64_t count, int64_t row, int64_t col, int64_t offset, bool upper) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // The last row starting at or before k.
    int64_t lo = 0, hi = row - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (triangle_elements_before(mid, col, offset, upper) <= k) lo = mid;
      else hi = mid - 1;
    }
    const int64_t first_col = upper ? std::max<int64_t>(0, lo + offset) : 0;
    out[k] = static_cast<I>(lo);
    out[count + k] = static_cast<I>(first_col + k - triangle_elements_before(lo, col, offset, upper));
  }
}

}  // namespace

void map_copy(Stream stream, const MapCopy& m, const void* in, void* out) {
  if (m.numel == 0) return;
  const dim3 grid = grid_for(m.numel);
  dispatch_element_size(m.element_size, "map_copy", [&](auto bits) {
    using E = decltype(bits);
    launch_independent("map_copy", map_copy_kernel<E>, grid, block_for(m.numel), stream, m, static_cast<const E*>(in),
                       static_cast<E*>(out));
  });
}

void pad_backward_sum(Stream stream, DType dtype, const MapCopy& m, const void* grad_output, void* grad_input,
                      int64_t numel) {
  if (numel == 0) return;
  dispatch<kFloatingTypes>(dtype, "pad_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("pad_backward", pad_backward_kernel<T>, grid_for(numel), block_for(numel), stream, m,
                       static_cast<const T*>(grad_output), static_cast<T*>(grad_input), numel);
  });
}

void unfold_backward_sum(Stream stream, DType dtype, const UnfoldBackward& u, const void* grad_in, void* grad_input,
                         int64_t numel) {
  if (numel == 0) return;
  dispatch<kAllTypes>(dtype, "unfold_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("unfold_backward", unfold_backward_kernel<T>, grid_for(numel), block_for(numel), stream, u,
                       static_cast<const T*>(grad_in), static_cast<T*>(grad_input), numel);
  });
}

void triangle_indices(Stream stream, DType dtype, void* out, int64_t count, int64_t row, int64_t col, int64_t offset,
                      bool upper) {
  if (count == 0) return;
  const char* name = upper ? "triu_indices" : "tril_indices";
  if (dtype == DType::Int64) {
    launch_independent(name, triangle_indices_kernel<int64_t>, grid_for(count), block_for(count), stream,
                       static_cast<int64_t*>(out), count, row, col, offset, upper);
  } else if (dtype == DType::Int32) {
    launch_independent(name, triangle_indices_kernel<int32_t>, grid_for(count), block_for(count), stream,
                       static_cast<int32_t*>(out), count, row, col, offset, upper);
  } else {
    unsupported_dtype(name, dtype);
  }
}

}  // namespace foo::kernels::FOO_TARGET
