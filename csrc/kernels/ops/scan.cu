// cumsum / cumprod (scan.h). Two kernels:
//   rows     (inner == 1, the scanned dim is innermost): a warp per row walks it in chunks of
//            32 * kPerLane elements; each lane scans its kPerLane consecutive elements, a warp
//            scan (shuffles) adds the lanes before it, and the last lane's total carries on.
//   columns  (inner > 1): a thread per (outer, inner) column walks `size` sequentially;
//            neighbouring threads read neighbouring elements (coalesced). No communication.
#include <type_traits>

#include "kernels/core/block_scan.h"
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/ops/scan.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace scan_detail;

constexpr int kPerLane = 4;
constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

// The CPU's accumulation type (at::acc_type<T, false>): int64 for integers, double for float32,
// float for 16-bit floats; so float32 results match the CPU's closely (CUDA keeps float32).
template <typename T>
using acc_of = std::conditional_t<std::is_integral_v<T>, int64_t,
                                  std::conditional_t<std::is_same_v<T, float>, double, opmath_t<T>>>;

template <ScanOp Op>
struct Combine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>) {  // wraps, as the CPU's results do (no signed overflow)
      const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
      return static_cast<A>(Op == ScanOp::Sum ? x + y : x * y);
    } else {
      return Op == ScanOp::Sum ? a + b : a * b;
    }
  }
};

template <ScanOp Op, typename A>
__device__ __forceinline__ A identity() {
  return Op == ScanOp::Sum ? A(0) : A(1);
}

template <ScanOp Op, typename T>
__global__ void scan_rows(const T* in, T* out, int64_t rows, int64_t size) {
  using A = acc_of<T>;
  const Combine<Op> op;
  const int64_t warps_per_block = blockDim.x / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  for (int64_t row = blockIdx.x * warps_per_block + threadIdx.x / kWarp; row < rows;
       row += static_cast<int64_t>(gridDim.x) * warps_per_block) {  // uniform over the warp
    const T* x = in + row * size;
    T* y = out + row * size;
    A carry = identity<Op, A>();
    for (int64_t start = 0; start < size; start += kWarp * kPerLane) {
      const int64_t first = start + static_cast<int64_t>(lane) * kPerLane;
      A local[kPerLane];
      A running = identity<Op, A>();
      for (int j = 0; j < kPerLane; ++j) {
        if (first + j < size) running = op(running, static_cast<A>(cast<opmath_t<T>>(x[first + j])));
        local[j] = running;
      }
      const A inclusive = warp_inclusive_scan(running, op);
      A before = __shfl_up_sync(kFullMask, inclusive, 1);
      if (lane == 0) before = identity<Op, A>();
      const A base = op(carry, before);
      for (int j = 0; j < kPerLane; ++j) {
        if (first + j < size) y[first + j] = cast<T>(op(base, local[j]));
      }
      carry = op(carry, __shfl_sync(kFullMask, inclusive, kWarp - 1));
    }
  }
}

template <ScanOp Op, typename T>
__global__ void scan_columns(const T* in, T* out, int64_t outer, int64_t size, int64_t inner) {
  using A = acc_of<T>;
  const Combine<Op> op;
  const int64_t columns = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, i = c - o * inner;
    const int64_t base = o * size * inner + i;
    A running = identity<Op, A>();
    for (int64_t k = 0; k < size; ++k) {
      running = op(running, static_cast<A>(cast<opmath_t<T>>(in[base + k * inner])));
      out[base + k * inner] = cast<T>(running);
    }
  }
}

dim3 grid_of(int64_t blocks) {
  return dim3(static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

template <ScanOp Op, typename T>
void run(Stream stream, const T* in, T* out, int64_t outer, int64_t size, int64_t inner) {
  const char* name = Op == ScanOp::Sum ? "cumsum" : "cumprod";
  if (inner == 1) {
    const int64_t warps_per_block = kThreads / kWarp;
    launch(name, scan_rows<Op, T>, grid_of((outer + warps_per_block - 1) / warps_per_block), dim3(kThreads), 0,
           stream, in, out, outer, size);
  } else {
    launch_independent(name, scan_columns<Op, T>, grid_of((outer * inner + kThreads - 1) / kThreads),
                       dim3(kThreads), stream, in, out, outer, size, inner);
  }
}

}  // namespace

void scan(Stream stream, ScanOp op, DType dtype, const void* in, void* out, int64_t outer, int64_t size,
          int64_t inner) {
  if (outer * size * inner == 0) return;
  dispatch<kNumericTypes>(dtype, op == ScanOp::Sum ? "cumsum" : "cumprod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(in);
    auto* y = static_cast<T*>(out);
    if (op == ScanOp::Sum) run<ScanOp::Sum>(stream, x, y, outer, size, inner);
    else run<ScanOp::Prod>(stream, x, y, outer, size, inner);
  });
}

}  // namespace foo::kernels::FOO_TARGET
