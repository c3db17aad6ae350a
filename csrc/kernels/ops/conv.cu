// Convolutions as implicit GEMMs (conv.h): the tiled GEMM core of gemm_tile.cuh with operands that
// gather the im2col matrix straight from the input tensor as the tiles are loaded. No im2col
// buffer exists; an element outside the input (padding, or a transposed convolution's holes
// between strided outputs) loads as 0. Per group g (the GEMM's batch index):
//
//   forward          y[co, (n, o)]     = sum_{(ci, k)} w[co, ci, k] * x[n, ci, o*s - p + k*d]
//   backward_input   x[ci, (n, i)]     = sum_{(co, k)} w[co, ci, k] * y[n, co, (i + p - k*d) / s]   (when divisible)
//   backward_weight  w[co, (ci, k)]    = sum_{(n, o)}  y[n, co, o]   * x[n, ci, o*s - p + k*d]
//
// The reduction index of the first two runs over (channel, kernel position); it is ordered
// channel-innermost when the gathered tensor is channels_last, so consecutive k are adjacent in
// memory for both operands, and kernel-position-innermost otherwise.
#include "kernels/ops/conv.h"
#include "kernels/core/gemm_tile.cuh"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// Splits a reduction index k into (channel, kd, kh, kw).
struct ChannelKernelIndex {
  int64_t channels, kernel_numel, kh, kw;  // kh, kw: kernel extents of the last two dims
  bool channel_inner;
  __device__ __forceinline__ void split(int64_t k, int64_t& c, int64_t& d, int64_t& h, int64_t& w) const {
    int64_t pos;
    if (channel_inner) {
      c = k % channels;
      pos = k / channels;
    } else {
      pos = k % kernel_numel;
      c = k / kernel_numel;
    }
    w = pos % kw;
    pos /= kw;
    h = pos % kh;
    d = pos / kh;
  }
};

// Splits a flat (n, spatial) index over spatial extents sd x sh x sw.
struct SpatialIndex {
  int64_t numel, sh, sw;  // numel = sd * sh * sw
  __device__ __forceinline__ void split(int64_t i, int64_t& n, int64_t& d, int64_t& h, int64_t& w) const {
    n = i / numel;
    int64_t r = i - n * numel;
    w = r % sw;
    r /= sw;
    h = r % sh;
    d = r / sh;
  }
};

__device__ __forceinline__ bool inside(int64_t i, int64_t size) { return static_cast<uint64_t>(i) < static_cast<uint64_t>(size); }

// A: the weight as a [rows, (channel, kernel position)] matrix per group.
template <typename T>
struct WeightOperand {
  using Acc = opmath_t<T>;
  using Cursor = const T*;
  const T* w;
  int64_t group_stride, row_stride, channel_stride, sd, sh, sw;
  ChannelKernelIndex index;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t row) const { return w + g * group_stride + row * row_stride; }
  __device__ __forceinline__ Acc load(Cursor p, int64_t k) const {
    int64_t c, kd, kh, kw;
    index.split(k, c, kd, kh, kw);
    return static_cast<Acc>(p[c * channel_stride + kd * sd + kh * sh + kw * sw]);
  }
};

// A tensor gathered through the convolution window: element (n, group g, channel c, d, h, w) of
// a tensor with per-group channel blocks, and the window's geometry over its spatial extents.
template <typename T>
struct Window {
  const T* data;
  int64_t s[5], group_stride;  // group_stride = channels per group * s[1]
  int64_t size[3], stride[3], padding[3], dilation[3];
  __device__ __forceinline__ bool inside3(int64_t d, int64_t h, int64_t w) const {
    return inside(d, size[0]) && inside(h, size[1]) && inside(w, size[2]);
  }
};

// Where a gather cursor reads: the tensor's (n, group) base and the spatial origin of the window.
template <typename T>
struct WindowCursor {
  const T* base;
  int64_t d, h, w;
};

// B of forward: x at o * stride - padding + k * dilation, for output column (n, o).
template <typename T>
struct ForwardGather {
  using Acc = opmath_t<T>;
  using Cursor = WindowCursor<T>;
  Window<T> x;
  SpatialIndex columns;  // over y's spatial extents
  ChannelKernelIndex index;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    int64_t n, od, oh, ow;
    columns.split(col, n, od, oh, ow);
    return {x.data + n * x.s[0] + g * x.group_stride, od * x.stride[0] - x.padding[0], oh * x.stride[1] - x.padding[1],
            ow * x.stride[2] - x.padding[2]};
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t c, kd, kh, kw;
    index.split(k, c, kd, kh, kw);
    const int64_t id = p.d + kd * x.dilation[0], ih = p.h + kh * x.dilation[1], iw = p.w + kw * x.dilation[2];
    if (!x.inside3(id, ih, iw)) return Acc(0);
    return static_cast<Acc>(p.base[c * x.s[1] + id * x.s[2] + ih * x.s[3] + iw * x.s[4]]);
  }
};

// B of backward_input: y at (i + padding - k * dilation) / stride where that divides exactly, for
// input column (n, i).
template <typename T>
struct TransposeGather {
  using Acc = opmath_t<T>;
  using Cursor = WindowCursor<T>;
  Window<T> y;
  SpatialIndex columns;  // over x's spatial extents
  ChannelKernelIndex index;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    int64_t n, id, ih, iw;
    columns.split(col, n, id, ih, iw);
    return {y.data + n * y.s[0] + g * y.group_stride, id + y.padding[0], ih + y.padding[1], iw + y.padding[2]};
  }
  __device__ __forceinline__ static int64_t source(int64_t t, int64_t stride) {
    const int64_t o = t >= 0 ? t / stride : -1;
    return o * stride == t ? o : -1;  // -1: between strided outputs, or before the first
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t c, kd, kh, kw;
    index.split(k, c, kd, kh, kw);
    const int64_t od = source(p.d - kd * y.dilation[0], y.stride[0]), oh = source(p.h - kh * y.dilation[1], y.stride[1]),
                  ow = source(p.w - kw * y.dilation[2], y.stride[2]);
    if (!y.inside3(od, oh, ow)) return Acc(0);
    return static_cast<Acc>(p.base[c * y.s[1] + od * y.s[2] + oh * y.s[3] + ow * y.s[4]]);
  }
};

// A of backward_weight: y as a [Cy/G, (n, o)] matrix per group.
template <typename T>
struct OutputRows {
  using Acc = opmath_t<T>;
  using Cursor = const T*;
  Window<T> y;
  SpatialIndex positions;  // k = (n, o) over y's spatial extents
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t row) const {
    return y.data + g * y.group_stride + row * y.s[1];
  }
  __device__ __forceinline__ Acc load(Cursor p, int64_t k) const {
    int64_t n, od, oh, ow;
    positions.split(k, n, od, oh, ow);
    return static_cast<Acc>(p[n * y.s[0] + od * y.s[2] + oh * y.s[3] + ow * y.s[4]]);
  }
};

// B of backward_weight: x at o * stride - padding + k * dilation for reduction index (n, o) and
// weight column (ci, kd, kh, kw).
template <typename T>
struct WeightGather {
  using Acc = opmath_t<T>;
  using Cursor = WindowCursor<T>;
  Window<T> x;
  SpatialIndex positions;  // k = (n, o) over y's spatial extents
  SpatialIndex kernel;     // a column (ci, kd, kh, kw): "n" is the channel
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    int64_t c, d, h, w;
    kernel.split(col, c, d, h, w);
    return {x.data + g * x.group_stride + c * x.s[1], d * x.dilation[0] - x.padding[0], h * x.dilation[1] - x.padding[1],
            w * x.dilation[2] - x.padding[2]};
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t n, od, oh, ow;
    positions.split(k, n, od, oh, ow);
    const int64_t id = od * x.stride[0] + p.d, ih = oh * x.stride[1] + p.h, iw = ow * x.stride[2] + p.w;
    if (!x.inside3(id, ih, iw)) return Acc(0);
    return static_cast<Acc>(p.base[n * x.s[0] + id * x.s[2] + ih * x.s[3] + iw * x.s[4]]);
  }
};

// Writes x or y: element (g, row, (n, spatial)) at channel g * channels_per_group + row, plus the
// channel's bias.
template <typename T>
struct ActivationStore {
  T* out;
  int64_t s[5], channels_per_group;
  SpatialIndex columns;
  const T* bias;
  int64_t bias_stride;
  __device__ __forceinline__ void store(int64_t g, int64_t row, int64_t col, opmath_t<T> acc) const {
    int64_t n, d, h, w;
    columns.split(col, n, d, h, w);
    const int64_t c = g * channels_per_group + row;
    if (bias != nullptr) acc += static_cast<opmath_t<T>>(bias[c * bias_stride]);
    out[n * s[0] + c * s[1] + d * s[2] + h * s[3] + w * s[4]] = cast<T>(acc);
  }
};

// Writes w: element (g, row, (ci, kd, kh, kw)).
template <typename T>
struct WeightStore {
  T* w;
  int64_t s[5], rows_per_group;
  SpatialIndex kernel;  // a column (ci, kd, kh, kw): "n" is the channel
  __device__ __forceinline__ void store(int64_t g, int64_t row, int64_t col, opmath_t<T> acc) const {
    int64_t c, d, h, x;
    kernel.split(col, c, d, h, x);
    w[(g * rows_per_group + row) * s[0] + c * s[1] + d * s[2] + h * s[3] + x * s[4]] = cast<T>(acc);
  }
};

struct Extents {
  int64_t x_numel, y_numel, kernel_numel;
};

Extents extents(const ConvArgs& a) {
  Extents e{1, 1, 1};
  for (int i = 0; i < kConvDims; ++i) {
    e.x_numel *= a.x_size[i];
    e.y_numel *= a.y_size[i];
    e.kernel_numel *= a.kernel[i];
  }
  return e;
}

// Channels-last: the channel stride is smaller than the innermost spatial one.
bool channels_inner(const ConvTensorRef& t) { return abs64(t.stride[1]) < abs64(t.stride[4]); }

template <typename T>
Window<T> window(const ConvTensorRef& t, int64_t channels_per_group, const int64_t (&size)[kConvDims],
                 const ConvArgs& a) {
  Window<T> w{static_cast<const T*>(t.data), {}, channels_per_group * t.stride[1], {}, {}, {}, {}};
  for (int i = 0; i < 5; ++i) w.s[i] = t.stride[i];
  for (int i = 0; i < kConvDims; ++i) {
    w.size[i] = size[i];
    w.stride[i] = a.stride[i];
    w.padding[i] = a.padding[i];
    w.dilation[i] = a.dilation[i];
  }
  return w;
}

// The weight as GEMM operand A: rows along dim `row_dim` of w (0: Cy, 1: Cx/G), reduction over
// the other channel dim and the kernel positions, groups along dim 0.
template <typename T>
WeightOperand<T> weight_operand(const ConvArgs& a, int row_dim, int64_t cy, const ChannelKernelIndex& index) {
  return {static_cast<const T*>(a.w.data), cy * a.w.stride[0], a.w.stride[row_dim], a.w.stride[1 - row_dim],
          a.w.stride[2], a.w.stride[3], a.w.stride[4], index, true};
}

// Writes the activation tensor t (x or y) with `channels_per_group` rows per group.
template <typename T>
ActivationStore<T> activation_store(const ConvArgs& a, const ConvTensorRef& t, int64_t channels_per_group,
                                    int64_t numel, const int64_t (&size)[kConvDims]) {
  ActivationStore<T> out{static_cast<T*>(t.data), {}, channels_per_group, {numel, size[1], size[2]},
                         static_cast<const T*>(a.bias), a.bias_stride};
  for (int i = 0; i < 5; ++i) out.s[i] = t.stride[i];
  return out;
}

template <typename T>
void forward(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const bool inner = channels_inner(a.x);
  const ChannelKernelIndex index{cx, e.kernel_numel, a.kernel[1], a.kernel[2], inner};
  const ForwardGather<T> x{window<T>(a.x, cx, a.x_size, a), {e.y_numel, a.y_size[1], a.y_size[2]}, index, inner};
  gemm_tile::launch_product<opmath_t<T>>("foo::conv_forward", stream,
                                         {a.groups, cy, a.batch * e.y_numel, cx * e.kernel_numel},
                                         weight_operand<T>(a, 0, cy, index), x,
                                         activation_store<T>(a, a.y, cy, e.y_numel, a.y_size));
}

template <typename T>
void backward_input(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const bool inner = channels_inner(a.y);
  const ChannelKernelIndex index{cy, e.kernel_numel, a.kernel[1], a.kernel[2], inner};
  const TransposeGather<T> y{window<T>(a.y, cy, a.y_size, a), {e.x_numel, a.x_size[1], a.x_size[2]}, index, inner};
  gemm_tile::launch_product<opmath_t<T>>("foo::conv_backward_input", stream,
                                         {a.groups, cx, a.batch * e.x_numel, cy * e.kernel_numel},
                                         weight_operand<T>(a, 1, cy, index), y,
                                         activation_store<T>(a, a.x, cx, e.x_numel, a.x_size));
}

template <typename T>
void backward_weight(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const SpatialIndex positions{e.y_numel, a.y_size[1], a.y_size[2]};
  const SpatialIndex kernel{e.kernel_numel, a.kernel[1], a.kernel[2]};
  const OutputRows<T> y{window<T>(a.y, cy, a.y_size, a), positions, !channels_inner(a.y)};
  const WeightGather<T> x{window<T>(a.x, cx, a.x_size, a), positions, kernel, !channels_inner(a.x)};
  WeightStore<T> out{static_cast<T*>(a.w.data), {}, cy, kernel};
  for (int i = 0; i < 5; ++i) out.s[i] = a.w.stride[i];
  gemm_tile::launch_product<opmath_t<T>>("foo::conv_backward_weight", stream,
                                         {a.groups, cy, cx * e.kernel_numel, a.batch * e.y_numel}, y, x, out);
}

void check(const ConvArgs& a, const char* op) {
  if (a.groups <= 0 || a.x_channels % a.groups != 0 || a.y_channels % a.groups != 0) {
    throw std::invalid_argument(std::string(op) + ": channels must divide into groups");
  }
  for (int i = 0; i < kConvDims; ++i) {
    if (a.stride[i] <= 0 || a.dilation[i] <= 0 || a.kernel[i] <= 0) {
      throw std::invalid_argument(std::string(op) + ": stride, dilation and kernel sizes must be positive");
    }
  }
}

}  // namespace

void conv_forward(Stream stream, const ConvArgs& a) {
  check(a, "convolution");
  dispatch<kFloatingTypes>(a.dtype, "convolution", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.batch == 0 || a.y_channels == 0 || extents(a).y_numel == 0) return;
    forward<T>(stream, a);
  });
}

void conv_backward_input(Stream stream, const ConvArgs& a) {
  check(a, "convolution_backward");
  dispatch<kFloatingTypes>(a.dtype, "convolution_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.batch == 0 || a.x_channels == 0 || extents(a).x_numel == 0) return;
    backward_input<T>(stream, a);
  });
}

void conv_backward_weight(Stream stream, const ConvArgs& a) {
  check(a, "convolution_backward");
  dispatch<kFloatingTypes>(a.dtype, "convolution_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.y_channels == 0 || a.x_channels == 0) return;
    backward_weight<T>(stream, a);
  });
}

}  // namespace foo::kernels::FOO_TARGET
