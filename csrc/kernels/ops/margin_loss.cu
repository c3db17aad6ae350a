// multi_margin_loss and multilabel_margin_loss, forward and backward: a thread per sample walks
// its row of classes, in opmath_t, with the operation order of ATen's CPU kernels
// (LossMultiMargin.cpp, LossMultiLabelMargin.cpp).
#include "kernels/ops/margin_loss.h"

#include "kernels/core/device_error.cuh"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 128;

dim3 sample_grid(int64_t nframe) { return capped_grid((nframe + kThreads - 1) / kThreads); }

// multi: is the target of a sample in [0, dim)? Reported when not.
__device__ __forceinline__ bool target_in_range(const MultiMarginArgs& a, int64_t t) {
  if (t >= 0 && t < a.dim) return true;
  report_device_error(a.error, DeviceErrorKind::MultiMarginTarget, t, 0, a.dim);
  return false;
}

// multilabel: is every class of a row in [-1, dim) (the CPU checks them all)? Reported when not.
__device__ __forceinline__ bool targets_in_range(const MultiMarginArgs& a, const int64_t* targets) {
  for (int64_t k = 0; k < a.dim; ++k) {
    if (targets[k] < -1 || targets[k] >= a.dim) {
      report_device_error(a.error, DeviceErrorKind::MultilabelMarginTarget, targets[k], 0, a.dim);
      return false;
    }
  }
  return true;
}

template <typename T>
__global__ void multi_margin_forward_kernel(MultiMarginArgs a, T* losses) {
  using M = opmath_t<T>;
  const T* input = static_cast<const T*>(a.input);
  const T* weight = static_cast<const T*>(a.weight);
  const M margin = static_cast<M>(a.margin);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.nframe;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* row = input + i * a.dim;
    const int64_t t = a.target[i];
    if (!target_in_range(a, t)) {
      losses[i] = cast<T>(0);
      continue;
    }
    const M x_target = static_cast<M>(row[t]);
    M sum = M(0);
    for (int64_t d = 0; d < a.dim; ++d) {
      if (d == t) continue;
      const M z = margin - x_target + static_cast<M>(row[d]);
      if (z > M(0)) {
        M h = a.p == 1 ? z : z * z;
        if (weight != nullptr) h *= static_cast<M>(weight[t]);
        sum += h;
      }
    }
    losses[i] = cast<T>(sum / static_cast<M>(a.dim));
  }
}

// The CPU's two passes in one: the row's gradient g * (1 or 2z) * w[t] at each violating class,
// minus their sum at the target, then times grad_output (one value, or the sample's).
template <typename T>
__global__ void multi_margin_backward_kernel(MultiMarginArgs a, const T* grad_output, bool per_sample, double scale,
                                             T* grad_input) {
  using M = opmath_t<T>;
  const T* input = static_cast<const T*>(a.input);
  const T* weight = static_cast<const T*>(a.weight);
  const M margin = static_cast<M>(a.margin), g = static_cast<M>(scale);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.nframe;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* row = input + i * a.dim;
    T* grad_row = grad_input + i * a.dim;
    const int64_t t = a.target[i];
    if (!target_in_range(a, t)) {
      for (int64_t d = 0; d < a.dim; ++d) grad_row[d] = cast<T>(0);
      continue;
    }
    const M x_target = static_cast<M>(row[t]);
    const M go = static_cast<M>(grad_output[per_sample ? i : 0]);
    M grad_target = M(0);
    for (int64_t d = 0; d < a.dim; ++d) {
      if (d == t) continue;
      const M z = margin - x_target + static_cast<M>(row[d]);
      M h = M(0);
      if (z > M(0)) {
        h = a.p == 1 ? g : M(2) * g * z;
        if (weight != nullptr) h *= static_cast<M>(weight[t]);
        grad_target -= h;
      }
      grad_row[d] = cast<T>(h * go);
    }
    grad_row[t] = cast<T>(grad_target * go);
  }
}

template <typename T>
__global__ void multilabel_margin_forward_kernel(MultiMarginArgs a, T* losses, T* is_target) {
  using M = opmath_t<T>;
  const T* input = static_cast<const T*>(a.input);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.nframe;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* row = input + i * a.dim;
    const int64_t* targets = a.target + i * a.dim;
    T* marks = is_target + i * a.dim;
    for (int64_t d = 0; d < a.dim; ++d) marks[d] = cast<T>(0);
    if (!targets_in_range(a, targets)) {
      losses[i] = cast<T>(0);
      continue;
    }
    for (int64_t k = 0; k < a.dim && targets[k] >= 0; ++k) marks[targets[k]] = cast<T>(1);
    M sum = M(0);
    for (int64_t k = 0; k < a.dim && targets[k] >= 0; ++k) {
      const M x_target = static_cast<M>(row[targets[k]]);
      for (int64_t d = 0; d < a.dim; ++d) {
        if (static_cast<M>(marks[d]) != M(0)) continue;
        const M z = M(1) - x_target + static_cast<M>(row[d]);
        if (z > M(0)) sum += z;
      }
    }
    losses[i] = cast<T>(sum / static_cast<M>(a.dim));
  }
}

template <typename T>
__global__ void multilabel_margin_backward_kernel(MultiMarginArgs a, const T* is_target, const T* grad_output,
                                                  bool per_sample, double scale, T* grad_input) {
  using M = opmath_t<T>;
  const T* input = static_cast<const T*>(a.input);
  const M g = static_cast<M>(scale);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.nframe;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* row = input + i * a.dim;
    const int64_t* targets = a.target + i * a.dim;
    const T* marks = is_target + i * a.dim;
    T* grad_row = grad_input + i * a.dim;
    for (int64_t d = 0; d < a.dim; ++d) grad_row[d] = cast<T>(0);
    if (!targets_in_range(a, targets)) continue;
    for (int64_t k = 0; k < a.dim && targets[k] >= 0; ++k) {
      const int64_t j = targets[k];
      const M x_target = static_cast<M>(row[j]);
      for (int64_t d = 0; d < a.dim; ++d) {
        if (static_cast<M>(marks[d]) != M(0)) continue;
        const M z = M(1) - x_target + static_cast<M>(row[d]);
        if (z > M(0)) {
          grad_row[j] = cast<T>(static_cast<M>(grad_row[j]) - g);
          grad_row[d] = cast<T>(static_cast<M>(grad_row[d]) + g);
        }
      }
    }
    const M go = static_cast<M>(grad_output[per_sample ? i : 0]);
    for (int64_t d = 0; d < a.dim; ++d) grad_row[d] = cast<T>(static_cast<M>(grad_row[d]) * go);
  }
}

// multi_margin_loss and multilabel_margin_loss on the CPU: float32 and float64.
constexpr uint32_t kMarginTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

}  // namespace

void multi_margin_loss_forward(Stream stream, DType dtype, const MultiMarginArgs& args, void* losses) {
  if (args.nframe == 0) return;
  dispatch<kMarginTypes>(dtype, "multi_margin_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("multi_margin_loss", multi_margin_forward_kernel<T>, sample_grid(args.nframe), dim3(kThreads),
                       stream, args, static_cast<T*>(losses));
  });
}

void multi_margin_loss_backward(Stream stream, DType dtype, const MultiMarginArgs& args, const void* grad_output,
                                bool per_sample, double scale, void* grad_input) {
  if (args.nframe == 0) return;
  dispatch<kMarginTypes>(dtype, "multi_margin_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("multi_margin_loss_backward", multi_margin_backward_kernel<T>, sample_grid(args.nframe),
                       dim3(kThreads), stream, args, static_cast<const T*>(grad_output), per_sample, scale,
                       static_cast<T*>(grad_input));
  });
}

void multilabel_margin_loss_forward(Stream stream, DType dtype, const MultiMarginArgs& args, void* losses,
                                    void* is_target) {
  if (args.nframe == 0) return;
  dispatch<kMarginTypes>(dtype, "multilabel_margin_loss_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("multilabel_margin_loss", multilabel_margin_forward_kernel<T>, sample_grid(args.nframe),
                       dim3(kThreads), stream, args, static_cast<T*>(losses), static_cast<T*>(is_target));
  });
}

void multilabel_margin_loss_backward(Stream stream, DType dtype, const MultiMarginArgs& args, const void* is_target,
                                     const void* grad_output, bool per_sample, double scale, void* grad_input) {
  if (args.nframe == 0) return;
  dispatch<kMarginTypes>(dtype, "multilabel_margin_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("multilabel_margin_loss_backward", multilabel_margin_backward_kernel<T>,
                       sample_grid(args.nframe), dim3(kThreads), stream, args, static_cast<const T*>(is_target),
                       static_cast<const T*>(grad_output), per_sample, scale, static_cast<T*>(grad_input));
  });
}

}  // namespace foo::kernels::FOO_TARGET
