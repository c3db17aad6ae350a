// Multi-tensor kernels: torch._foreach_* pointwise ops, _foreach_norm, and the fused Adam/AdamW
// step. A block takes chunks of the flattened list (grid-stride), looks up the tensor a chunk
// belongs to in the device table, and walks the chunk's elements. Pointwise formulas are those of
// the single-tensor kernels (binary.cu, ternary.cu), in opmath_t.
#include <cmath>

#include "kernels/ops/foreach.h"
#include "kernels/core/kernel.h"
#include "kernels/core/softmax_reduce.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

using foo::kernels::FOO_TARGET::block_reduce;

constexpr unsigned kForeachThreads = 256;

#if defined(__CUDACC__)
constexpr int64_t kMaxForeachBlocks = 65535;
#else
constexpr int64_t kMaxForeachBlocks = 256;  // sim: a block per host thread at a time (elementwise.cuh)
#endif

dim3 foreach_grid(int64_t chunks) {
  return dim3(static_cast<unsigned>(chunks < kMaxForeachBlocks ? (chunks < 1 ? 1 : chunks) : kMaxForeachBlocks));
}

// The last row whose first chunk is <= chunk (rows of empty tensors own no chunk and are skipped).
__device__ __forceinline__ int find_tensor(const ForeachTensor* table, int tensors, int64_t chunk) {
  int lo = 0, hi = tensors - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].first_chunk <= chunk) lo = mid; else hi = mid - 1;
  }
  return lo;
}

template <typename T>
__device__ __forceinline__ opmath_t<T> load(const char* base, int64_t i) {
  return static_cast<opmath_t<T>>(reinterpret_cast<const T*>(base)[i]);
}
template <typename T>
__device__ __forceinline__ void store(char* base, int64_t i, opmath_t<T> v) {
  reinterpret_cast<T*>(base)[i] = cast<T>(v);
}

__device__ __forceinline__ float fma_of(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_of(double a, double b, double c) { return fma(a, b, c); }

template <ForeachOp Op, typename M>
__device__ __forceinline__ M foreach_math(M a, M b, M c, M s, M alpha) {
  if constexpr (Op == ForeachOp::AddScalar) return a + s;
  else if constexpr (Op == ForeachOp::MulScalar) return a * s;
  else if constexpr (Op == ForeachOp::DivScalar) return a / s;
  else if constexpr (Op == ForeachOp::AddList) return fma_of(alpha, b, a);  // as the CPU's vectorised add
  else if constexpr (Op == ForeachOp::MulList) return a * b;
  else if constexpr (Op == ForeachOp::DivList) return a / b;
  else if constexpr (Op == ForeachOp::Maximum) return (a != a || b != b) ? a + b : (a < b ? b : a);
  else if constexpr (Op == ForeachOp::Sqrt) return math::sqrt(a);
  else if constexpr (Op == ForeachOp::Neg) return -a;
  else if constexpr (Op == ForeachOp::Zero) return M(0);
  else if constexpr (Op == ForeachOp::Addcmul) return fma_of(s * b, c, a);  // as ternary.cu's addcmul
  else if constexpr (Op == ForeachOp::Addcdiv) return a + s * b / c;
  else {  // Lerp, LerpList: from the nearer end, fused (ternary.cu's lerp)
    const M w = Op == ForeachOp::Lerp ? s : c;
    const M diff = b - a;
    return (w < M(0) ? -w : w) < M(0.5) ? fma_of(w, diff, a) : fma_of(w - M(1), diff, b);
  }
}

template <ForeachOp Op>
FOO_HD constexpr int lists_read() {
  if constexpr (Op == ForeachOp::Zero) return 0;
  else if constexpr (Op == ForeachOp::AddScalar || Op == ForeachOp::MulScalar || Op == ForeachOp::DivScalar ||
                     Op == ForeachOp::Sqrt || Op == ForeachOp::Neg) return 1;
  else if constexpr (Op == ForeachOp::LerpList || Op == ForeachOp::Addcmul || Op == ForeachOp::Addcdiv) return 3;
  else return 2;
}

template <typename T, ForeachOp Op>
__global__ void foreach_pointwise_kernel(ForeachArgs args) {
  using M = opmath_t<T>;
  constexpr int kReads = lists_read<Op>();
  for (int64_t chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    const ForeachTensor& row = args.table[find_tensor(args.table, args.tensors, chunk)];
    const int64_t begin = (chunk - row.first_chunk) * kForeachChunk;
    const int64_t end = begin + kForeachChunk < row.numel ? begin + kForeachChunk : row.numel;
    M s = M(0);
    if (args.scalar_from == ForeachScalar::Value) s = static_cast<M>(args.scalar);
    else if (args.scalar_from == ForeachScalar::PerTensor) s = static_cast<M>(row.scalar);
    else s = *static_cast<const M*>(args.device_scalar);
    const M alpha = static_cast<M>(args.alpha);
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const M a = kReads >= 1 ? load<T>(row.data[1], i) : M(0);
      const M b = kReads >= 2 ? load<T>(row.data[2], i) : M(0);
      const M c = kReads >= 3 ? load<T>(row.data[3], i) : M(0);
      store<T>(row.data[0], i, foreach_math<Op, M>(a, b, c, s, alpha));
    }
  }
}

template <typename T>
void launch_pointwise(Stream stream, const ForeachArgs& args) {
  const dim3 grid = foreach_grid(args.chunks), block(kForeachThreads);
  const auto run = [&](auto kernel) { launch_independent("foreach_pointwise", kernel, grid, block, stream, args); };
  switch (args.op) {
    case ForeachOp::AddScalar: run(foreach_pointwise_kernel<T, ForeachOp::AddScalar>); break;
    case ForeachOp::MulScalar: run(foreach_pointwise_kernel<T, ForeachOp::MulScalar>); break;
    case ForeachOp::DivScalar: run(foreach_pointwise_kernel<T, ForeachOp::DivScalar>); break;
    case ForeachOp::AddList: run(foreach_pointwise_kernel<T, ForeachOp::AddList>); break;
    case ForeachOp::MulList: run(foreach_pointwise_kernel<T, ForeachOp::MulList>); break;
    case ForeachOp::DivList: run(foreach_pointwise_kernel<T, ForeachOp::DivList>); break;
    case ForeachOp::Maximum: run(foreach_pointwise_kernel<T, ForeachOp::Maximum>); break;
    case ForeachOp::Sqrt: run(foreach_pointwise_kernel<T, ForeachOp::Sqrt>); break;
    case ForeachOp::Neg: run(foreach_pointwise_kernel<T, ForeachOp::Neg>); break;
    case ForeachOp::Zero: run(foreach_pointwise_kernel<T, ForeachOp::Zero>); break;
    case ForeachOp::Lerp: run(foreach_pointwise_kernel<T, ForeachOp::Lerp>); break;
    case ForeachOp::LerpList: run(foreach_pointwise_kernel<T, ForeachOp::LerpList>); break;
    case ForeachOp::Addcmul: run(foreach_pointwise_kernel<T, ForeachOp::Addcmul>); break;
    case ForeachOp::Addcdiv: run(foreach_pointwise_kernel<T, ForeachOp::Addcdiv>); break;
  }
}

// Norm, first pass: one partial per chunk (sum of |x| or x^2, or max |x|), in double.
template <typename T, int Ord>  // Ord 0: infinity
__global__ void foreach_norm_partials(ForeachArgs args, double* partials) {
  __shared__ double scratch[kWarp];
  for (int64_t chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    const ForeachTensor& row = args.table[find_tensor(args.table, args.tensors, chunk)];
    const int64_t begin = (chunk - row.first_chunk) * kForeachChunk;
    const int64_t end = begin + kForeachChunk < row.numel ? begin + kForeachChunk : row.numel;
    double acc = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const double v = static_cast<double>(load<T>(row.data[1], i));
      const double mag = v < 0 ? -v : v;
      if constexpr (Ord == 1) acc += mag;
      else if constexpr (Ord == 2) acc += v * v;
      else acc = (mag > acc || mag != mag) ? mag : acc;
    }
    if constexpr (Ord == 0) acc = block_reduce(acc, softmax_detail::MaxOp(), 0.0, scratch);
    else acc = block_reduce(acc, softmax_detail::SumOp(), 0.0, scratch);
    if (threadIdx.x == 0) partials[chunk] = acc;
  }
}

// Norm, second pass: a thread per tensor combines its chunks' partials.
template <typename T, int Ord>
__global__ void foreach_norm_finish(ForeachArgs args, const double* partials) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= args.tensors) return;
  const ForeachTensor& row = args.table[t];
  const int64_t chunks = (row.numel + kForeachChunk - 1) / kForeachChunk;
  double acc = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    const double p = partials[row.first_chunk + k];
    if constexpr (Ord == 0) acc = (p > acc || p != p) ? p : acc;
    else acc += p;
  }
  if constexpr (Ord == 2) acc = sqrt(acc);
  *reinterpret_cast<T*>(row.data[0]) = cast<T>(static_cast<opmath_t<T>>(acc));
}

template <typename T, int Ord>
void launch_norm(Stream stream, const ForeachArgs& args, double* partials) {
  if (args.chunks > 0) {
    launch("foreach_norm_partials", foreach_norm_partials<T, Ord>, foreach_grid(args.chunks), dim3(kForeachThreads), 0,
           stream, args, partials);
  }
  launch_independent("foreach_norm_finish", foreach_norm_finish<T, Ord>, blocks_for(args.tensors, 128), dim3(128),
                     stream, args, static_cast<const double*>(partials));
}

// The gradient a fused optimizer steps with: divided by grad_scale (and stored back unscaled, as
// ATen's fused kernels do), negated for maximize.
template <typename T>
__device__ __forceinline__ opmath_t<T> fused_grad(char* grads, int64_t i, const float* grad_scale, bool maximize) {
  using M = opmath_t<T>;
  M grad = load<T>(grads, i);
  if (grad_scale != nullptr) {
    grad /= static_cast<M>(*grad_scale);
    store<T>(grads, i, grad);
  }
  return maximize ? -grad : grad;
}

// Adam/AdamW as ATen's fused kernels (FusedAdamKernel / fused_adam_utils): bias corrections in
// double from the step count, everything else in opmath_t.
template <typename T>
__global__ void fused_adam_kernel(AdamArgs args) {
  using M = opmath_t<T>;
  if (args.found_inf != nullptr && *args.found_inf == 1.0f) return;
  const double lr = args.lr_tensor != nullptr ? static_cast<double>(*args.lr_tensor) : args.lr;
  const M beta1 = static_cast<M>(args.beta1), beta2 = static_cast<M>(args.beta2);
  const M weight_decay = static_cast<M>(args.weight_decay), eps = static_cast<M>(args.eps);
  for (int64_t chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    const ForeachTensor& row = args.table[find_tensor(args.table, args.tensors, chunk)];
    const int64_t begin = (chunk - row.first_chunk) * kForeachChunk;
    const int64_t end = begin + kForeachChunk < row.numel ? begin + kForeachChunk : row.numel;
    const double step = static_cast<double>(*reinterpret_cast<const float*>(row.data[5]));
    const M bias_correction1 = static_cast<M>(1 - pow(args.beta1, step));
    const M bias_correction2_sqrt = static_cast<M>(sqrt(1 - pow(args.beta2, step)));
    const M step_size = static_cast<M>(lr) / bias_correction1;
    const M lr_m = static_cast<M>(lr);
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      M param = load<T>(row.data[0], i), grad = fused_grad<T>(row.data[1], i, args.grad_scale, args.maximize);
      M exp_avg = load<T>(row.data[2], i), exp_avg_sq = load<T>(row.data[3], i);
      if (weight_decay != M(0)) {
        if (args.decoupled) param -= lr_m * weight_decay * param;
        else grad += param * weight_decay;
      }
      exp_avg = beta1 * exp_avg + (M(1) - beta1) * grad;
      exp_avg_sq = beta2 * exp_avg_sq + (M(1) - beta2) * grad * grad;
      M second = exp_avg_sq;
      if (args.amsgrad) {
        const M previous = load<T>(row.data[4], i);
        second = previous < exp_avg_sq ? exp_avg_sq : previous;
        store<T>(row.data[4], i, second);
      }
      const M denom = math::sqrt(second) / bias_correction2_sqrt + eps;
      param -= step_size * exp_avg / denom;
      store<T>(row.data[0], i, param);
      store<T>(row.data[2], i, exp_avg);
      store<T>(row.data[3], i, exp_avg_sq);
    }
  }
}

// SGD as ATen's fused kernels (FusedSGDKernel.cpp, fused_sgd_kernel.cu), in opmath_t: unscale,
// maximize, weight decay, momentum (the first step copies the gradient), nesterov, then
// param -= lr * update.
template <typename T>
__global__ void fused_sgd_kernel(SgdArgs args) {
  using M = opmath_t<T>;
  if (args.found_inf != nullptr && *args.found_inf == 1.0f) return;
  const M weight_decay = static_cast<M>(args.weight_decay), momentum = static_cast<M>(args.momentum);
  const M lr = static_cast<M>(args.lr), dampening = static_cast<M>(args.dampening);
  for (int64_t chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    const ForeachTensor& row = args.table[find_tensor(args.table, args.tensors, chunk)];
    const int64_t begin = (chunk - row.first_chunk) * kForeachChunk;
    const int64_t end = begin + kForeachChunk < row.numel ? begin + kForeachChunk : row.numel;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const M param = load<T>(row.data[0], i);
      M grad = fused_grad<T>(row.data[1], i, args.grad_scale, args.maximize);
      if (weight_decay != M(0)) grad += param * weight_decay;
      if (momentum != M(0)) {
        const M buf = args.is_first_step ? grad : load<T>(row.data[2], i) * momentum + grad * (M(1) - dampening);
        store<T>(row.data[2], i, buf);
        grad = args.nesterov ? grad + buf * momentum : buf;
      }
      store<T>(row.data[0], i, param - grad * lr);
    }
  }
}

// Adagrad as ATen's fused kernels (FusedAdagradKernel.cpp): clr = lr / (1 + (step - 1) * lr_decay)
// from the (already incremented) step, state_sum += g^2, param -= clr * g / (sqrt(state_sum) + eps).
template <typename T>
__global__ void fused_adagrad_kernel(AdagradArgs args) {
  using M = opmath_t<T>;
  if (args.found_inf != nullptr && *args.found_inf == 1.0f) return;
  const M weight_decay = static_cast<M>(args.weight_decay), eps = static_cast<M>(args.eps);
  for (int64_t chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    const ForeachTensor& row = args.table[find_tensor(args.table, args.tensors, chunk)];
    const int64_t begin = (chunk - row.first_chunk) * kForeachChunk;
    const int64_t end = begin + kForeachChunk < row.numel ? begin + kForeachChunk : row.numel;
    const M step = static_cast<M>(*reinterpret_cast<const float*>(row.data[3]));
    const M clr = static_cast<M>(args.lr) / (M(1) + (step - M(1)) * static_cast<M>(args.lr_decay));
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const M param = load<T>(row.data[0], i);
      M grad = fused_grad<T>(row.data[1], i, args.grad_scale, args.maximize);
      if (weight_decay != M(0)) grad += param * weight_decay;
      const M state_sum = load<T>(row.data[2], i) + grad * grad;
      store<T>(row.data[2], i, state_sum);
      const M std = math::sqrt(state_sum) + eps;
      store<T>(row.data[0], i, param - clr * grad / std);
    }
  }
}

}  // namespace

void foreach_pointwise(Stream stream, DType dtype, const ForeachArgs& args) {
  if (args.chunks == 0) return;
  dispatch<kFloatingTypes>(dtype, "foreach", [&](auto tag) { launch_pointwise<typename decltype(tag)::type>(stream, args); });
}

void foreach_norm(Stream stream, DType dtype, const ForeachArgs& args, double ord, double* partials) {
  dispatch<kFloatingTypes>(dtype, "_foreach_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (ord == 1) launch_norm<T, 1>(stream, args, partials);
    else if (ord == 2) launch_norm<T, 2>(stream, args, partials);
    else launch_norm<T, 0>(stream, args, partials);
  });
}

void fused_adam(Stream stream, DType dtype, const AdamArgs& args) {
  if (args.chunks == 0) return;
  dispatch<kFloatingTypes>(dtype, "_fused_adam", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("fused_adam", fused_adam_kernel<T>, foreach_grid(args.chunks), dim3(kForeachThreads), stream,
                       args);
  });
}

void fused_sgd(Stream stream, DType dtype, const SgdArgs& args) {
  if (args.chunks == 0) return;
  dispatch<kFloatingTypes>(dtype, "_fused_sgd", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("fused_sgd", fused_sgd_kernel<T>, foreach_grid(args.chunks), dim3(kForeachThreads), stream, args);
  });
}

void fused_adagrad(Stream stream, DType dtype, const AdagradArgs& args) {
  if (args.chunks == 0) return;
  dispatch<kFloatingTypes>(dtype, "_fused_adagrad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("fused_adagrad", fused_adagrad_kernel<T>, foreach_grid(args.chunks), dim3(kForeachThreads),
                       stream, args);
  });
}

}  // namespace foo::kernels::FOO_TARGET
