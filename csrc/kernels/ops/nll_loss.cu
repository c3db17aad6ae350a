// nll_loss / nll_loss2d forward and backward over a contiguous [n, classes, spatial] input.
// Forward with reduction: one block sums losses, weights and counts (opmath accumulation, block
// reduction by warp shuffles and shared memory). Forward without reduction and backward: a thread
// per sample. Bad targets are reported in the device's error word (device_error.h).
#include <string>
#include <type_traits>

#include "kernels/core/device_error.cuh"
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/ops/nll_loss.h"
#include "kernels/core/softmax_reduce.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace softmax_detail;

constexpr int64_t kNone = 0, kMean = 1;
constexpr unsigned kThreads = 256;

__device__ __forceinline__ void report_bad_target(const DeviceErrorSite& error, int64_t t, int64_t classes) {
  report_device_error(error, DeviceErrorKind::TargetOutOfBounds, t, 0, classes);
}

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, T value) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = value;
  }
}

template <typename T>
void fill(Stream stream, const char* name, T* p, int64_t n, T value) {
  if (n > 0) launch_independent(name, fill_kernel<T>, capped_grid((n + kThreads - 1) / kThreads), dim3(kThreads), stream, p, n, value);
}

template <typename T, typename Tgt>
__global__ void nll_forward_none(const T* input, const Tgt* target, const T* weight, T* output, T* total_weight,
                                 DeviceErrorSite error, int64_t n, int64_t classes, int64_t spatial, int64_t ignore_index) {
  using Acc = opmath_t<T>;
  if (blockIdx.x == 0 && threadIdx.x == 0) *total_weight = cast<T>(0);
  const int64_t samples = n * spatial;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < samples;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = static_cast<int64_t>(target[k]);
    Acc loss = 0;
    if (t != ignore_index) {
      if (t < 0 || t >= classes) {
        report_bad_target(error, t, classes);
      } else {
        const Acc w = weight ? static_cast<Acc>(weight[t]) : Acc(1);
        loss = -static_cast<Acc>(input[((k / spatial) * classes + t) * spatial + k % spatial]) * w;
      }
    }
    output[k] = cast<T>(loss);
  }
}

// One block. The total weight is rounded to T before the mean divides by it, as the CPU does
// (and as the backward, which reads it back from the T tensor, does).
template <typename T, typename Tgt>
__global__ void nll_forward_reduce(const T* input, const Tgt* target, const T* weight, T* output, T* total_weight,
                                   DeviceErrorSite error, int64_t n, int64_t classes, int64_t spatial, bool mean,
                                   int64_t ignore_index) {
  using Acc = opmath_t<T>;
  __shared__ Acc scratch[kWarp];
  __shared__ int64_t count_scratch[kWarp];
  CompensatedSum<Acc> loss_part, weight_part;
  int64_t count = 0;
  const int64_t samples = n * spatial;
  for (int64_t k = threadIdx.x; k < samples; k += blockDim.x) {
    const int64_t t = static_cast<int64_t>(target[k]);
    if (t == ignore_index) continue;
    if (t < 0 || t >= classes) {
      report_bad_target(error, t, classes);
      continue;
    }
    const Acc w = weight ? static_cast<Acc>(weight[t]) : Acc(1);
    loss_part.add(-static_cast<Acc>(input[((k / spatial) * classes + t) * spatial + k % spatial]) * w);
    weight_part.add(w);
    ++count;
  }
  const Acc loss = block_reduce(loss_part.sum, SumOp(), Acc(0), scratch);
  const Acc weight_sum = block_reduce(weight_part.sum, SumOp(), Acc(0), scratch);
  count = block_reduce(count, SumOp(), int64_t(0), count_scratch);
  if (threadIdx.x == 0) {
    const T total = weight ? cast<T>(weight_sum) : cast<T>(count);
    *total_weight = total;
    *output = cast<T>(mean ? loss / static_cast<Acc>(total) : loss);
  }
}

template <typename T, typename Tgt>
__global__ void nll_backward_scatter(const T* grad_output, const Tgt* target, const T* weight, const T* total_weight,
                                     T* grad_input, DeviceErrorSite error, int64_t n, int64_t classes, int64_t spatial,
                                     int64_t reduction, int64_t ignore_index) {
  using Acc = opmath_t<T>;
  const int64_t samples = n * spatial;
  Acc g = 0;  // the gradient of every sample's loss when reduced
  if (reduction != kNone) {
    g = static_cast<Acc>(grad_output[0]);
    if (reduction == kMean) g /= static_cast<Acc>(total_weight[0]);
  }
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < samples;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = static_cast<int64_t>(target[k]);
    if (t == ignore_index) continue;
    if (t < 0 || t >= classes) {
      report_bad_target(error, t, classes);
      continue;
    }
    const Acc w = weight ? static_cast<Acc>(weight[t]) : Acc(1);
    const Acc gk = reduction == kNone ? static_cast<Acc>(grad_output[k]) : g;
    grad_input[((k / spatial) * classes + t) * spatial + k % spatial] = cast<T>(-w * gk);
  }
}

// Calls f(TypeTag<Tgt>{}) for the target's element type.
template <typename F>
void dispatch_target(DType target_dtype, const char* op, F&& f) {
  if (target_dtype == DType::Int64) return f(TypeTag<int64_t>{});
  if (target_dtype == DType::UInt8) return f(TypeTag<uint8_t>{});
  throw std::invalid_argument(std::string(op) + ": foo has no kernel for target dtype " + dtype_name(target_dtype));
}

}  // namespace

void nll_loss_forward(Stream stream, const void* input, const void* target, const void* weight, void* output,
                      void* total_weight, const DeviceErrorSite& err, DType dtype, DType target_dtype, int64_t n, int64_t classes,
                      int64_t spatial, int64_t reduction, int64_t ignore_index) {
  const char* name = "nll_loss_forward";
  dispatch<kFloatingTypes>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_target(target_dtype, name, [&](auto target_tag) {
      using Tgt = typename decltype(target_tag)::type;
      const auto* x = static_cast<const T*>(input);
      const auto* t = static_cast<const Tgt*>(target);
      const auto* w = static_cast<const T*>(weight);
      auto* out = static_cast<T*>(output);
      auto* tw = static_cast<T*>(total_weight);
      const int64_t samples = n * spatial;
      if (reduction == kNone) {
        launch_independent(name, nll_forward_none<T, Tgt>, capped_grid((samples + kThreads - 1) / kThreads),
                           dim3(kThreads), stream, x, t, w, out, tw, err, n, classes, spatial, ignore_index);
      } else {
        // Whole warps, at most 1024 threads, about one thread per sample.
        int64_t threads = (samples + kWarp - 1) / kWarp * kWarp;
        threads = threads < kWarp ? kWarp : threads > 1024 ? 1024 : threads;
        launch(name, nll_forward_reduce<T, Tgt>, dim3(1), dim3(static_cast<unsigned>(threads)), 0, stream, x, t, w,
               out, tw, err, n, classes, spatial, reduction == kMean, ignore_index);
      }
    });
  });
}

void nll_loss_backward(Stream stream, const void* grad_output, const void* target, const void* weight,
                       const void* total_weight, void* grad_input, const DeviceErrorSite& err, DType dtype, DType target_dtype,
                       int64_t n, int64_t classes, int64_t spatial, int64_t reduction, int64_t ignore_index) {
  const char* name = "nll_loss_backward";
  dispatch<kFloatingTypes>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_target(target_dtype, name, [&](auto target_tag) {
      using Tgt = typename decltype(target_tag)::type;
      auto* gi = static_cast<T*>(grad_input);
      fill<T>(stream, name, gi, n * classes * spatial, cast<T>(0));
      const int64_t samples = n * spatial;
      if (samples == 0) return;
      launch_independent(name, nll_backward_scatter<T, Tgt>, capped_grid((samples + kThreads - 1) / kThreads),
                         dim3(kThreads), stream, static_cast<const T*>(grad_output), static_cast<const Tgt*>(target),
             static_cast<const T*>(weight), static_cast<const T*>(total_weight), gi, err, n, classes, spatial,
             reduction, ignore_index);
    });
  });
}

}  // namespace foo::kernels::FOO_TARGET
