// The small-problem path of softmax.cu: rows along the last dimension (inner == 1) of at most
// kWarpRowMax elements, which softmax.cu gives a warp each. Here one thread computes what that
// warp computes, lane by lane, in the same order with the same combines (the reductions'
// reduce_serial_warp_kernel does the same), so the results are bit-identical. On sim a warp per
// row is 32 fibers meeting at ten shuffles, which cost far more than the arithmetic of a tiny
// row; this path runs each row straight through on one host thread (an independent launch).
// Kept apart from softmax.cu, whose kernels serve the large problems.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/kernel.h"
#include "kernels/math.cuh"
#include "kernels/softmax_reduce.h"
#include "kernels/softmax_small.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace softmax_detail;

constexpr int64_t kWarpRowMax = 1024;       // softmax.cu's longest warp row
constexpr int64_t kSmallElements = 4096;    // the most elements this path takes
constexpr unsigned kRowsThreads = 128;

template <typename T>
__device__ __forceinline__ opmath_t<T> load(const T* p) {
  return static_cast<opmath_t<T>>(*p);
}

// warp_reduce's shfl_xor butterfly over the 32 lanes' values, in place: lane l combines its
// value with lane l ^ offset's, its own first, as the shuffle does.
template <typename Acc, typename Op>
__device__ __forceinline__ void butterfly(Acc (&lanes)[kWarp], Op op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    Acc next[kWarp];
    for (int lane = 0; lane < kWarp; ++lane) next[lane] = op(lanes[lane], lanes[lane ^ offset]);
    for (int lane = 0; lane < kWarp; ++lane) lanes[lane] = next[lane];
  }
}

// softmax_row with a WarpGroup: lane l owns elements l, l + 32, ...
template <typename In, typename Out, bool kLog>
__global__ void softmax_small_rows(const In* in, Out* out, int64_t rows, int64_t dim) {
  using Acc = opmath_t<In>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const In* x = in + row * dim;
  Out* y = out + row * dim;
  Acc m[kWarp], s[kWarp];
  for (int lane = 0; lane < kWarp; ++lane) {
    Acc v = -INFINITY;
    for (int64_t j = lane; j < dim; j += kWarp) v = MaxOp()(v, load(x + j));
    m[lane] = v;
  }
  butterfly(m, MaxOp());
  for (int lane = 0; lane < kWarp; ++lane) {
    CompensatedSum<Acc> partial;
    for (int64_t j = lane; j < dim; j += kWarp) partial.add(math::exp(load(x + j) - m[lane]));
    s[lane] = partial.sum;
  }
  butterfly(s, SumOp());
  for (int lane = 0; lane < kWarp; ++lane) {
    if (kLog) {
      const Acc log_s = math::log(s[lane]);
      for (int64_t j = lane; j < dim; j += kWarp) y[j] = cast<Out>(load(x + j) - m[lane] - log_s);
    } else {
      for (int64_t j = lane; j < dim; j += kWarp) y[j] = cast<Out>(math::exp(load(x + j) - m[lane]) / s[lane]);
    }
  }
}

// softmax_backward_row with a WarpGroup.
template <typename G, typename GI, bool kLog>
__global__ void softmax_backward_small_rows(const G* go, const G* y, GI* gi, int64_t rows, int64_t dim) {
  using Acc = opmath_t<G>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int64_t base = row * dim;
  Acc s[kWarp];
  for (int lane = 0; lane < kWarp; ++lane) {
    CompensatedSum<Acc> partial;
    for (int64_t j = base + lane; j < base + dim; j += kWarp) {
      partial.add(kLog ? load(go + j) : load(go + j) * load(y + j));
    }
    s[lane] = partial.sum;
  }
  butterfly(s, SumOp());
  for (int lane = 0; lane < kWarp; ++lane) {
    for (int64_t j = base + lane; j < base + dim; j += kWarp) {
      const Acc gj = load(go + j), yj = load(y + j);
      gi[j] = cast<GI>(kLog ? gj - math::exp(yj) * s[lane] : yj * (gj - s[lane]));
    }
  }
}

bool small(int64_t outer, int64_t dim, int64_t inner) {
  return inner == 1 && dim <= kWarpRowMax && outer <= kSmallElements / dim;
}

dim3 rows_grid(int64_t rows) { return blocks_for(rows, threads_for(rows, kRowsThreads)); }

}  // namespace

bool softmax_forward_small(Stream stream, const void* in, void* out, DType in_dtype, DType out_dtype, int64_t outer,
                           int64_t dim, int64_t inner, bool log) {
  if (outer <= 0 || dim <= 0 || !small(outer, dim, inner)) return false;
  const char* name = log ? "_log_softmax" : "_softmax";
  bool launched = false;
  dispatch<kFloatingTypes>(in_dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto run = [&](auto* y) {
      using Out = std::remove_pointer_t<decltype(y)>;
      const T* x = static_cast<const T*>(in);
      if (log) launch_independent(name, softmax_small_rows<T, Out, true>, rows_grid(outer), dim3(threads_for(outer, kRowsThreads)), stream, x, y, outer, dim);
      else launch_independent(name, softmax_small_rows<T, Out, false>, rows_grid(outer), dim3(threads_for(outer, kRowsThreads)), stream, x, y, outer, dim);
      launched = true;
    };
    if (out_dtype == in_dtype) return run(static_cast<T*>(out));
    if constexpr (std::is_same_v<T, half_t>) {  // half_to_float
      if (out_dtype == DType::Float32) return run(static_cast<float*>(out));
    }
  });
  return launched;  // another dtype pair: softmax_forward names the error
}

bool softmax_backward_small(Stream stream, const void* grad_out, const void* y, void* grad_in, DType grad_dtype,
                            DType grad_in_dtype, int64_t outer, int64_t dim, int64_t inner, bool log) {
  if (outer <= 0 || dim <= 0 || !small(outer, dim, inner)) return false;
  const char* name = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  bool launched = false;
  dispatch<kFloatingTypes>(grad_dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto run = [&](auto* gi) {
      using GI = std::remove_pointer_t<decltype(gi)>;
      const T* go = static_cast<const T*>(grad_out);
      const T* yy = static_cast<const T*>(y);
      if (log) launch_independent(name, softmax_backward_small_rows<T, GI, true>, rows_grid(outer), dim3(threads_for(outer, kRowsThreads)), stream, go, yy, gi, outer, dim);
      else launch_independent(name, softmax_backward_small_rows<T, GI, false>, rows_grid(outer), dim3(threads_for(outer, kRowsThreads)), stream, go, yy, gi, outer, dim);
      launched = true;
    };
    if (grad_in_dtype == grad_dtype) return run(static_cast<T*>(grad_in));
    if constexpr (std::is_same_v<T, float>) {  // the gradient of a half_to_float softmax
      if (grad_in_dtype == DType::Float16) return run(static_cast<half_t*>(grad_in));
    }
  });
  return launched;
}

}  // namespace foo::kernels::FOO_TARGET
