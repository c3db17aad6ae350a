#include "kernels/ops/factory.h"

#include "kernels/core/exact_math.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
constexpr bool is_16bit_float = std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>;

template <typename T>
__global__ void arange_int_kernel(T* out, Layout layout, int64_t n, int64_t start, int64_t step) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint64_t v = static_cast<uint64_t>(start) + static_cast<uint64_t>(step) * static_cast<uint64_t>(i);
  out[offset_of(layout, i)] = static_cast<T>(static_cast<int64_t>(v));
}

// The CPU's accumulate type of arange: double for float32 (not opmath's float), float for 16-bit.
template <typename T>
using arange_acc_t = std::conditional_t<is_16bit_float<T>, float, double>;

template <typename A>
__device__ inline A mul_add(A a, A b, A c, bool fused) {
  return fused ? fma_rn(a, b, c) : add_rn(mul_rn(a, b), c);
}

template <typename T>
__global__ void arange_float_kernel(T* out, Layout layout, int64_t n, arange_acc_t<T> start, arange_acc_t<T> step,
                                    int64_t chunk, int64_t lanes, bool fused) {
  using A = arange_acc_t<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  A value;
  const int64_t begin = i / chunk * chunk;
  const int64_t len = n - begin < chunk ? n - begin : chunk;
  const int64_t vector_end = lanes > 0 ? len / (2 * lanes) * (2 * lanes) : 0;
  if (i - begin < vector_end) {
    const int64_t j = begin + (i - begin) / lanes * lanes;
    const T base = static_cast<T>(mul_add(step, static_cast<A>(j), start, fused));
    value = mul_add(static_cast<A>(i - j), step, static_cast<A>(static_cast<opmath_t<T>>(base)), fused);
  } else {
    value = mul_add(step, static_cast<A>(i), start, fused);
  }
  if constexpr (is_16bit_float<T>) out[offset_of(layout, i)] = T(static_cast<float>(value));
  else out[offset_of(layout, i)] = static_cast<T>(value);
}

template <typename T>
__global__ void linspace_kernel(T* out, Layout layout, int64_t steps, int64_t start_int, int64_t end_int,
                                double start, double end, double step) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= steps) return;
  const int64_t halfway = steps / 2;
  const bool low = i < halfway;
  const int64_t k = low ? i : steps - i - 1;
  T v;
  if constexpr (std::is_integral_v<T>) {
    // step is double; the integral ends convert to double (what `start + step * i` does in C++)
    const double r = low ? fma_rn(step, static_cast<double>(k), static_cast<double>(start_int))
                         : fma_rn(-step, static_cast<double>(k), static_cast<double>(end_int));
    v = static_cast<T>(r);
  } else if constexpr (is_16bit_float<T>) {
    // c10's 16-bit arithmetic: k converts to T, every product and sum rounds to T.
    const float kf = static_cast<float>(T(static_cast<float>(k)));
    const float prod = static_cast<float>(T(mul_rn(static_cast<float>(step), kf)));
    v = T(low ? add_rn(static_cast<float>(start), prod) : sub_rn(static_cast<float>(end), prod));
  } else {
    const T s = static_cast<T>(step);
    v = low ? fma_rn(s, static_cast<T>(k), static_cast<T>(start)) : fma_rn(-s, static_cast<T>(k), static_cast<T>(end));
  }
  out[offset_of(layout, i)] = v;
}

}  // namespace

void arange_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, int64_t start_int,
                 int64_t step_int, double start, double step, int64_t chunk, int64_t lanes, bool fused) {
  if (n <= 0) return;
  dispatch<kNumericTypes>(dtype, "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      launch_independent("arange", arange_int_kernel<T>, blocks_for(n, kThreads), dim3(kThreads), stream,
                         static_cast<T*>(out), layout, n, start_int, step_int);
    } else {
      launch_independent("arange", arange_float_kernel<T>, blocks_for(n, kThreads), dim3(kThreads), stream,
                         static_cast<T*>(out), layout, n, static_cast<arange_acc_t<T>>(start),
                         static_cast<arange_acc_t<T>>(step), chunk > 0 ? chunk : n, lanes, fused);
    }
  });
}

void linspace_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t steps, int64_t start_int,
                   int64_t end_int, double start, double end, double step) {
  if (steps <= 0) return;
  dispatch<kNumericTypes>(dtype, "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("linspace", linspace_kernel<T>, blocks_for(steps, kThreads), dim3(kThreads), stream,
                       static_cast<T*>(out), layout, steps, start_int, end_int, start, end, step);
  });
}

}  // namespace foo::kernels::FOO_TARGET
