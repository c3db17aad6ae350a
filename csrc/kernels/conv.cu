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
#include "kernels/conv.h"
#include "kernels/gemm_tile.cuh"
#include "kernels/kernel.h"

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
  const T* x;
  int64_t xs[5], group_stride;  // group_stride = Cx/G * xs[1]
  int64_t size[3], stride[3], padding[3], dilation[3];
  SpatialIndex columns;  // over y's spatial extents
  ChannelKernelIndex index;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    int64_t n, od, oh, ow;
    columns.split(col, n, od, oh, ow);
    return {x + n * xs[0] + g * group_stride, od * stride[0] - padding[0], oh * stride[1] - padding[1],
            ow * stride[2] - padding[2]};
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t c, kd, kh, kw;
    index.split(k, c, kd, kh, kw);
    const int64_t id = p.d + kd * dilation[0], ih = p.h + kh * dilation[1], iw = p.w + kw * dilation[2];
    if (!inside(id, size[0]) || !inside(ih, size[1]) || !inside(iw, size[2])) return Acc(0);
    return static_cast<Acc>(p.base[c * xs[1] + id * xs[2] + ih * xs[3] + iw * xs[4]]);
  }
};

// B of backward_input: y at (i + padding - k * dilation) / stride where that divides exactly, for
// input column (n, i).
template <typename T>
struct TransposeGather {
  using Acc = opmath_t<T>;
  using Cursor = WindowCursor<T>;
  const T* y;
  int64_t ys[5], group_stride;  // group_stride = Cy/G * ys[1]
  int64_t size[3], stride[3], padding[3], dilation[3];  // size: y's spatial extents
  SpatialIndex columns;  // over x's spatial extents
  ChannelKernelIndex index;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    int64_t n, id, ih, iw;
    columns.split(col, n, id, ih, iw);
    return {y + n * ys[0] + g * group_stride, id + padding[0], ih + padding[1], iw + padding[2]};
  }
  __device__ __forceinline__ static bool source(int64_t t, int64_t stride, int64_t size, int64_t& o) {
    if (t < 0) return false;
    o = t / stride;
    return o * stride == t && o < size;
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t c, kd, kh, kw, od, oh, ow;
    index.split(k, c, kd, kh, kw);
    if (!source(p.d - kd * dilation[0], stride[0], size[0], od) || !source(p.h - kh * dilation[1], stride[1], size[1], oh) ||
        !source(p.w - kw * dilation[2], stride[2], size[2], ow)) {
      return Acc(0);
    }
    return static_cast<Acc>(p.base[c * ys[1] + od * ys[2] + oh * ys[3] + ow * ys[4]]);
  }
};

// A of backward_weight: y as a [Cy/G, (n, o)] matrix per group.
template <typename T>
struct OutputRows {
  using Acc = opmath_t<T>;
  using Cursor = const T*;
  const T* y;
  int64_t ys[5], group_stride;
  SpatialIndex positions;  // k = (n, o) over y's spatial extents
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t row) const { return y + g * group_stride + row * ys[1]; }
  __device__ __forceinline__ Acc load(Cursor p, int64_t k) const {
    int64_t n, od, oh, ow;
    positions.split(k, n, od, oh, ow);
    return static_cast<Acc>(p[n * ys[0] + od * ys[2] + oh * ys[3] + ow * ys[4]]);
  }
};

// B of backward_weight: x at o * stride - padding + k * dilation for reduction index (n, o) and
// weight column (ci, kd, kh, kw).
template <typename T>
struct WeightGather {
  using Acc = opmath_t<T>;
  using Cursor = WindowCursor<T>;
  const T* x;
  int64_t xs[5], group_stride;
  int64_t size[3], stride[3], padding[3], dilation[3];
  SpatialIndex positions;  // k = (n, o) over y's spatial extents
  int64_t kernel_numel, kh, kw;
  bool k_fast;
  __device__ __forceinline__ Cursor cursor(int64_t g, int64_t col) const {
    const int64_t c = col / kernel_numel;
    int64_t pos = col - c * kernel_numel;
    const int64_t w = pos % kw;
    pos /= kw;
    const int64_t h = pos % kh, d = pos / kh;
    return {x + g * group_stride + c * xs[1], d * dilation[0] - padding[0], h * dilation[1] - padding[1],
            w * dilation[2] - padding[2]};
  }
  __device__ __forceinline__ Acc load(const Cursor& p, int64_t k) const {
    int64_t n, od, oh, ow;
    positions.split(k, n, od, oh, ow);
    const int64_t id = od * stride[0] + p.d, ih = oh * stride[1] + p.h, iw = ow * stride[2] + p.w;
    if (!inside(id, size[0]) || !inside(ih, size[1]) || !inside(iw, size[2])) return Acc(0);
    return static_cast<Acc>(p.base[n * xs[0] + id * xs[2] + ih * xs[3] + iw * xs[4]]);
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
  int64_t s[5], rows_per_group, kernel_numel, kh, kw;
  __device__ __forceinline__ void store(int64_t g, int64_t row, int64_t col, opmath_t<T> acc) const {
    const int64_t c = col / kernel_numel;
    int64_t pos = col - c * kernel_numel;
    const int64_t x = pos % kw;
    pos /= kw;
    const int64_t y = pos % kh, z = pos / kh;
    w[(g * rows_per_group + row) * s[0] + c * s[1] + z * s[2] + y * s[3] + x * s[4]] = cast<T>(acc);
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

template <class G>
void copy_window(G& g, const ConvArgs& a) {
  for (int i = 0; i < kConvDims; ++i) {
    g.stride[i] = a.stride[i];
    g.padding[i] = a.padding[i];
    g.dilation[i] = a.dilation[i];
  }
}

void copy_strides(int64_t (&dst)[5], const ConvTensorRef& t) {
  for (int i = 0; i < 5; ++i) dst[i] = t.stride[i];
}

template <typename T>
void forward(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const bool inner = channels_inner(a.x);
  const ChannelKernelIndex index{cx, e.kernel_numel, a.kernel[1], a.kernel[2], inner};

  WeightOperand<T> w{static_cast<const T*>(a.w.data), cy * a.w.stride[0], a.w.stride[0], a.w.stride[1],
                     a.w.stride[2], a.w.stride[3], a.w.stride[4], index, true};
  ForwardGather<T> x{};
  x.x = static_cast<const T*>(a.x.data);
  copy_strides(x.xs, a.x);
  x.group_stride = cx * a.x.stride[1];
  for (int i = 0; i < kConvDims; ++i) x.size[i] = a.x_size[i];
  copy_window(x, a);
  x.columns = {e.y_numel, a.y_size[1], a.y_size[2]};
  x.index = index;
  x.k_fast = inner;
  ActivationStore<T> out{static_cast<T*>(a.y.data), {}, cy, {e.y_numel, a.y_size[1], a.y_size[2]},
                         static_cast<const T*>(a.bias), a.bias_stride};
  copy_strides(out.s, a.y);
  gemm_tile::launch_product<opmath_t<T>>("foo::conv_forward", stream, {a.groups, cy, a.batch * e.y_numel, cx * e.kernel_numel},
                                         w, x, out);
}

template <typename T>
void backward_input(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const bool inner = channels_inner(a.y);
  const ChannelKernelIndex index{cy, e.kernel_numel, a.kernel[1], a.kernel[2], inner};

  WeightOperand<T> w{static_cast<const T*>(a.w.data), cy * a.w.stride[0], a.w.stride[1], a.w.stride[0],
                     a.w.stride[2], a.w.stride[3], a.w.stride[4], index, true};
  TransposeGather<T> y{};
  y.y = static_cast<const T*>(a.y.data);
  copy_strides(y.ys, a.y);
  y.group_stride = cy * a.y.stride[1];
  for (int i = 0; i < kConvDims; ++i) y.size[i] = a.y_size[i];
  copy_window(y, a);
  y.columns = {e.x_numel, a.x_size[1], a.x_size[2]};
  y.index = index;
  y.k_fast = inner;
  ActivationStore<T> out{static_cast<T*>(a.x.data), {}, cx, {e.x_numel, a.x_size[1], a.x_size[2]},
                         static_cast<const T*>(a.bias), a.bias_stride};
  copy_strides(out.s, a.x);
  gemm_tile::launch_product<opmath_t<T>>("foo::conv_backward_input", stream,
                                         {a.groups, cx, a.batch * e.x_numel, cy * e.kernel_numel}, w, y, out);
}

template <typename T>
void backward_weight(Stream stream, const ConvArgs& a) {
  const Extents e = extents(a);
  const int64_t cx = a.x_channels / a.groups, cy = a.y_channels / a.groups;
  const SpatialIndex positions{e.y_numel, a.y_size[1], a.y_size[2]};

  OutputRows<T> y{static_cast<const T*>(a.y.data), {}, cy * a.y.stride[1], positions, !channels_inner(a.y)};
  copy_strides(y.ys, a.y);
  WeightGather<T> x{};
  x.x = static_cast<const T*>(a.x.data);
  copy_strides(x.xs, a.x);
  x.group_stride = cx * a.x.stride[1];
  for (int i = 0; i < kConvDims; ++i) x.size[i] = a.x_size[i];
  copy_window(x, a);
  x.positions = positions;
  x.kernel_numel = e.kernel_numel;
  x.kh = a.kernel[1];
  x.kw = a.kernel[2];
  x.k_fast = !channels_inner(a.x);
  WeightStore<T> out{static_cast<T*>(a.w.data), {}, cy, e.kernel_numel, a.kernel[1], a.kernel[2]};
  copy_strides(out.s, a.w);
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
