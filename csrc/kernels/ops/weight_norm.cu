// Weight normalisation (weight_norm.h). Dim 0: a block per row (grid-stride over rows), its threads
// striding the row, the sum through block_reduce.h's block_reduce. Last dim: a thread per column,
// walking the rows (neighbouring threads read neighbouring elements), no communication.
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"
#include "kernels/core/softmax_reduce.h"
#include "kernels/ops/weight_norm.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using softmax_detail::SumOp;

template <typename T, typename N>
__global__ void weight_norm_rows_kernel(WeightNormArgs a) {
  using Acc = opmath_t<T>;
  __shared__ Acc scratch[kWarp];
  const T* v = static_cast<const T*>(a.v);
  const T* g = static_cast<const T*>(a.g);
  T* w = static_cast<T*>(a.w);
  N* norms = static_cast<N*>(a.norms);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const T* vr = v + r * a.cols;
    Acc s(0);
    for (int64_t j = threadIdx.x; j < a.cols; j += blockDim.x) {
      const Acc x = static_cast<Acc>(vr[j]);
      s += x * x;
    }
    const Acc norm = math::sqrt(block_reduce(s, SumOp(), Acc(0), scratch));
    if (threadIdx.x == 0) norms[r] = cast<N>(norm);
    const Acc scale = static_cast<Acc>(g[r]) / norm;
    for (int64_t j = threadIdx.x; j < a.cols; j += blockDim.x) w[r * a.cols + j] = cast<T>(static_cast<Acc>(vr[j]) * scale);
  }
}

template <typename T, typename N>
__global__ void weight_norm_columns_kernel(WeightNormArgs a) {
  using Acc = opmath_t<T>;
  const T* v = static_cast<const T*>(a.v);
  const T* g = static_cast<const T*>(a.g);
  T* w = static_cast<T*>(a.w);
  N* norms = static_cast<N*>(a.norms);
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < a.cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Acc s(0);
    for (int64_t r = 0; r < a.rows; ++r) {
      const Acc x = static_cast<Acc>(v[r * a.cols + c]);
      s += x * x;
    }
    const Acc norm = math::sqrt(s);
    norms[c] = cast<N>(norm);
    const Acc scale = static_cast<Acc>(g[c]) / norm;
    for (int64_t r = 0; r < a.rows; ++r) w[r * a.cols + c] = cast<T>(static_cast<Acc>(v[r * a.cols + c]) * scale);
  }
}

template <typename T, typename N>
__global__ void weight_norm_backward_rows_kernel(WeightNormArgs a) {
  using Acc = opmath_t<T>;
  __shared__ Acc scratch[kWarp];
  const T* gw = static_cast<const T*>(a.grad_w);
  const T* v = static_cast<const T*>(a.v);
  const T* g = static_cast<const T*>(a.g);
  const N* norms = static_cast<const N*>(a.norms);
  T* gv = static_cast<T*>(a.grad_v);
  T* gg = static_cast<T*>(a.grad_g);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t base = r * a.cols;
    Acc s(0);
    for (int64_t j = threadIdx.x; j < a.cols; j += blockDim.x) s += static_cast<Acc>(gw[base + j]) * static_cast<Acc>(v[base + j]);
    s = block_reduce(s, SumOp(), Acc(0), scratch);
    const Acc norm = static_cast<Acc>(norms[r]);
    const Acc grad_g = s / norm;
    if (threadIdx.x == 0) gg[r] = cast<T>(grad_g);
    const Acc p = static_cast<Acc>(g[r]) / norm;
    const Acc q = p * grad_g / norm;
    for (int64_t j = threadIdx.x; j < a.cols; j += blockDim.x) {
      gv[base + j] = cast<T>(p * static_cast<Acc>(gw[base + j]) - q * static_cast<Acc>(v[base + j]));
    }
  }
}

template <typename T, typename N>
__global__ void weight_norm_backward_columns_kernel(WeightNormArgs a) {
  using Acc = opmath_t<T>;
  const T* gw = static_cast<const T*>(a.grad_w);
  const T* v = static_cast<const T*>(a.v);
  const T* g = static_cast<const T*>(a.g);
  const N* norms = static_cast<const N*>(a.norms);
  T* gv = static_cast<T*>(a.grad_v);
  T* gg = static_cast<T*>(a.grad_g);
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < a.cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Acc s(0);
    for (int64_t r = 0; r < a.rows; ++r) s += static_cast<Acc>(gw[r * a.cols + c]) * static_cast<Acc>(v[r * a.cols + c]);
    const Acc norm = static_cast<Acc>(norms[c]);
    const Acc grad_g = s / norm;
    gg[c] = cast<T>(grad_g);
    const Acc p = static_cast<Acc>(g[c]) / norm;
    const Acc q = p * grad_g / norm;
    for (int64_t r = 0; r < a.rows; ++r) {
      gv[r * a.cols + c] = cast<T>(p * static_cast<Acc>(gw[r * a.cols + c]) - q * static_cast<Acc>(v[r * a.cols + c]));
    }
  }
}

template <bool Backward>
void run(Stream stream, const WeightNormArgs& a) {
  const char* name = Backward ? "weight_norm_backward" : "weight_norm";
  if (a.rows == 0 || a.cols == 0) return;
  dispatch<kFloatingTypes>(a.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using N = opmath_t<T>;  // norms: float32 for 16-bit dtypes
    if (a.per_row) {
      auto kernel = Backward ? weight_norm_backward_rows_kernel<T, N> : weight_norm_rows_kernel<T, N>;
      launch(name, kernel, capped_grid(a.rows), dim3(threads_for(a.cols)), 0, stream, a);
    } else {
      auto kernel = Backward ? weight_norm_backward_columns_kernel<T, N> : weight_norm_columns_kernel<T, N>;
      launch_independent(name, kernel, blocks_for(a.cols, threads_for(a.cols), foo::sim::kMaxGridDimY),
                         dim3(threads_for(a.cols)), stream, a);
    }
  });
}

}  // namespace

void weight_norm_forward(Stream stream, const WeightNormArgs& a) { run<false>(stream, a); }
void weight_norm_backward(Stream stream, const WeightNormArgs& a) { run<true>(stream, a); }

}  // namespace foo::kernels::FOO_TARGET
