// 2-d resampling (upsample.h): a thread per written element (grid-stride), no communication.
// Index arithmetic is spelled with exact_math.h so nvcc does not contract it into fused
// multiply-adds (which would move the chosen neighbour at exact boundaries between targets).
#include <cmath>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/exact_math.h"
#include "kernels/image_walk.cuh"
#include "kernels/kernel.h"
#include "kernels/upsample.h"

namespace foo::kernels::FOO_TARGET {
namespace {

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename Acc>
__device__ __forceinline__ Acc floor_acc(Acc v) {
  if constexpr (std::is_same_v<Acc, float>) return floorf(v);
  else return floor(v);
}

// One dimension of nearest resampling: ATen's nearest_idx.
struct NearestMap {
  int64_t in, out;
  float scale;
  __device__ __forceinline__ int64_t source(int64_t dst) const {
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    return min64(static_cast<int64_t>(floorf(mul_rn(static_cast<float>(dst), scale))), in - 1);
  }
  // Weight of input s in output dst.
  template <typename Acc>
  __device__ __forceinline__ Acc weight(int64_t dst, int64_t s) const { return source(dst) == s ? Acc(1) : Acc(0); }
  __device__ __forceinline__ int64_t first_source(int64_t dst) const { return source(dst); }
  __device__ __forceinline__ int64_t lowest_reader(int64_t s) const { return s; }  // source(dst) >= s
};

// One dimension of linear resampling: ATen's compute_source_index_and_lambda.
template <typename Acc>
struct LinearMap {
  int64_t in, out;
  Acc scale;
  bool align_corners;
  __device__ __forceinline__ void source(int64_t dst, int64_t& i0, int64_t& i1, Acc& l0, Acc& l1) const {
    if (out == in) {
      i0 = i1 = dst;
      l0 = Acc(1);
      l1 = Acc(0);
      return;
    }
    Acc real;
    if (align_corners) {
      real = mul_rn(scale, static_cast<Acc>(dst));
    } else {
      real = sub_rn(mul_rn(scale, add_rn(static_cast<Acc>(dst), Acc(0.5))), Acc(0.5));
      if (real < Acc(0)) real = Acc(0);
    }
    i0 = min64(static_cast<int64_t>(floor_acc(real)), in - 1);
    Acc lambda = real - static_cast<Acc>(i0);
    lambda = lambda < Acc(0) ? Acc(0) : lambda > Acc(1) ? Acc(1) : lambda;
    i1 = i0 + (i0 < in - 1 ? 1 : 0);
    l1 = lambda;
    l0 = Acc(1) - lambda;
  }
  template <typename A>
  __device__ __forceinline__ A weight(int64_t dst, int64_t s) const {
    static_assert(std::is_same_v<A, Acc>, "linear weights are computed in the accumulation type");
    int64_t i0, i1;
    Acc l0, l1;
    source(dst, i0, i1, l0, l1);
    return (i0 == s ? l0 : Acc(0)) + (i1 == s ? l1 : Acc(0));
  }
  __device__ __forceinline__ int64_t first_source(int64_t dst) const {
    int64_t i0, i1;
    Acc l0, l1;
    source(dst, i0, i1, l0, l1);
    return i0;
  }
  // Outputs reading input s have i0 == s or i1 == s, so i0 >= s - 1.
  __device__ __forceinline__ int64_t lowest_reader(int64_t s) const { return s - 1; }
};

// The outputs [lo, hi) that may read input s: first_source is monotone in dst, so binary search
// for the first dst whose source reaches lowest_reader(s) and the first beyond s.
template <class Map>
__device__ __forceinline__ void readers(const Map& m, int64_t s, int64_t& lo, int64_t& hi) {
  auto first_at_least = [&](int64_t v) {
    int64_t a = 0, b = m.out;
    while (a < b) {
      const int64_t mid = a + (b - a) / 2;
      if (m.first_source(mid) >= v) b = mid;
      else a = mid + 1;
    }
    return a;
  };
  lo = first_at_least(m.lowest_reader(s));
  hi = first_at_least(s + 1);
}

template <typename T, UpsampleKind Kind>
struct Maps {
  using Acc = opmath_t<T>;
  using Map = std::conditional_t<Kind == UpsampleKind::Nearest, NearestMap, LinearMap<Acc>>;
  Map h, w;
};

template <typename T, UpsampleKind Kind>
Maps<T, Kind> maps_of(const UpsampleArgs& a) {
  using Acc = opmath_t<T>;
  if constexpr (Kind == UpsampleKind::Nearest) {
    return {{a.in_h, a.out_h, static_cast<float>(a.scale_h)}, {a.in_w, a.out_w, static_cast<float>(a.scale_w)}};
  } else {
    return {{a.in_h, a.out_h, static_cast<Acc>(a.scale_h), a.align_corners},
            {a.in_w, a.out_w, static_cast<Acc>(a.scale_w), a.align_corners}};
  }
}

template <typename T, UpsampleKind Kind>
__global__ void upsample_forward_kernel(UpsampleArgs a, Maps<T, Kind> m) {
  using Acc = opmath_t<T>;
  const Image<const T> in = image<const T>(a.input);
  const Image<T> out = image<T>(a.output);
  const ImageIndex walk{a.c, 1, a.out_h, a.out_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t /*d*/, int64_t oh, int64_t ow) {
    const T* plane = in.plane(n, c);
    if constexpr (Kind == UpsampleKind::Nearest) {
      out.at(n, c, 0, oh, ow) = plane[m.h.source(oh) * in.sh + m.w.source(ow) * in.sw];
    } else {
      int64_t h0, h1, w0, w1;
      Acc hl0, hl1, wl0, wl1;
      m.h.source(oh, h0, h1, hl0, hl1);
      m.w.source(ow, w0, w1, wl0, wl1);
      auto v = [&](int64_t h, int64_t w) { return static_cast<Acc>(plane[h * in.sh + w * in.sw]); };
      out.at(n, c, 0, oh, ow) = cast<T>(hl0 * (wl0 * v(h0, w0) + wl1 * v(h0, w1)) + hl1 * (wl0 * v(h1, w0) + wl1 * v(h1, w1)));
    }
  });
}

// grad_input (a.input) from grad_output (a.output).
template <typename T, UpsampleKind Kind>
__global__ void upsample_backward_kernel(UpsampleArgs a, Maps<T, Kind> m) {
  using Acc = opmath_t<T>;
  const Image<T> gi = image<T>(a.input);
  const Image<const T> go = image<const T>(a.output);
  const ImageIndex walk{a.c, 1, a.in_h, a.in_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t /*d*/, int64_t h, int64_t w) {
    int64_t oh0, oh1, ow0, ow1;
    readers(m.h, h, oh0, oh1);
    readers(m.w, w, ow0, ow1);
    const T* g = go.plane(n, c);
    Acc sum(0);
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const Acc wh = m.h.template weight<Acc>(oh, h);
      if (wh == Acc(0)) continue;
      Acc row(0);
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        row += m.w.template weight<Acc>(ow, w) * static_cast<Acc>(g[oh * go.sh + ow * go.sw]);
      }
      sum += wh * row;
    }
    gi.at(n, c, 0, h, w) = cast<T>(sum);
  });
}

template <bool Backward, typename T, UpsampleKind Kind>
void run(Stream stream, const char* name, const UpsampleArgs& a) {
  const int64_t total = a.n * a.c * (Backward ? a.in_h * a.in_w : a.out_h * a.out_w);
  if (total == 0) return;
  const Maps<T, Kind> m = maps_of<T, Kind>(a);
  if constexpr (Backward) {
    launch_independent(name, upsample_backward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a, m);
  } else {
    launch_independent(name, upsample_forward_kernel<T, Kind>, blocks_for(total, 256, foo::sim::kMaxGridDimY), dim3(256), stream, a, m);
  }
}

template <bool Backward>
void upsample(Stream stream, const UpsampleArgs& a) {
  const bool nearest = a.kind == UpsampleKind::Nearest;
  const char* name = nearest ? (Backward ? "upsample_nearest2d_backward" : "upsample_nearest2d")
                             : (Backward ? "upsample_bilinear2d_backward" : "upsample_bilinear2d");
  if (nearest && !Backward) {  // nearest moves elements: uint8 images too, as on the CPU
    return dispatch<kFloatingTypes | dtype_bit(DType::UInt8)>(a.dtype, name, [&](auto tag) {
      run<false, typename decltype(tag)::type, UpsampleKind::Nearest>(stream, name, a);
    });
  }
  dispatch<kFloatingTypes>(a.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (nearest) run<Backward, T, UpsampleKind::Nearest>(stream, name, a);
    else run<Backward, T, UpsampleKind::Bilinear>(stream, name, a);
  });
}

}  // namespace

void upsample2d_forward(Stream stream, const UpsampleArgs& a) { upsample<false>(stream, a); }
void upsample2d_backward(Stream stream, const UpsampleArgs& a) { upsample<true>(stream, a); }

}  // namespace foo::kernels::FOO_TARGET
