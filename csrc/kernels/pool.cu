// 2-d pooling (pool.h): a thread per written element (grid-stride), no communication.
#include <limits>
#include <string>

#include "kernels/dtype.h"
#include "kernels/image_walk.cuh"
#include "kernels/kernel.h"
#include "kernels/pool.h"

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

// The Avg window of output (oh, ow): [h0, h1) x [w0, w1) clipped to the input, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};
__device__ __forceinline__ AvgWindow avg_window(const PoolArgs& a, int64_t oh, int64_t ow) {
  int64_t h0 = oh * a.stride_h - a.pad_h, w0 = ow * a.stride_w - a.pad_w;
  int64_t h1 = min64(h0 + a.kernel_h, a.in_h + a.pad_h), w1 = min64(w0 + a.kernel_w, a.in_w + a.pad_w);
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = max64(h0, 0);
  w0 = max64(w0, 0);
  h1 = min64(h1, a.in_h);
  w1 = min64(w1, a.in_w);
  const int64_t divisor = a.divisor_override != 0 ? a.divisor_override
                          : a.count_include_pad   ? pool_size
                                                  : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, divisor};
}

template <typename T, PoolKind Kind>
__global__ void pool_forward_kernel(PoolArgs a) {
  using Acc = opmath_t<T>;
  const Image<const T> in = image<const T>(a.input);
  const Image<T> out = image<T>(a.output);
  const Image<int64_t> idx = image<int64_t>(a.indices);
  const ImageIndex walk{a.c, 1, a.out_h, a.out_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t /*d*/, int64_t oh, int64_t ow) {
    const T* plane = in.plane(n, c);
    if constexpr (Kind == PoolKind::Max || Kind == PoolKind::AdaptiveMax) {
      int64_t h0, h1, w0, w1, dh = 1, dw = 1;
      if constexpr (Kind == PoolKind::Max) {
        h0 = oh * a.stride_h - a.pad_h;
        w0 = ow * a.stride_w - a.pad_w;
        h1 = min64(h0 + (a.kernel_h - 1) * a.dilation_h + 1, a.in_h);
        w1 = min64(w0 + (a.kernel_w - 1) * a.dilation_w + 1, a.in_w);
        dh = a.dilation_h;
        dw = a.dilation_w;
        while (h0 < 0) h0 += dh;
        while (w0 < 0) w0 += dw;
      } else {
        h0 = window_start(oh, a.out_h, a.in_h);
        h1 = window_end(oh, a.out_h, a.in_h);
        w0 = window_start(ow, a.out_w, a.in_w);
        w1 = window_end(ow, a.out_w, a.in_w);
      }
      // As the CPU: the first maximum wins, a NaN beats everything (the last NaN is kept).
      Acc best = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                        : std::numeric_limits<Acc>::lowest();
      int64_t best_index = h0 * a.in_w + w0;
      for (int64_t h = h0; h < h1; h += dh) {
        for (int64_t w = w0; w < w1; w += dw) {
          const Acc v = static_cast<Acc>(plane[h * in.sh + w * in.sw]);
          if (v > best || is_nan(v)) {
            best = v;
            best_index = h * a.in_w + w;
          }
        }
      }
      out.at(n, c, 0, oh, ow) = cast<T>(best);
      idx.at(n, c, 0, oh, ow) = best_index;
    } else {
      int64_t h0, h1, w0, w1, divisor;
      if constexpr (Kind == PoolKind::Avg) {
        const AvgWindow win = avg_window(a, oh, ow);
        h0 = win.h0, h1 = win.h1, w0 = win.w0, w1 = win.w1, divisor = win.divisor;
        if (h0 >= h1 || w0 >= w1) {
          out.at(n, c, 0, oh, ow) = cast<T>(Acc(0));
          return;
        }
      } else {
        h0 = window_start(oh, a.out_h, a.in_h);
        h1 = window_end(oh, a.out_h, a.in_h);
        w0 = window_start(ow, a.out_w, a.in_w);
        w1 = window_end(ow, a.out_w, a.in_w);
        divisor = (h1 - h0) * (w1 - w0);
      }
      Acc sum(0);
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) sum += static_cast<Acc>(plane[h * in.sh + w * in.sw]);
      }
      out.at(n, c, 0, oh, ow) = cast<T>(sum / static_cast<Acc>(divisor));
    }
  });
}

// grad_input (a.input) from grad_output (a.output): a thread per grad_input element.
template <typename T, PoolKind Kind>
__global__ void pool_backward_kernel(PoolArgs a) {
  using Acc = opmath_t<T>;
  const Image<T> gi = image<T>(a.input);
  const Image<const T> go = image<const T>(a.output);
  const Image<const int64_t> idx = image<const int64_t>(a.indices);
  const ImageIndex walk{a.c, 1, a.in_h, a.in_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t /*d*/, int64_t h, int64_t w) {
    // The outputs whose windows may hold (h, w).
    int64_t oh0, oh1, ow0, ow1;
    if constexpr (Kind == PoolKind::Max || Kind == PoolKind::Avg) {
      const int64_t span_h = Kind == PoolKind::Max ? (a.kernel_h - 1) * a.dilation_h + 1 : a.kernel_h;
      const int64_t span_w = Kind == PoolKind::Max ? (a.kernel_w - 1) * a.dilation_w + 1 : a.kernel_w;
      oh0 = h + a.pad_h < span_h ? 0 : (h + a.pad_h - span_h) / a.stride_h + 1;
      ow0 = w + a.pad_w < span_w ? 0 : (w + a.pad_w - span_w) / a.stride_w + 1;
      oh1 = min64((h + a.pad_h) / a.stride_h + 1, a.out_h);
      ow1 = min64((w + a.pad_w) / a.stride_w + 1, a.out_w);
    } else {
      oh0 = window_start(h, a.in_h, a.out_h);
      oh1 = window_end(h, a.in_h, a.out_h);
      ow0 = window_start(w, a.in_w, a.out_w);
      ow1 = window_end(w, a.in_w, a.out_w);
    }
    const T* g = go.plane(n, c);
    Acc sum(0);
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const Acc v = static_cast<Acc>(g[oh * go.sh + ow * go.sw]);
        if constexpr (Kind == PoolKind::Max || Kind == PoolKind::AdaptiveMax) {
          if (idx.at(n, c, 0, oh, ow) == h * a.in_w + w) sum += v;
        } else if constexpr (Kind == PoolKind::Avg) {
          const AvgWindow win = avg_window(a, oh, ow);
          if (win.h0 < win.h1 && win.w0 < win.w1) sum += v / static_cast<Acc>(win.divisor);
        } else {
          const int64_t size = (window_end(oh, a.out_h, a.in_h) - window_start(oh, a.out_h, a.in_h)) *
                               (window_end(ow, a.out_w, a.in_w) - window_start(ow, a.out_w, a.in_w));
          sum += v / static_cast<Acc>(size);
        }
      }
    }
    gi.at(n, c, 0, h, w) = cast<T>(sum);
  });
}

const char* name_of(PoolKind k, bool backward) {
  switch (k) {
    case PoolKind::Max: return backward ? "max_pool2d_with_indices_backward" : "max_pool2d_with_indices";
    case PoolKind::Avg: return backward ? "avg_pool2d_backward" : "avg_pool2d";
    case PoolKind::AdaptiveAvg: return backward ? "_adaptive_avg_pool2d_backward" : "_adaptive_avg_pool2d";
    case PoolKind::AdaptiveMax: return backward ? "adaptive_max_pool2d_backward" : "adaptive_max_pool2d";
  }
  return "pool2d";
}

template <bool Backward, typename T, PoolKind Kind>
void run(Stream stream, const PoolArgs& a) {
  const int64_t total = a.n * a.c * (Backward ? a.in_h * a.in_w : a.out_h * a.out_w);
  if (total == 0) return;
  if constexpr (Backward) {
    launch_independent(name_of(Kind, true), pool_backward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a);
  } else {
    launch_independent(name_of(Kind, false), pool_forward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a);
  }
}

template <bool Backward>
void pool(Stream stream, const PoolArgs& a) {
  if (!Backward && a.kind == PoolKind::Max) {  // max pooling also takes integers, as on the CPU
    return dispatch<kNumericTypes>(a.dtype, name_of(a.kind, false), [&](auto tag) {
      run<false, typename decltype(tag)::type, PoolKind::Max>(stream, a);
    });
  }
  dispatch<kFloatingTypes>(a.dtype, name_of(a.kind, Backward), [&](auto tag) {
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

void pool2d_forward(Stream stream, const PoolArgs& a) { pool<false>(stream, a); }
void pool2d_backward(Stream stream, const PoolArgs& a) { pool<true>(stream, a); }

}  // namespace foo::kernels::FOO_TARGET
