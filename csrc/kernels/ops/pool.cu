// 2-d and 3-d pooling (pool.h): a thread per written element (grid-stride), no communication.
#include <limits>
#include <string>

#include "kernels/core/dtype.h"
#include "kernels/core/image_walk.cuh"
#include "kernels/core/kernel.h"
#include "kernels/ops/pool.h"

namespace foo::kernels::FOO_TARGET {
namespace {

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// Adaptive windows: output o of `out` covers inputs [start, end) of `in` (ATen's start_index /
// end_index); conversely, input i lies in the windows of outputs [start(i, in, out), end(i, in, out)).
__device__ __forceinline__ int64_t window_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
__device__ __forceinline__ int64_t window_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

template <typename Acc>
__device__ __forceinline__ bool is_nan(Acc v) { return v != v; }

// Indices [begin, end) in steps of `step` along one dimension.
struct Span {
  int64_t begin, end, step;
  __device__ __forceinline__ int64_t size() const { return end - begin; }
};

// The window of output (od, oh, ow) in the input, per dimension, and its Avg divisor. As the
// CPU's: Max windows are dilated and start at the first tap inside the input; Avg windows are
// clipped to the input, their padded size being the count_include_pad divisor.
struct Window {
  Span d, h, w;
  int64_t divisor;  // Avg
  __device__ __forceinline__ bool empty() const { return d.size() <= 0 || h.size() <= 0 || w.size() <= 0; }
};

__device__ __forceinline__ Span max_span(const PoolDim& x, int64_t o) {
  int64_t begin = o * x.stride - x.pad;
  const int64_t end = min64(begin + (x.kernel - 1) * x.dilation + 1, x.in);
  while (begin < 0) begin += x.dilation;
  return {begin, end, x.dilation};
}

__device__ __forceinline__ Span adaptive_span(const PoolDim& x, int64_t o) {
  return {window_start(o, x.out, x.in), window_end(o, x.out, x.in), 1};
}

__device__ __forceinline__ Span avg_span(const PoolDim& x, int64_t o, int64_t& padded_size) {
  const int64_t begin = o * x.stride - x.pad;
  const int64_t end = min64(begin + x.kernel, x.in + x.pad);
  padded_size = end - begin;
  return {max64(begin, 0), min64(end, x.in), 1};
}

template <PoolKind Kind>
__device__ __forceinline__ Window window_of(const PoolArgs& a, int64_t od, int64_t oh, int64_t ow) {
  if constexpr (Kind == PoolKind::Max) {
    return {max_span(a.d, od), max_span(a.h, oh), max_span(a.w, ow), 1};
  } else if constexpr (Kind == PoolKind::Avg) {
    int64_t pd, ph, pw;
    Window win{avg_span(a.d, od, pd), avg_span(a.h, oh, ph), avg_span(a.w, ow, pw), 0};
    win.divisor = a.divisor_override != 0 ? a.divisor_override
                  : a.count_include_pad   ? pd * ph * pw
                                          : win.d.size() * win.h.size() * win.w.size();
    return win;
  } else {
    return {adaptive_span(a.d, od), adaptive_span(a.h, oh), adaptive_span(a.w, ow), 0};
  }
}

// sum over the window / its size, rounded as the CPU's: Avg divides once, adaptive pooling by
// each dimension's extent in turn.
template <PoolKind Kind, typename Acc>
__device__ __forceinline__ Acc average(Acc sum, const Window& win) {
  if constexpr (Kind == PoolKind::AdaptiveAvg) {
    return sum / static_cast<Acc>(win.d.size()) / static_cast<Acc>(win.h.size()) / static_cast<Acc>(win.w.size());
  } else {
    return sum / static_cast<Acc>(win.divisor);
  }
}

// The outputs along one dimension whose windows may hold input i (the inverse of window_of).
template <PoolKind Kind>
__device__ __forceinline__ Span outputs_holding(const PoolDim& x, int64_t i) {
  if constexpr (Kind == PoolKind::Max || Kind == PoolKind::Avg) {
    const int64_t span = Kind == PoolKind::Max ? (x.kernel - 1) * x.dilation + 1 : x.kernel;
    return {i + x.pad < span ? 0 : (i + x.pad - span) / x.stride + 1, min64((i + x.pad) / x.stride + 1, x.out), 1};
  } else {
    return {window_start(i, x.in, x.out), window_end(i, x.in, x.out), 1};
  }
}

template <typename T, PoolKind Kind>
__global__ void pool_forward_kernel(PoolArgs a) {
  using Acc = opmath_t<T>;
  const Image<const T> in = image<const T>(a.input);
  const Image<T> out = image<T>(a.output);
  const Image<int64_t> idx = image<int64_t>(a.indices);
  const ImageIndex walk{a.c, a.d.out, a.h.out, a.w.out, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const T* plane = in.plane(n, c);
    const Window win = window_of<Kind>(a, od, oh, ow);
    if constexpr (Kind == PoolKind::Max || Kind == PoolKind::AdaptiveMax) {
      // As the CPU: the first maximum wins, a NaN beats everything (the last NaN is kept).
      Acc best = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                        : std::numeric_limits<Acc>::lowest();
      int64_t best_index = (win.d.begin * a.h.in + win.h.begin) * a.w.in + win.w.begin;
      for (int64_t z = win.d.begin; z < win.d.end; z += win.d.step) {
        for (int64_t y = win.h.begin; y < win.h.end; y += win.h.step) {
          for (int64_t x = win.w.begin; x < win.w.end; x += win.w.step) {
            const Acc v = static_cast<Acc>(plane[z * in.sd + y * in.sh + x * in.sw]);
            if (v > best || is_nan(v)) {
              best = v;
              best_index = (z * a.h.in + y) * a.w.in + x;
            }
          }
        }
      }
      out.at(n, c, od, oh, ow) = cast<T>(best);
      idx.at(n, c, od, oh, ow) = best_index;
    } else {
      if (win.empty()) {  // an Avg window wholly in the padding
        out.at(n, c, od, oh, ow) = cast<T>(Acc(0));
        return;
      }
      Acc sum(0);
      for (int64_t z = win.d.begin; z < win.d.end; ++z) {
        for (int64_t y = win.h.begin; y < win.h.end; ++y) {
          for (int64_t x = win.w.begin; x < win.w.end; ++x) sum += static_cast<Acc>(plane[z * in.sd + y * in.sh + x * in.sw]);
        }
      }
      out.at(n, c, od, oh, ow) = cast<T>(average<Kind>(sum, win));
    }
  });
}

// grad_input (a.input) from grad_output (a.output): a thread per grad_input element, summing in
// the order the CPU scatters (outputs in (d, h, w) order).
template <typename T, PoolKind Kind>
__global__ void pool_backward_kernel(PoolArgs a) {
  using Acc = opmath_t<T>;
  const Image<T> gi = image<T>(a.input);
  const Image<const T> go = image<const T>(a.output);
  const Image<const int64_t> idx = image<const int64_t>(a.indices);
  const ImageIndex walk{a.c, a.d.in, a.h.in, a.w.in, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t z, int64_t y, int64_t x) {
    const Span od = outputs_holding<Kind>(a.d, z), oh = outputs_holding<Kind>(a.h, y),
               ow = outputs_holding<Kind>(a.w, x);
    const int64_t self_index = (z * a.h.in + y) * a.w.in + x;
    const T* g = go.plane(n, c);
    Acc sum(0);
    for (int64_t d = od.begin; d < od.end; ++d) {
      for (int64_t h = oh.begin; h < oh.end; ++h) {
        for (int64_t w = ow.begin; w < ow.end; ++w) {
          const Acc v = static_cast<Acc>(g[d * go.sd + h * go.sh + w * go.sw]);
          if constexpr (Kind == PoolKind::Max || Kind == PoolKind::AdaptiveMax) {
            if (idx.at(n, c, d, h, w) == self_index) sum += v;
          } else {
            const Window win = window_of<Kind>(a, d, h, w);
            if (!win.empty()) sum += average<Kind>(v, win);
          }
        }
      }
    }
    gi.at(n, c, z, y, x) = cast<T>(sum);
  });
}

// The aten op a launch implements, for error messages.
const char* name_of(PoolKind k, bool backward, int dims) {
  static const char* const names[4][2][2] = {  // [kind][3-d][backward]
      {{"max_pool2d_with_indices", "max_pool2d_with_indices_backward"},
       {"max_pool3d_with_indices", "max_pool3d_with_indices_backward"}},
      {{"avg_pool2d", "avg_pool2d_backward"}, {"avg_pool3d", "avg_pool3d_backward"}},
      {{"_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"}, {"_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward"}},
      {{"adaptive_max_pool2d", "adaptive_max_pool2d_backward"}, {"adaptive_max_pool3d", "adaptive_max_pool3d_backward"}},
  };
  return names[static_cast<int>(k)][dims == 3 ? 1 : 0][backward ? 1 : 0];
}

template <bool Backward, typename T, PoolKind Kind>
void run(Stream stream, const PoolArgs& a) {
  const int64_t total =
      a.n * a.c * (Backward ? a.d.in * a.h.in * a.w.in : a.d.out * a.h.out * a.w.out);
  if (total == 0) return;
  const char* name = name_of(Kind, Backward, a.dims);
  if constexpr (Backward) {
    launch_independent(name, pool_backward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a);
  } else {
    launch_independent(name, pool_forward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a);
  }
}

template <bool Backward>
void pool(Stream stream, const PoolArgs& a) {
  if (!Backward && a.kind == PoolKind::Max) {  // max pooling also takes integers, as on the CPU
    return dispatch<kNumericTypes>(a.dtype, name_of(a.kind, false, a.dims), [&](auto tag) {
      run<false, typename decltype(tag)::type, PoolKind::Max>(stream, a);
    });
  }
  dispatch<kFloatingTypes>(a.dtype, name_of(a.kind, Backward, a.dims), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (a.kind) {
      case PoolKind::Max: return run<Backward, T, PoolKind::Max>(stream, a);
      case PoolKind::Avg: return run<Backward, T, PoolKind::Avg>(stream, a);
      case PoolKind::AdaptiveAvg: return run<Backward, T, PoolKind::AdaptiveAvg>(stream, a);
      case PoolKind::AdaptiveMax: return run<Backward, T, PoolKind::AdaptiveMax>(stream, a);
    }
  });
}

}  // namespace

void pool_forward(Stream stream, const PoolArgs& a) { pool<false>(stream, a); }
void pool_backward(Stream stream, const PoolArgs& a) { pool<true>(stream, a); }

}  // namespace foo::kernels::FOO_TARGET
