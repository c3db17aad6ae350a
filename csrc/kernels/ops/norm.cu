// Normalisation kernels (norm.h).
//
// Row norms (layer, group, RMS): a block per row (grid-stride over rows). The block sums the row
// (mean), then the squared deviations from it (variance: two passes, no cancellation), then
// writes the normalised row; the sums meet through softmax_reduce.h's block_reduce. The backward
// reduces sum(dy * w) and sum(dy * w * xhat) per row the same way, and the weight/bias gradients
// are column sums: a block covers 32 adjacent parameters (coalesced reads along a row) with 8
// threads down the rows each, combined in shared memory.
//
// Batch norm: a block owns whole channels, so statistics, the running-stat update and the
// normalisation (or, backward, the two per-channel sums and grad_input) happen in one kernel.
// Blocks are 32 channels x 8 threads when channels are adjacent in memory (channels_last, or a
// plain [N, C] input), and 1 channel x 256 threads otherwise (threads along the contiguous
// spatial run); the threads of a channel combine their sums in shared memory.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/exact_math.h"
#include "kernels/core/kernel.h"
#include "kernels/ops/norm.h"
#include "kernels/core/softmax_reduce.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using softmax_detail::SumOp;

template <typename Acc>
__device__ __forceinline__ Acc inv_sqrt(Acc v) {
  if constexpr (std::is_same_v<Acc, float>) return 1.0f / sqrtf(v);
  else return 1.0 / sqrt(v);
}

// The normalised value as ATen's CPU layer norm computes it, x * rstd + (-rstd * mean), each
// product rounded on its own (no fused multiply-add), so rows of one element (x == mean) give the
// CPU's value rather than an exact 0.
template <typename Acc>
__device__ __forceinline__ Acc normalized(Acc x, Acc mean, Acc rstd) {
  return add_rn(mul_rn(x, rstd), mul_rn(-rstd, mean));
}

// The same as ATen's CPU backward computes it for the weight gradient, where the vectorised
// rstd * x + (-rstd * mean) compiles to a fused multiply-add.
template <typename Acc>
__device__ __forceinline__ Acc normalized_fused(Acc x, Acc mean, Acc rstd) {
  return fma_rn(rstd, x, mul_rn(-rstd, mean));
}

template <typename P, typename Acc>
__device__ __forceinline__ Acc param_or(const P* p, int64_t i, Acc fallback) {
  return p != nullptr ? static_cast<Acc>(p[i]) : fallback;
}

// ---- row norms ------------------------------------------------------------------------------

template <typename T, typename P>
struct RowParams {
  using Acc = opmath_t<T>;
  int64_t rows, cols, groups, per_group, inner;  // per_group = cols / inner
  Acc eps;
  bool rms;
  const T* x;
  const P* weight;
  const P* bias;
  T* y;
  P* mean;
  P* rstd;
  const T* grad_out;
  T* grad_input;
  P* grad_weight;
  P* grad_bias;
  __device__ __forceinline__ int64_t param(int64_t row, int64_t col) const {
    return (row % groups) * per_group + col / inner;
  }
};

// Who reduces one row: a warp (rows up to kWarpRowMax; several rows per block, shuffles only) or
// the whole block (longer rows; shuffles, then shared memory across warps). Row loops depend on
// the group only, so every lane of a group runs each reduction together.
constexpr int64_t kWarpRowMax = 1024;
constexpr unsigned kWarpRowsThreads = 128;  // 4 rows per block

struct WarpRows {
  __device__ __forceinline__ int64_t first_row() const {
    return static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  }
  __device__ __forceinline__ int64_t row_step() const {
    return static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  }
  __device__ __forceinline__ int64_t rank() const { return threadIdx.x % kWarp; }
  __device__ __forceinline__ int64_t size() const { return kWarp; }
  template <typename Acc>
  __device__ __forceinline__ Acc sum(Acc v, Acc*) const { return warp_reduce(v, SumOp()); }
};

struct BlockRows {
  __device__ __forceinline__ int64_t first_row() const { return blockIdx.x; }
  __device__ __forceinline__ int64_t row_step() const { return gridDim.x; }
  __device__ __forceinline__ int64_t rank() const { return threadIdx.x; }
  __device__ __forceinline__ int64_t size() const { return blockDim.x; }
  template <typename Acc>
  __device__ __forceinline__ Acc sum(Acc v, Acc* scratch) const { return block_reduce(v, SumOp(), Acc(0), scratch); }
};

template <typename T, typename P, class Group>
__global__ void row_norm_forward_kernel(RowParams<T, P> p) {
  using Acc = opmath_t<T>;
  __shared__ Acc scratch[kWarp];
  const Group grp;
  const int64_t tid = grp.rank(), step = grp.size();
  for (int64_t r = grp.first_row(); r < p.rows; r += grp.row_step()) {
    const T* x = p.x + r * p.cols;
    Acc mean(0);
    if (!p.rms) {
      Acc s(0);
      for (int64_t j = tid; j < p.cols; j += step) s += static_cast<Acc>(x[j]);
      mean = grp.sum(s, scratch) / static_cast<Acc>(p.cols);
      if (p.cols == 0) mean = Acc(0);  // as the CPU: mean 0, rstd NaN
    }
    Acc q(0);
    for (int64_t j = tid; j < p.cols; j += step) {
      const Acc d = static_cast<Acc>(x[j]) - mean;
      q += d * d;
    }
    const Acc var = grp.sum(q, scratch) / static_cast<Acc>(p.cols);
    const Acc rstd = inv_sqrt(var + p.eps);
    if (tid == 0) {
      if (!p.rms) p.mean[r] = cast<P>(mean);
      p.rstd[r] = cast<P>(rstd);
    }
    T* y = p.y + r * p.cols;
    for (int64_t j = tid; j < p.cols; j += step) {
      const int64_t k = p.param(r, j);
      const Acc v = normalized(static_cast<Acc>(x[j]), mean, rstd);
      y[j] = cast<T>(v * param_or(p.weight, k, Acc(1)) + param_or(p.bias, k, Acc(0)));
    }
  }
}

// dx = rstd * (dy*w - mean(dy*w) - xhat * mean(dy*w*xhat)); RMS norm drops the mean(dy*w) term.
template <typename T, typename P, class Group>
__global__ void row_norm_backward_kernel(RowParams<T, P> p) {
  using Acc = opmath_t<T>;
  __shared__ Acc scratch[kWarp];
  const Group grp;
  const int64_t tid = grp.rank(), step = grp.size();
  for (int64_t r = grp.first_row(); r < p.rows; r += grp.row_step()) {
    const T* x = p.x + r * p.cols;
    const T* dy = p.grad_out + r * p.cols;
    const Acc mean = p.rms ? Acc(0) : static_cast<Acc>(p.mean[r]);
    const Acc rstd = static_cast<Acc>(p.rstd[r]);
    Acc a(0), b(0);
    for (int64_t j = tid; j < p.cols; j += step) {
      const Acc g = static_cast<Acc>(dy[j]) * param_or(p.weight, p.param(r, j), Acc(1));
      a += g;
      b += g * (static_cast<Acc>(x[j]) - mean) * rstd;
    }
    const Acc n = static_cast<Acc>(p.cols);
    const Acc mean_g = p.rms ? Acc(0) : grp.sum(a, scratch) / n;
    const Acc mean_gx = grp.sum(b, scratch) / n;
    T* dx = p.grad_input + r * p.cols;
    for (int64_t j = tid; j < p.cols; j += step) {
      const Acc g = static_cast<Acc>(dy[j]) * param_or(p.weight, p.param(r, j), Acc(1));
      const Acc xhat = (static_cast<Acc>(x[j]) - mean) * rstd;
      dx[j] = cast<T>(rstd * (g - mean_g - xhat * mean_gx));
    }
  }
}

constexpr int kColumnWidth = 32, kColumnHeight = 8;

// grad_weight[k] = sum dy * xhat, grad_bias[k] = sum dy over the elements that parameter k scales:
// rows i * groups + k / per_group (i < rows / groups), columns (k % per_group) * inner + s (s < inner).
template <typename T, typename P>
__global__ void row_norm_param_grad_kernel(RowParams<T, P> p) {
  using Acc = opmath_t<T>;
  __shared__ Acc sw[kColumnHeight][kColumnWidth + 1], sb[kColumnHeight][kColumnWidth + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t params = p.groups * p.per_group;
  const int64_t count = p.rows / p.groups * p.inner;
  for (int64_t tile = blockIdx.x; tile * kColumnWidth < params; tile += gridDim.x) {  // uniform over the block
    const int64_t k = tile * kColumnWidth + tx;
    Acc aw(0), ab(0);
    if (k < params) {
      const int64_t g = k / p.per_group, col0 = (k - g * p.per_group) * p.inner;
      for (int64_t e = ty; e < count; e += kColumnHeight) {
        const int64_t i = e / p.inner, row = i * p.groups + g;
        const int64_t at = row * p.cols + col0 + (e - i * p.inner);
        const Acc dy = static_cast<Acc>(p.grad_out[at]);
        const Acc mean = p.rms ? Acc(0) : static_cast<Acc>(p.mean[row]);
        aw += dy * normalized_fused(static_cast<Acc>(p.x[at]), mean, static_cast<Acc>(p.rstd[row]));
        ab += dy;
      }
    }
    sw[ty][tx] = aw;
    sb[ty][tx] = ab;
    __syncthreads();
    if (ty == 0 && k < params) {
      for (int y = 1; y < kColumnHeight; ++y) {
        aw += sw[y][tx];
        ab += sb[y][tx];
      }
      if (p.grad_weight != nullptr) p.grad_weight[k] = cast<P>(aw);
      if (p.grad_bias != nullptr) p.grad_bias[k] = cast<P>(ab);
    }
    __syncthreads();  // shared memory is reused by the next tile
  }
}

// Launches a row kernel: a warp per row up to kWarpRowMax columns, else a block per row (256
// threads, 512 from 8192 columns, 1024 from 32768).
template <typename T, typename P>
void launch_rows(const char* op, Stream stream, const RowParams<T, P>& p, void (*warp_kernel)(RowParams<T, P>),
                 void (*block_kernel)(RowParams<T, P>)) {
  if (p.cols <= kWarpRowMax) {
    const int64_t rows_per_block = kWarpRowsThreads / kWarp;
    launch(op, warp_kernel, capped_grid((p.rows + rows_per_block - 1) / rows_per_block), dim3(kWarpRowsThreads), 0,
           stream, p);
  } else {
    const unsigned threads = p.cols >= 32768 ? 1024u : p.cols >= 8192 ? 512u : 256u;
    launch(op, block_kernel, capped_grid(p.rows), dim3(threads), 0, stream, p);
  }
}
template <typename T, typename P>
RowParams<T, P> row_params(int64_t rows, int64_t cols, int64_t groups, int64_t inner, bool rms) {
  RowParams<T, P> p{};
  p.rows = rows;
  p.cols = cols;
  p.groups = groups;
  p.inner = inner;
  p.per_group = cols / inner;
  p.rms = rms;
  return p;
}

// Calls f(TypeTag<T>, TypeTag<P>) for data dtype T and parameter dtype P (P == T, or float with
// 16-bit T).
template <typename F>
void dispatch_norm(DType dtype, DType param_dtype, const char* op, F&& f) {
  dispatch<kFloatingTypes>(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (param_dtype == dtype) return f(tag, tag);
    if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
      if (param_dtype == DType::Float32) return f(tag, TypeTag<float>{});
    }
    throw std::invalid_argument(std::string(op) + ": foo has no kernel for " + dtype_name(dtype) + " input with " +
                                dtype_name(param_dtype) + " parameters");
  });
}

// ---- batch norm -----------------------------------------------------------------------------

template <typename T>
struct ChannelTensor {
  T* data;
  int64_t sn, sc, ss;
  __device__ __forceinline__ T& at(int64_t ch, int64_t e, int64_t s) const {
    const int64_t i = e / s;
    return data[i * sn + ch * sc + (e - i * s) * ss];
  }
};

template <typename T>
ChannelTensor<T> channel_tensor(const ChannelTensorRef& r) {
  return {static_cast<T*>(const_cast<void*>(r.data)), r.sn, r.sc, r.ss};
}

constexpr int kChannelThreads = 256;

// Sums v over the threads of a block column (same threadIdx.x); every thread gets its column's
// total. blockDim.y must be a power of two; every thread of the block must call it.
template <typename Acc>
__device__ __forceinline__ Acc column_sum(Acc v, Acc* smem) {
  const int tx = threadIdx.x, ty = threadIdx.y, width = blockDim.x;
  __syncthreads();  // the previous call's readers are done with smem
  smem[ty * width + tx] = v;
  __syncthreads();
  for (int half = blockDim.y / 2; half > 0; half /= 2) {
    if (ty < half) smem[ty * width + tx] += smem[(ty + half) * width + tx];
    __syncthreads();
  }
  return smem[tx];
}

template <typename T, typename P>
struct BatchNormParams {
  using Acc = opmath_t<T>;
  int64_t n, c, s;
  bool training;
  Acc momentum, eps;
  ChannelTensor<const T> x;
  ChannelTensor<T> y;
  const P* weight;
  const P* bias;
  P* running_mean;
  P* running_var;
  Acc* save_mean;  // the statistics in Acc, as CUDA (float32 for 16-bit data)
  Acc* save_invstd;
};

template <typename T, typename P>
__global__ void batch_norm_forward_kernel(BatchNormParams<T, P> p) {
  using Acc = opmath_t<T>;
  __shared__ Acc smem[kChannelThreads];
  const int64_t count = p.n * p.s, width = blockDim.x;
  for (int64_t tile = blockIdx.x; tile * width < p.c; tile += gridDim.x) {  // uniform over the block
    const int64_t ch = tile * width + threadIdx.x;
    const bool valid = ch < p.c;
    Acc mean, invstd;
    if (p.training) {
      Acc sum(0);
      if (valid) {
        for (int64_t e = threadIdx.y; e < count; e += blockDim.y) sum += static_cast<Acc>(p.x.at(ch, e, p.s));
      }
      mean = column_sum(sum, smem) / static_cast<Acc>(count);
      Acc sq(0);
      if (valid) {
        for (int64_t e = threadIdx.y; e < count; e += blockDim.y) {
          const Acc d = static_cast<Acc>(p.x.at(ch, e, p.s)) - mean;
          sq += d * d;
        }
      }
      const Acc var_sum = column_sum(sq, smem);
      // The CPU normalises with the saved (rounded to P) statistics.
      invstd = static_cast<Acc>(cast<P>(inv_sqrt(var_sum / static_cast<Acc>(count) + p.eps)));
      const Acc unrounded_mean = mean;
      mean = static_cast<Acc>(cast<P>(mean));
      if (valid && threadIdx.y == 0) {
        p.save_mean[ch] = mean;
        p.save_invstd[ch] = invstd;
        if (p.running_mean != nullptr) {
          p.running_mean[ch] =
              cast<P>(p.momentum * unrounded_mean + (Acc(1) - p.momentum) * static_cast<Acc>(p.running_mean[ch]));
        }
        if (p.running_var != nullptr) {
          const Acc unbiased = var_sum / static_cast<Acc>(count - 1);
          p.running_var[ch] =
              cast<P>(p.momentum * unbiased + (Acc(1) - p.momentum) * static_cast<Acc>(p.running_var[ch]));
        }
      }
    } else {
      mean = valid ? static_cast<Acc>(p.running_mean[ch]) : Acc(0);
      invstd = valid ? inv_sqrt(static_cast<Acc>(p.running_var[ch]) + p.eps) : Acc(0);
      // As CUDA: evaluation returns the statistics it normalised with (docs/decisions.md).
      if (valid && threadIdx.y == 0) {
        p.save_mean[ch] = mean;
        p.save_invstd[ch] = invstd;
      }
    }
    if (!valid) continue;
    // As the CPU: y = x * alpha + beta with alpha = invstd * w, beta = b - mean * alpha.
    const Acc alpha = invstd * param_or(p.weight, ch, Acc(1));
    const Acc beta = param_or(p.bias, ch, Acc(0)) - mean * alpha;
    for (int64_t e = threadIdx.y; e < count; e += blockDim.y) {
      p.y.at(ch, e, p.s) = cast<T>(static_cast<Acc>(p.x.at(ch, e, p.s)) * alpha + beta);
    }
  }
}

template <typename T, typename P>
struct BatchNormBackwardParams {
  using Acc = opmath_t<T>;
  int64_t n, c, s;
  bool training;
  Acc eps;
  ChannelTensor<const T> grad_out, x;
  ChannelTensor<T> grad_input;  // data may be null
  const P* weight;
  const Acc* mean;  // in Acc (the host widens running statistics)
  const Acc* invstd_or_var;
  P* grad_weight;
  P* grad_bias;
};

template <typename T, typename P>
__global__ void batch_norm_backward_kernel(BatchNormBackwardParams<T, P> p) {
  using Acc = opmath_t<T>;
  __shared__ Acc smem[kChannelThreads];
  const int64_t count = p.n * p.s, width = blockDim.x;
  const bool want_input = p.grad_input.data != nullptr;
  const bool need_sums = p.grad_weight != nullptr || p.grad_bias != nullptr || (p.training && want_input);
  for (int64_t tile = blockIdx.x; tile * width < p.c; tile += gridDim.x) {  // uniform over the block
    const int64_t ch = tile * width + threadIdx.x;
    const bool valid = ch < p.c;
    Acc mean(0), invstd(0);
    if (valid) {
      mean = p.mean[ch];
      invstd = p.training ? p.invstd_or_var[ch] : inv_sqrt(p.invstd_or_var[ch] + p.eps);
    }
    Acc sum_dy(0), dot(0);
    if (need_sums) {
      if (valid) {
        for (int64_t e = threadIdx.y; e < count; e += blockDim.y) {
          const Acc dy = static_cast<Acc>(p.grad_out.at(ch, e, p.s));
          sum_dy += dy;
          dot += dy * (static_cast<Acc>(p.x.at(ch, e, p.s)) - mean);
        }
      }
      sum_dy = column_sum(sum_dy, smem);
      dot = column_sum(dot, smem);
    }
    if (!valid) continue;
    if (threadIdx.y == 0) {
      if (p.grad_weight != nullptr) p.grad_weight[ch] = cast<P>(dot * invstd);
      if (p.grad_bias != nullptr) p.grad_bias[ch] = cast<P>(sum_dy);
    }
    if (!want_input) continue;
    const Acc scale = invstd * param_or(p.weight, ch, Acc(1));
    if (p.training) {
      const Acc k = dot * invstd * invstd / static_cast<Acc>(count), grad_mean = sum_dy / static_cast<Acc>(count);
      for (int64_t e = threadIdx.y; e < count; e += blockDim.y) {
        const Acc dy = static_cast<Acc>(p.grad_out.at(ch, e, p.s));
        const Acc xc = static_cast<Acc>(p.x.at(ch, e, p.s)) - mean;
        p.grad_input.at(ch, e, p.s) = cast<T>((dy - grad_mean - xc * k) * scale);
      }
    } else {
      for (int64_t e = threadIdx.y; e < count; e += blockDim.y) {
        p.grad_input.at(ch, e, p.s) = cast<T>(static_cast<Acc>(p.grad_out.at(ch, e, p.s)) * scale);
      }
    }
  }
}

// 32 channels x 8 threads when channels are adjacent in x's memory, else 1 x 256.
dim3 channel_block(int64_t channel_stride, int64_t c) {
  return (channel_stride == 1 && c > 1) ? dim3(kColumnWidth, kChannelThreads / kColumnWidth) : dim3(1, kChannelThreads);
}

}  // namespace

void row_norm_forward(Stream stream, const RowNormArgs& a) {
  const char* op = a.rms ? "rms_norm" : a.groups > 1 || a.inner > 1 ? "native_group_norm" : "native_layer_norm";
  dispatch_norm(a.dtype, a.param_dtype, op, [&](auto t, auto pt) {
    using T = typename decltype(t)::type;
    using P = typename decltype(pt)::type;
    if (a.rows == 0) return;
    auto p = row_params<T, P>(a.rows, a.cols, a.groups, a.inner, a.rms);
    p.eps = static_cast<opmath_t<T>>(a.eps);
    p.x = static_cast<const T*>(a.x);
    p.weight = static_cast<const P*>(a.weight);
    p.bias = static_cast<const P*>(a.bias);
    p.y = static_cast<T*>(a.y);
    p.mean = static_cast<P*>(a.mean);
    p.rstd = static_cast<P*>(a.rstd);
    launch_rows(op, stream, p, row_norm_forward_kernel<T, P, WarpRows>, row_norm_forward_kernel<T, P, BlockRows>);
  });
}

void row_norm_backward(Stream stream, const RowNormBackwardArgs& a) {
  const char* op = a.rms ? "rms_norm_backward"
                         : a.groups > 1 || a.inner > 1 ? "native_group_norm_backward" : "native_layer_norm_backward";
  dispatch_norm(a.dtype, a.param_dtype, op, [&](auto t, auto pt) {
    using T = typename decltype(t)::type;
    using P = typename decltype(pt)::type;
    auto p = row_params<T, P>(a.rows, a.cols, a.groups, a.inner, a.rms);
    p.x = static_cast<const T*>(a.x);
    p.grad_out = static_cast<const T*>(a.grad_out);
    p.mean = static_cast<P*>(const_cast<void*>(a.mean));
    p.rstd = static_cast<P*>(const_cast<void*>(a.rstd));
    p.weight = static_cast<const P*>(a.weight);
    p.grad_input = static_cast<T*>(a.grad_input);
    p.grad_weight = static_cast<P*>(a.grad_weight);
    p.grad_bias = static_cast<P*>(a.grad_bias);
    if (a.grad_input != nullptr && a.rows > 0 && a.cols > 0) {
      launch_rows(op, stream, p, row_norm_backward_kernel<T, P, WarpRows>, row_norm_backward_kernel<T, P, BlockRows>);
    }
    const int64_t params = a.groups * (a.cols / a.inner);
    if ((a.grad_weight != nullptr || a.grad_bias != nullptr) && params > 0) {
      launch(op, row_norm_param_grad_kernel<T, P>, capped_grid((params + kColumnWidth - 1) / kColumnWidth),
             dim3(kColumnWidth, kColumnHeight), 0, stream, p);
    }
  });
}

void batch_norm_forward(Stream stream, const BatchNormArgs& a) {
  dispatch_norm(a.dtype, a.param_dtype, "native_batch_norm", [&](auto t, auto pt) {
    using T = typename decltype(t)::type;
    using P = typename decltype(pt)::type;
    using Acc = opmath_t<T>;
    if (a.c == 0) return;
    BatchNormParams<T, P> p{};
    p.n = a.n;
    p.c = a.c;
    p.s = a.s;
    p.training = a.training;
    p.momentum = static_cast<Acc>(a.momentum);
    p.eps = static_cast<Acc>(a.eps);
    p.x = channel_tensor<const T>(a.x);
    p.y = channel_tensor<T>(a.y);
    p.weight = static_cast<const P*>(a.weight);
    p.bias = static_cast<const P*>(a.bias);
    p.running_mean = static_cast<P*>(a.running_mean);
    p.running_var = static_cast<P*>(a.running_var);
    p.save_mean = static_cast<Acc*>(a.save_mean);
    p.save_invstd = static_cast<Acc*>(a.save_invstd);
    const dim3 block = channel_block(a.x.sc, a.c);
    launch("native_batch_norm", batch_norm_forward_kernel<T, P>, capped_grid((a.c + block.x - 1) / block.x), block, 0,
           stream, p);
  });
}

void batch_norm_backward(Stream stream, const BatchNormBackwardArgs& a) {
  dispatch_norm(a.dtype, a.param_dtype, "native_batch_norm_backward", [&](auto t, auto pt) {
    using T = typename decltype(t)::type;
    using P = typename decltype(pt)::type;
    if (a.c == 0) return;
    BatchNormBackwardParams<T, P> p{};
    p.n = a.n;
    p.c = a.c;
    p.s = a.s;
    p.training = a.training;
    p.eps = static_cast<opmath_t<T>>(a.eps);
    p.grad_out = channel_tensor<const T>(a.grad_out);
    p.x = channel_tensor<const T>(a.x);
    p.grad_input = channel_tensor<T>(a.grad_input);
    p.weight = static_cast<const P*>(a.weight);
    p.mean = static_cast<const opmath_t<T>*>(a.mean);
    p.invstd_or_var = static_cast<const opmath_t<T>*>(a.invstd_or_var);
    p.grad_weight = static_cast<P*>(a.grad_weight);
    p.grad_bias = static_cast<P*>(a.grad_bias);
    const dim3 block = channel_block(a.x.sc, a.c);
    launch("native_batch_norm_backward", batch_norm_backward_kernel<T, P>, capped_grid((a.c + block.x - 1) / block.x),
           block, 0, stream, p);
  });
}

}  // namespace foo::kernels::FOO_TARGET
