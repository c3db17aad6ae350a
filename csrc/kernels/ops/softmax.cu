// Softmax, log-softmax and their gradients over the middle axis of a contiguous
// [outer, dim, inner] array. Three layouts of threads over rows (a row: the `dim` elements of one
// (outer, inner) pair, `inner` apart):
//   inner == 1, dim <= kWarpRowMax: a warp per row, reductions by warp shuffles only;
//   inner == 1, longer rows:        a block per row, shuffles + shared memory + __syncthreads;
//   inner > 1:                      a thread per row (neighbouring threads read neighbouring
//                                   elements), no communication.
// On sim, large problems with rows of <= kWarpRowMax run softmax_rows_as_warps instead of the
// warp kernel: one thread computes what a warp computes, bit for bit, without fibers.
// Each row is read twice to reduce (max, then the sum of exp(x - max)) and once more to write.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"
#include "kernels/ops/softmax.h"
#include "kernels/core/softmax_reduce.h"
#if !defined(__CUDACC__)
#include "sim/fast_paths.h"
#endif

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace softmax_detail;

constexpr int64_t kWarpRowMax = 1024;  // longest row a single warp handles
constexpr unsigned kWarpRowsThreads = 128;  // 4 rows per block
constexpr unsigned kColumnThreads = 256;

template <typename T>
__device__ __forceinline__ opmath_t<T> load(const T* p) {
  return static_cast<opmath_t<T>>(*p);
}

// Who works on one row, and how they combine partial results.
struct WarpGroup {  // the 32 lanes of a warp
  __device__ __forceinline__ int64_t rank() const { return threadIdx.x % kWarp; }
  __device__ __forceinline__ int64_t size() const { return kWarp; }
  template <typename T, typename Op>
  __device__ __forceinline__ T reduce(T v, Op op, T) const { return warp_reduce(v, op); }
};

template <typename Acc>
struct BlockGroup {  // all threads of the block
  Acc* scratch;
  __device__ __forceinline__ int64_t rank() const { return threadIdx.x; }
  __device__ __forceinline__ int64_t size() const { return blockDim.x; }
  template <typename Op>
  __device__ __forceinline__ Acc reduce(Acc v, Op op, Acc identity) const { return block_reduce(v, op, identity, scratch); }
};

struct ThreadGroup {  // one thread alone
  __device__ __forceinline__ int64_t rank() const { return 0; }
  __device__ __forceinline__ int64_t size() const { return 1; }
  template <typename T, typename Op>
  __device__ __forceinline__ T reduce(T v, Op, T) const { return v; }
};

// ---- forward ------------------------------------------------------------------------------

template <typename In, typename Out, bool kLog, typename Group>
__device__ __forceinline__ void softmax_row(const In* x, Out* y, int64_t dim, int64_t stride, const Group& g) {
  using Acc = opmath_t<In>;
  const int64_t first = g.rank(), step = g.size();
  Acc m = -INFINITY;
  for (int64_t j = first; j < dim; j += step) m = MaxOp()(m, load(x + j * stride));
  m = g.reduce(m, MaxOp(), Acc(-INFINITY));
  CompensatedSum<Acc> partial;
  for (int64_t j = first; j < dim; j += step) partial.add(math::exp(load(x + j * stride) - m));
  const Acc s = g.reduce(partial.sum, SumOp(), Acc(0));
  if (kLog) {
    const Acc log_s = math::log(s);
    for (int64_t j = first; j < dim; j += step) y[j * stride] = cast<Out>(load(x + j * stride) - m - log_s);
  } else {
    for (int64_t j = first; j < dim; j += step) y[j * stride] = cast<Out>(math::exp(load(x + j * stride) - m) / s);
  }
}

template <typename In, typename Out, bool kLog>
__global__ void softmax_warp_rows(const In* in, Out* out, int64_t rows, int64_t dim) {
  const int64_t warps = blockDim.x / kWarp;
  // The loop bounds depend on the warp only, so all 32 lanes run each shuffle together.
  for (int64_t row = blockIdx.x * warps + threadIdx.x / kWarp; row < rows; row += static_cast<int64_t>(gridDim.x) * warps) {
    softmax_row<In, Out, kLog>(in + row * dim, out + row * dim, dim, 1, WarpGroup{});
  }
}

// ---- a warp's rows in one thread (sim, large problems) ----------------------------------------
//
// What softmax_warp_rows computes for one row, in one thread: the 32 lanes' partial max and
// compensated sums live in arrays indexed by lane, and warp_reduce's shfl_xor butterfly runs over
// them, so every lane's result (and hence every output) is bit-identical to the warp kernel's. On
// sim the warp kernel pays a fiber switch per lane and shuffle (10 per row) and runs each lane's
// serial chain (NaN-propagating max, compensated sum) one lane after another; here the loops over
// 32 lanes of consecutive elements are plain arrays the host compiler vectorises. The cuda target
// keeps the warp kernel (a thread per row would not coalesce).

template <typename T, typename Op>
__device__ __forceinline__ void lanes_butterfly(T (&v)[kWarp], Op op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {  // warp_reduce's shfl_xor steps
    T next[kWarp];
    for (int l = 0; l < kWarp; ++l) next[l] = op(v[l], v[l ^ offset]);
    for (int l = 0; l < kWarp; ++l) v[l] = next[l];
  }
}

// Calls f(j0, lanes) for each warp-wide step over a row of `dim`: elements j0 .. j0 + lanes - 1,
// lane l taking j0 + l (lane l visits l, l + 32, ...: the warp kernel's order). lanes is 32 except
// in a short last step.
template <typename F>
__device__ __forceinline__ void for_warp_steps(int64_t dim, F f) {
  int64_t j0 = 0;
  for (; j0 + kWarp <= dim; j0 += kWarp) f(j0, kWarp);
  if (j0 < dim) f(j0, static_cast<int>(dim - j0));
}

template <typename In, typename Out, bool kLog>
__global__ void softmax_rows_as_warps(const In* in, Out* out, int64_t rows, int64_t dim) {
  using Acc = opmath_t<In>;
  // exp(x - max) is kept in the output between the sum and the last pass when that is exact,
  // which saves one exp per element (the values written are the same).
  constexpr bool kKeepExp = !kLog && std::is_same_v<Out, Acc>;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const In* x = in + row * dim;
    Out* y = out + row * dim;
    Acc m[kWarp], sum[kWarp], carry[kWarp];
    for (int l = 0; l < kWarp; ++l) m[l] = -INFINITY, sum[l] = carry[l] = Acc(0);
    for_warp_steps(dim, [&](int64_t j0, int lanes) {
      for (int l = 0; l < lanes; ++l) m[l] = MaxOp()(m[l], load(x + j0 + l));
    });
    lanes_butterfly(m, MaxOp());
    for_warp_steps(dim, [&](int64_t j0, int lanes) {
      Acc e[kWarp];
      for (int l = 0; l < lanes; ++l) e[l] = math::exp(load(x + j0 + l) - m[l]);
      for (int l = 0; l < lanes; ++l) CompensatedSum<Acc>::step(sum[l], carry[l], e[l]);
      if constexpr (kKeepExp) {
        for (int l = 0; l < lanes; ++l) y[j0 + l] = e[l];
      }
    });
    lanes_butterfly(sum, SumOp());
    const Acc* s = sum;
    Acc log_s[kWarp];
    if constexpr (kLog) {
      for (int l = 0; l < kWarp; ++l) log_s[l] = math::log(s[l]);
    }
    for_warp_steps(dim, [&](int64_t j0, int lanes) {
      Acc e[kWarp];
      if constexpr (kLog) {
        for (int l = 0; l < lanes; ++l) e[l] = load(x + j0 + l) - m[l] - log_s[l];
      } else if constexpr (kKeepExp) {
        for (int l = 0; l < lanes; ++l) e[l] = y[j0 + l] / s[l];
      } else {
        for (int l = 0; l < lanes; ++l) e[l] = math::exp(load(x + j0 + l) - m[l]);
        for (int l = 0; l < lanes; ++l) e[l] = e[l] / s[l];
      }
      for (int l = 0; l < lanes; ++l) y[j0 + l] = cast<Out>(e[l]);
    });
  }
}

template <typename In, typename Out, bool kLog>
__global__ void softmax_block_rows(const In* in, Out* out, int64_t rows, int64_t dim) {
  using Acc = opmath_t<In>;
  __shared__ Acc scratch[kWarp];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    softmax_row<In, Out, kLog>(in + row * dim, out + row * dim, dim, 1, BlockGroup<Acc>{scratch});
  }
}

template <typename In, typename Out, bool kLog>
__global__ void softmax_columns(const In* in, Out* out, int64_t outer, int64_t dim, int64_t inner) {
  const int64_t rows = outer * inner;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (r / inner) * dim * inner + r % inner;
    softmax_row<In, Out, kLog>(in + base, out + base, dim, inner, ThreadGroup{});
  }
}

// ---- backward -----------------------------------------------------------------------------

template <typename G, typename GI, bool kLog, typename Group>
__device__ __forceinline__ void softmax_backward_row(const G* go, const G* y, GI* gi, int64_t dim, int64_t stride,
                                                     const Group& g) {
  using Acc = opmath_t<G>;
  const int64_t first = g.rank(), step = g.size();
  CompensatedSum<Acc> partial;
  for (int64_t j = first; j < dim; j += step) {
    partial.add(kLog ? load(go + j * stride) : load(go + j * stride) * load(y + j * stride));
  }
  const Acc s = g.reduce(partial.sum, SumOp(), Acc(0));
  for (int64_t j = first; j < dim; j += step) {
    const Acc gj = load(go + j * stride), yj = load(y + j * stride);
    gi[j * stride] = cast<GI>(kLog ? gj - math::exp(yj) * s : yj * (gj - s));
  }
}

template <typename G, typename GI, bool kLog>
__global__ void softmax_backward_warp_rows(const G* go, const G* y, GI* gi, int64_t rows, int64_t dim) {
  const int64_t warps = blockDim.x / kWarp;
  for (int64_t row = blockIdx.x * warps + threadIdx.x / kWarp; row < rows; row += static_cast<int64_t>(gridDim.x) * warps) {
    softmax_backward_row<G, GI, kLog>(go + row * dim, y + row * dim, gi + row * dim, dim, 1, WarpGroup{});
  }
}

template <typename G, typename GI, bool kLog>
__global__ void softmax_backward_rows_as_warps(const G* go, const G* y, GI* gi, int64_t rows, int64_t dim) {
  using Acc = opmath_t<G>;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const G* g = go + row * dim;
    const G* yr = y + row * dim;
    GI* out = gi + row * dim;
    Acc sum[kWarp], carry[kWarp];
    for (int l = 0; l < kWarp; ++l) sum[l] = carry[l] = Acc(0);
    for_warp_steps(dim, [&](int64_t j0, int lanes) {
      for (int l = 0; l < lanes; ++l) {
        CompensatedSum<Acc>::step(sum[l], carry[l], kLog ? load(g + j0 + l) : load(g + j0 + l) * load(yr + j0 + l));
      }
    });
    lanes_butterfly(sum, SumOp());
    const Acc* s = sum;
    for_warp_steps(dim, [&](int64_t j0, int lanes) {
      if constexpr (kLog) {
        Acc e[kWarp];
        for (int l = 0; l < lanes; ++l) e[l] = math::exp(load(yr + j0 + l));
        for (int l = 0; l < lanes; ++l) out[j0 + l] = cast<GI>(load(g + j0 + l) - e[l] * s[l]);
      } else {
        for (int l = 0; l < lanes; ++l) {
          const Acc gj = load(g + j0 + l), yj = load(yr + j0 + l);
          out[j0 + l] = cast<GI>(yj * (gj - s[l]));
        }
      }
    });
  }
}

template <typename G, typename GI, bool kLog>
__global__ void softmax_backward_block_rows(const G* go, const G* y, GI* gi, int64_t rows, int64_t dim) {
  using Acc = opmath_t<G>;
  __shared__ Acc scratch[kWarp];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    softmax_backward_row<G, GI, kLog>(go + row * dim, y + row * dim, gi + row * dim, dim, 1, BlockGroup<Acc>{scratch});
  }
}

template <typename G, typename GI, bool kLog>
__global__ void softmax_backward_columns(const G* go, const G* y, GI* gi, int64_t outer, int64_t dim, int64_t inner) {
  const int64_t rows = outer * inner;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (r / inner) * dim * inner + r % inner;
    softmax_backward_row<G, GI, kLog>(go + base, y + base, gi + base, dim, inner, ThreadGroup{});
  }
}

// ---- launch -------------------------------------------------------------------------------

// Rows of <= kWarpRowMax: whether the rows-as-warps kernel (a thread computing a warp's row,
// bit-identical) replaces the warp kernel. A sim-only path (sim/fast_paths.h): from
// kRowsAsWarpsMinElements elements on, and for tiny problems (up to kRowsAsWarpsMaxSmall
// elements: per-op overhead, where 32 fibers meeting at ten shuffles cost far more than the
// arithmetic; softmax 1x8 9x -> 1.6x the CPU's time, docs/performance.md); mid-sized problems
// still run the warp kernel's shuffles. Never on cuda; switched off, never on sim either (the
// generated tests' cuda-path run).
#if defined(__CUDACC__)
constexpr bool rows_as_warps(int64_t, int64_t) { return false; }
#else
constexpr int64_t kRowsAsWarpsMinElements = 65536;
constexpr int64_t kRowsAsWarpsMaxSmall = 4096;
inline bool rows_as_warps(int64_t rows, int64_t dim) {
  return (rows * dim >= kRowsAsWarpsMinElements || rows * dim <= kRowsAsWarpsMaxSmall) && foo::sim::sim_only_paths();
}
#endif
constexpr unsigned kRowsAsWarpsThreads = 32;

// Threads of a block that reduces one long row.
unsigned block_row_threads(int64_t dim) {
  return dim >= 16384 ? 1024u : dim >= 4096 ? 512u : 256u;
}

template <typename In, typename Out, bool kLog>
void launch_forward(Stream stream, const char* name, const In* in, Out* out, int64_t outer, int64_t dim, int64_t inner) {
  if (inner > 1) {
    launch_independent(name, softmax_columns<In, Out, kLog>,
                       capped_grid((outer * inner + kColumnThreads - 1) / kColumnThreads), dim3(kColumnThreads), stream,
                       in, out, outer, dim, inner);
  } else if (dim <= kWarpRowMax && rows_as_warps(outer, dim)) {
    launch_independent(name, softmax_rows_as_warps<In, Out, kLog>, blocks_for(outer, kRowsAsWarpsThreads),
                       dim3(kRowsAsWarpsThreads), stream, in, out, outer, dim);
  } else if (dim <= kWarpRowMax) {
    const int64_t rows_per_block = kWarpRowsThreads / kWarp;
    launch(name, softmax_warp_rows<In, Out, kLog>, capped_grid((outer + rows_per_block - 1) / rows_per_block),
           dim3(kWarpRowsThreads), 0, stream, in, out, outer, dim);
  } else {
    launch(name, softmax_block_rows<In, Out, kLog>, capped_grid(outer), dim3(block_row_threads(dim)), 0, stream, in,
           out, outer, dim);
  }
}

template <typename G, typename GI, bool kLog>
void launch_backward(Stream stream, const char* name, const G* go, const G* y, GI* gi, int64_t outer, int64_t dim,
                     int64_t inner) {
  if (inner > 1) {
    launch_independent(name, softmax_backward_columns<G, GI, kLog>,
                       capped_grid((outer * inner + kColumnThreads - 1) / kColumnThreads), dim3(kColumnThreads), stream,
                       go, y, gi, outer, dim, inner);
  } else if (dim <= kWarpRowMax && rows_as_warps(outer, dim)) {
    launch_independent(name, softmax_backward_rows_as_warps<G, GI, kLog>, blocks_for(outer, kRowsAsWarpsThreads),
                       dim3(kRowsAsWarpsThreads), stream, go, y, gi, outer, dim);
  } else if (dim <= kWarpRowMax) {
    const int64_t rows_per_block = kWarpRowsThreads / kWarp;
    launch(name, softmax_backward_warp_rows<G, GI, kLog>, capped_grid((outer + rows_per_block - 1) / rows_per_block),
           dim3(kWarpRowsThreads), 0, stream, go, y, gi, outer, dim);
  } else {
    launch(name, softmax_backward_block_rows<G, GI, kLog>, capped_grid(outer), dim3(block_row_threads(dim)), 0,
           stream, go, y, gi, outer, dim);
  }
}

[[noreturn]] void bad_dtype_pair(const char* op, DType a, DType b) {
  throw std::invalid_argument(std::string(op) + ": foo has no kernel from " + dtype_name(a) + " to " + dtype_name(b));
}

}  // namespace

void softmax_forward(Stream stream, const void* in, void* out, DType in_dtype, DType out_dtype, int64_t outer,
                     int64_t dim, int64_t inner, bool log) {
  const char* name = log ? "_log_softmax" : "_softmax";
  dispatch<kFloatingTypes>(in_dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (outer == 0 || dim == 0 || inner == 0) return;
    auto run = [&](auto out_ptr) {
      if (log) launch_forward<T, std::remove_pointer_t<decltype(out_ptr)>, true>(stream, name, static_cast<const T*>(in), out_ptr, outer, dim, inner);
      else launch_forward<T, std::remove_pointer_t<decltype(out_ptr)>, false>(stream, name, static_cast<const T*>(in), out_ptr, outer, dim, inner);
    };
    if (out_dtype == in_dtype) return run(static_cast<T*>(out));
    if constexpr (std::is_same_v<T, half_t>) {  // half_to_float
      if (out_dtype == DType::Float32) return run(static_cast<float*>(out));
    }
    bad_dtype_pair(name, in_dtype, out_dtype);
  });
}

void softmax_backward(Stream stream, const void* grad_out, const void* y, void* grad_in, DType grad_dtype,
                      DType grad_in_dtype, int64_t outer, int64_t dim, int64_t inner, bool log) {
  const char* name = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  dispatch<kFloatingTypes>(grad_dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (outer == 0 || dim == 0 || inner == 0) return;
    auto run = [&](auto gi) {
      using GI = std::remove_pointer_t<decltype(gi)>;
      const T* go = static_cast<const T*>(grad_out);
      const T* yy = static_cast<const T*>(y);
      if (log) launch_backward<T, GI, true>(stream, name, go, yy, gi, outer, dim, inner);
      else launch_backward<T, GI, false>(stream, name, go, yy, gi, outer, dim, inner);
    };
    if (grad_in_dtype == grad_dtype) return run(static_cast<T*>(grad_in));
    if constexpr (std::is_same_v<T, float>) {  // the gradient of a half_to_float softmax
      if (grad_in_dtype == DType::Float16) return run(static_cast<half_t*>(grad_in));
    }
    bad_dtype_pair(name, grad_dtype, grad_in_dtype);
  });
}

}  // namespace foo::kernels::FOO_TARGET
