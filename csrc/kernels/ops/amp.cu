#include "kernels/ops/amp.h"

#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

// v - v is 0 exactly for finite v and nan for inf and nan (no libm call: both targets agree).
template <typename A>
__device__ inline bool finite(A v) {
  return v - v == A(0);
}

template <typename T>
__global__ void unscale_kernel(T* grad, Layout layout, int64_t n, float* found_inf, const float* inv_scale) {
  using acc_t = opmath_t<T>;
  const float inv = *inv_scale;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    T& g = grad[offset_of(layout, i)];
    const acc_t v = static_cast<acc_t>(g);
    if (!finite(v)) *found_inf = 1.0f;  // a benign race: every writer stores 1
    g = static_cast<T>(inv == 1.0f ? v : v * static_cast<acc_t>(inv));
  }
}

__global__ void update_scale_kernel(float* scale, int32_t* growth_tracker, const float* found_inf, double growth,
                                    double backoff, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(static_cast<double>(*scale) * backoff);
    *growth_tracker = 0;
    return;
  }
  const int64_t successful = static_cast<int64_t>(*growth_tracker) + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(static_cast<double>(*scale) * growth);
    if (finite(grown)) *scale = grown;  // never grow past float's range
    *growth_tracker = 0;
  } else {
    *growth_tracker = static_cast<int32_t>(successful);
  }
}

}  // namespace

void amp_unscale(Stream stream, DType dtype, void* grad, const Layout& layout, int64_t n, float* found_inf,
                 const float* inv_scale) {
  dispatch<kFloatingTypes>(dtype, "_amp_foreach_non_finite_check_and_unscale_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    launch_independent("_amp_foreach_non_finite_check_and_unscale_", unscale_kernel<T>,
                       blocks_for(n, kThreads, kMaxBlocks), dim3(kThreads), stream, static_cast<T*>(grad),
                       layout, n, found_inf, inv_scale);
  });
}

void amp_update_scale(Stream stream, float* scale, int32_t* growth_tracker, const float* found_inf, double growth,
                      double backoff, int64_t growth_interval) {
  launch_independent("_amp_update_scale_", update_scale_kernel, dim3(1), dim3(1), stream, scale, growth_tracker,
                     found_inf, growth, backoff, growth_interval);
}

}  // namespace foo::kernels::FOO_TARGET
