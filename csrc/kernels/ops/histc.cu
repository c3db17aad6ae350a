// torch.histc: one thread per element (grid-stride), an atomic add per counted element.
// An element v counts when lo <= v <= hi, in bin (int)((v - lo) * bins / (hi - lo)), the last
// bin closed on both sides, computed in the element's compute type: float for float32, the
// 16-bit floats and the integer dtypes (CUDA computes integers in integers; the CPU has no integer
// histc, and foo's integer results equal the CPU's on the input cast to float32), double for
// float64.
#include <cmath>

#include "kernels/core/atomic_ops.h"
#include "kernels/core/elementwise.cuh"
#include "kernels/ops/histc.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
using histc_math_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// A 16-bit float's histc computes in its own type on the CPU (c10::Half arithmetic rounds every
// step to half); the edges are the dtype's too. Identity for the other dtypes.
template <typename T, typename M>
__device__ __forceinline__ M round_as(M x) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) return static_cast<M>(static_cast<float>(T(x)));
  else return x;
}

template <typename T>
__global__ void histc_kernel(const T* x, int64_t n, int64_t bins, histc_math_t<T> lo, histc_math_t<T> hi,
                             const T* range, int64_t* counts, int64_t* nonfinite) {
  using M = histc_math_t<T>;
  if (range != nullptr) {  // the data's own range, read on the device
    lo = static_cast<M>(static_cast<opmath_t<T>>(range[0]));
    hi = static_cast<M>(static_cast<opmath_t<T>>(range[1]));
    if (lo == hi) {
      lo = lo - M(1);
      hi = hi + M(1);
    }
  }
  lo = round_as<T>(lo);
  hi = round_as<T>(hi);
  if (range != nullptr && !(hi - lo < M(INFINITY))) {  // inf or NaN in the data: flag it, count nothing
    if (blockIdx.x == 0 && threadIdx.x == 0) *nonfinite = 1;
    return;
  }
  const M width = round_as<T>(hi - lo), scale = round_as<T>(static_cast<M>(bins));
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const M v = static_cast<M>(static_cast<opmath_t<T>>(x[i]));
    if (!(v >= lo && v <= hi)) continue;  // NaN never counts
    int64_t bin = static_cast<int64_t>(round_as<T>(round_as<T>(round_as<T>(v - lo) * scale) / width));
    if (bin == bins) bin -= 1;
    atomic_combine<Combine::Add>(counts + bin, int64_t{1});
  }
}

}  // namespace

void histc(Stream stream, DType dtype, const void* x, int64_t n, int64_t bins, double lo, double hi, const void* range,
           int64_t* counts, int64_t* nonfinite) {
  dispatch<kNumericTypes>(dtype, "histc", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = histc_math_t<T>;
    const int64_t work = n > 0 ? n : 1;  // one thread still reads a data range (and flags it)
    const unsigned threads = threads_for(work);
    launch_independent("histc", histc_kernel<T>, blocks_for(work, threads, kMaxElementwiseBlocks), dim3(threads), stream,
                       static_cast<const T*>(x), n, bins, static_cast<M>(lo), static_cast<M>(hi),
                       static_cast<const T*>(range), counts, nonfinite);
  });
}

}  // namespace foo::kernels::FOO_TARGET
