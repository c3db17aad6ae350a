// Resampling (upsample.h): a thread per written element (grid-stride), no communication.
// Each dimension has a map from an output index to its taps (source indices and weights): one
// tap for nearest, two for linear, four for cubic; an output is the separable sum over the taps
// of D, H and W in ATen's order (outermost dimension outside). Index arithmetic is spelled with
// exact_math.h so nvcc does not contract it into fused multiply-adds (which would move the chosen
// neighbour at exact boundaries between targets).
#include <cmath>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/exact_math.h"
#include "kernels/core/image_walk.cuh"
#include "kernels/core/kernel.h"
#include "kernels/ops/upsample.h"

namespace foo::kernels::FOO_TARGET {
namespace {

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// ---- one dimension's map: output index -> taps -------------------------------------------------

// Nearest: ATen's nearest_idx; nearest-exact: nearest_exact_idx (the half-pixel-centred rounding).
struct NearestMap {
  static constexpr int kTaps = 1;
  int64_t in, out;
  float scale;
  bool exact;
  __device__ __forceinline__ int64_t first_source(int64_t dst) const {
    if (exact) {
      // (dst + 0.5) * scale is a double product on the CPU, rounded to float by floorf's argument.
      const double real = mul_rn(static_cast<double>(dst) + 0.5, static_cast<double>(scale));
      return min64(static_cast<int64_t>(floorf(static_cast<float>(real))), in - 1);
    }
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    return min64(static_cast<int64_t>(floorf(mul_rn(static_cast<float>(dst), scale))), in - 1);
  }
  template <typename Acc>
  __device__ __forceinline__ void taps(int64_t dst, int64_t* index, Acc* weight) const {
    index[0] = first_source(dst);
    weight[0] = Acc(1);
  }
  // The first_source values of the outputs that read input s.
  __device__ __forceinline__ int64_t lowest_reader(int64_t s) const { return s; }
  __device__ __forceinline__ int64_t highest_reader(int64_t s) const { return s; }
};

template <typename Acc>
__device__ __forceinline__ Acc floor_acc(Acc v) {
  if constexpr (std::is_same_v<Acc, float>) return floorf(v);
  else return floor(v);
}

// ATen's area_pixel_compute_source_index then guard_index_and_lambda: the tap below `real` and
// the distance to it in [0, 1]. Cubic keeps negative sources (its taps reach one further left).
template <typename Acc>
__device__ __forceinline__ void source_and_lambda(Acc scale, int64_t dst, bool align_corners, bool cubic, int64_t in,
                                                  int64_t& i0, Acc& lambda) {
  Acc real;
  if (align_corners) {
    real = mul_rn(scale, static_cast<Acc>(dst));
  } else {
    real = sub_rn(mul_rn(scale, add_rn(static_cast<Acc>(dst), Acc(0.5))), Acc(0.5));
    if (!cubic && real < Acc(0)) real = Acc(0);
  }
  i0 = min64(static_cast<int64_t>(floor_acc(real)), in - 1);
  lambda = real - static_cast<Acc>(i0);
  lambda = lambda < Acc(0) ? Acc(0) : lambda > Acc(1) ? Acc(1) : lambda;
}

// Linear: ATen's compute_source_index_and_lambda.
template <typename Acc>
struct LinearMap {
  static constexpr int kTaps = 2;
  int64_t in, out;
  Acc scale;
  bool align_corners;
  template <typename A>
  __device__ __forceinline__ void taps(int64_t dst, int64_t* index, A* weight) const {
    static_assert(std::is_same_v<A, Acc>, "linear weights are computed in the accumulation type");
    if (out == in) {
      index[0] = index[1] = dst;
      weight[0] = Acc(1);
      weight[1] = Acc(0);
      return;
    }
    Acc lambda;
    source_and_lambda(scale, dst, align_corners, false, in, index[0], lambda);
    index[1] = index[0] + (index[0] < in - 1 ? 1 : 0);
    weight[0] = Acc(1) - lambda;
    weight[1] = lambda;
  }
  __device__ __forceinline__ int64_t first_source(int64_t dst) const {
    int64_t index[2];
    Acc weight[2];
    taps(dst, index, weight);
    return index[0];
  }
  // Outputs reading s have index[0] == s or index[0] + 1 == s.
  __device__ __forceinline__ int64_t lowest_reader(int64_t s) const { return s - 1; }
  __device__ __forceinline__ int64_t highest_reader(int64_t s) const { return s; }
};

// Cubic: the four taps around the source, clamped to the input (UpSample.h's
// upsample_get_value_bounded), with Keys' convolution weights at A = -0.75
// (get_cubic_upsample_coefficients).
template <typename Acc>
struct CubicMap {
  static constexpr int kTaps = 4;
  int64_t in, out;
  Acc scale;
  bool align_corners;
  template <typename A>
  __device__ __forceinline__ void taps(int64_t dst, int64_t* index, A* weight) const {
    static_assert(std::is_same_v<A, Acc>, "cubic weights are computed in the accumulation type");
    int64_t i0;
    Acc t;
    source_and_lambda(scale, dst, align_corners, true, in, i0, t);
    const Acc a(-0.75);
    auto near = [&](Acc x) { return ((a + Acc(2)) * x - (a + Acc(3))) * x * x + Acc(1); };       // |x| <= 1
    auto far = [&](Acc x) { return ((a * x - Acc(5) * a) * x + Acc(8) * a) * x - Acc(4) * a; };  // 1 < |x| < 2
    weight[0] = far(t + Acc(1));
    weight[1] = near(t);
    weight[2] = near(Acc(1) - t);
    weight[3] = far(Acc(1) - t + Acc(1));
    for (int k = 0; k < 4; ++k) index[k] = max64(min64(i0 - 1 + k, in - 1), 0);
  }
  __device__ __forceinline__ int64_t first_source(int64_t dst) const {  // i0, the second tap before clamping
    int64_t i0;
    Acc t;
    source_and_lambda(scale, dst, align_corners, true, in, i0, t);
    return i0;
  }
  // Outputs reading s have i0 - 1 <= s <= i0 + 2, or clamp onto s at an edge: every output whose
  // taps start left of 0 reads input 0, every one whose taps end past in - 1 reads in - 1.
  // first_source lies in [-1, in - 1], so -2 and in stand for "no bound".
  __device__ __forceinline__ int64_t lowest_reader(int64_t s) const { return s == 0 ? -2 : s - 2; }
  __device__ __forceinline__ int64_t highest_reader(int64_t s) const { return s == in - 1 ? in : s + 1; }
};

// The total weight of input s in output dst (several taps clamp onto one input at the edges).
template <typename Acc, class Map>
__device__ __forceinline__ Acc weight_of(const Map& m, int64_t dst, int64_t s) {
  int64_t index[Map::kTaps];
  Acc weight[Map::kTaps];
  m.taps(dst, index, weight);
  Acc sum(0);
  for (int k = 0; k < Map::kTaps; ++k) {
    if (index[k] == s) sum += weight[k];
  }
  return sum;
}

// The outputs [lo, hi) that may read input s: first_source is monotone in dst, so binary search
// for the first dst whose source reaches lowest_reader(s) and the first beyond highest_reader(s).
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
  hi = first_at_least(m.highest_reader(s) + 1);
}

// The maps of D, H and W. D's is used only by 3-d images (depth): the 2-d ops skip its loop.
template <class Map>
struct Maps {
  Map d, h, w;
  bool depth;
};

template <typename T, UpsampleKind Kind>
auto maps_of(const UpsampleArgs& a) {
  using Acc = opmath_t<T>;
  const bool depth = a.in_d != 1 || a.out_d != 1;
  if constexpr (Kind == UpsampleKind::Nearest) {
    const bool exact = a.kind == UpsampleKind::NearestExact;
    return Maps<NearestMap>{{a.in_d, a.out_d, static_cast<float>(a.scale_d), exact},
                            {a.in_h, a.out_h, static_cast<float>(a.scale_h), exact},
                            {a.in_w, a.out_w, static_cast<float>(a.scale_w), exact},
                            depth};
  } else {
    using Map = std::conditional_t<Kind == UpsampleKind::Linear, LinearMap<Acc>, CubicMap<Acc>>;
    return Maps<Map>{{a.in_d, a.out_d, static_cast<Acc>(a.scale_d), a.align_corners},
                     {a.in_h, a.out_h, static_cast<Acc>(a.scale_h), a.align_corners},
                     {a.in_w, a.out_w, static_cast<Acc>(a.scale_w), a.align_corners},
                     depth};
  }
}

// ---- kernels --------------------------------------------------------------------------------------

template <typename T, UpsampleKind Kind, class Map>
__global__ void upsample_forward_kernel(UpsampleArgs a, Maps<Map> m) {
  using Acc = opmath_t<T>;
  constexpr int K = Map::kTaps;
  const Image<const T> in = image<const T>(a.input);
  const Image<T> out = image<T>(a.output);
  const ImageIndex walk{a.c, a.out_d, a.out_h, a.out_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const T* plane = in.plane(n, c);
    int64_t zs[K] = {0}, ys[K], xs[K];
    Acc wz[K] = {Acc(1)}, wy[K], wx[K];
    if (m.depth) m.d.taps(od, zs, wz);
    m.h.taps(oh, ys, wy);
    m.w.taps(ow, xs, wx);
    if constexpr (Kind == UpsampleKind::Nearest) {  // a copy: exact for every dtype, uint8 included
      out.at(n, c, od, oh, ow) = plane[zs[0] * in.sd + ys[0] * in.sh + xs[0] * in.sw];
    } else {
      Acc sum(0);
      for (int kz = 0; kz < (m.depth ? K : 1); ++kz) {
        Acc slab(0);
        for (int ky = 0; ky < K; ++ky) {
          Acc row(0);
          for (int kx = 0; kx < K; ++kx) {
            row += wx[kx] * static_cast<Acc>(plane[zs[kz] * in.sd + ys[ky] * in.sh + xs[kx] * in.sw]);
          }
          slab += wy[ky] * row;
        }
        sum += m.depth ? wz[kz] * slab : slab;
      }
      out.at(n, c, od, oh, ow) = cast<T>(sum);
    }
  });
}

// grad_input (a.input) from grad_output (a.output).
template <typename T, UpsampleKind Kind, class Map>
__global__ void upsample_backward_kernel(UpsampleArgs a, Maps<Map> m) {
  using Acc = opmath_t<T>;
  const Image<T> gi = image<T>(a.input);
  const Image<const T> go = image<const T>(a.output);
  const ImageIndex walk{a.c, a.in_d, a.in_h, a.in_w, a.channels_last};
  for_each_element(walk, a.n, [&](int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) {
    int64_t od0 = 0, od1 = 1, oh0, oh1, ow0, ow1;
    if (m.depth) readers(m.d, d, od0, od1);
    readers(m.h, h, oh0, oh1);
    readers(m.w, w, ow0, ow1);
    const T* g = go.plane(n, c);
    Acc sum(0);
    for (int64_t od = od0; od < od1; ++od) {
      const Acc wd = m.depth ? weight_of<Acc>(m.d, od, d) : Acc(1);
      if (wd == Acc(0)) continue;
      Acc slab(0);
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        const Acc wh = weight_of<Acc>(m.h, oh, h);
        if (wh == Acc(0)) continue;
        Acc row(0);
        for (int64_t ow = ow0; ow < ow1; ++ow) {
          row += weight_of<Acc>(m.w, ow, w) * static_cast<Acc>(g[od * go.sd + oh * go.sh + ow * go.sw]);
        }
        slab += wh * row;
      }
      sum += m.depth ? wd * slab : slab;
    }
    gi.at(n, c, d, h, w) = cast<T>(sum);
  });
}

template <bool Backward, typename T, UpsampleKind Kind>
void run(Stream stream, const UpsampleArgs& a) {
  const int64_t total = Backward ? a.n * a.c * a.in_d * a.in_h * a.in_w : a.n * a.c * a.out_d * a.out_h * a.out_w;
  if (total == 0) return;
  const auto m = maps_of<T, Kind>(a);
  using Map = decltype(m.h);
  const dim3 grid = blocks_for(total, 256, foo::sim::kMaxGridDimY);
  if constexpr (Backward) {
    launch_independent(a.op, upsample_backward_kernel<T, Kind, Map>, grid, dim3(256), stream, a, m);
  } else {
    launch_independent(a.op, upsample_forward_kernel<T, Kind, Map>, grid, dim3(256), stream, a, m);
  }
}

template <bool Backward>
void upsample(Stream stream, const UpsampleArgs& a) {
  const bool nearest = a.kind == UpsampleKind::Nearest || a.kind == UpsampleKind::NearestExact;
  if (nearest && !Backward) {  // nearest moves elements: uint8 images too, as on the CPU
    return dispatch<kFloatingTypes | dtype_bit(DType::UInt8)>(a.dtype, a.op, [&](auto tag) {
      run<false, typename decltype(tag)::type, UpsampleKind::Nearest>(stream, a);
    });
  }
  dispatch<kFloatingTypes>(a.dtype, a.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (nearest) run<Backward, T, UpsampleKind::Nearest>(stream, a);
    else if (a.kind == UpsampleKind::Linear) run<Backward, T, UpsampleKind::Linear>(stream, a);
    else run<Backward, T, UpsampleKind::Cubic>(stream, a);
  });
}

}  // namespace

void upsample_forward(Stream stream, const UpsampleArgs& a) { upsample<false>(stream, a); }
void upsample_backward(Stream stream, const UpsampleArgs& a) { upsample<true>(stream, a); }

}  // namespace foo::kernels::FOO_TARGET
