// The reduction launcher: one set of kernels, generic over a reduction "ops" functor, shared by
// sum, mean, amax/amin, max/min (values and indices), argmax/argmin, var and std, vector norms.
//
// The input is a dense [outer, size, inner] array reduced over `size` (reduce_plan.h); csrc/aten
// gets it there without a copy whenever the tensor's memory allows. Kernels (plan_reduction picks):
//   Warp   one warp per output (size <= kWarpMaxSize): lanes stride the reduction, shuffles combine.
//   Block  one block per output, or per chunk of it when the reduction is long: threads stride,
//          warp shuffles, then shared memory across warps (__syncthreads).
//   Column inner >= kColumnMinInner (reducing a leading dim): a block covers 32 adjacent outputs
//          (coalesced loads), its 8 rows of threads split `size`, shared memory combines them.
// A split reduction writes one partial accumulator per chunk to the workspace, and a Warp pass
// over those partials (PartialOps) finishes it. Every kernel is a grid-stride loop, so any number
// of outputs fits the grid cap. Each thread folds its elements into 4 interleaved accumulators:
// with the splitting this keeps float sums trees of short sequential sums (precision).
//
// An ops functor has in_t, acc_t and
//   acc_t identity(); acc_t reduce(acc_t, in_t, int64_t index); acc_t combine(acc_t, acc_t);
//   void write(int64_t output, acc_t)   (projects: mean divides, std takes the root, ...)
// combine must not depend on argument order beyond what it decides itself (argmax breaks ties
// by index), since shuffles and chunks combine in tree order.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/core/block_reduce.h"
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"
#include "kernels/ops/reduce_plan.h"

namespace foo::kernels::FOO_TARGET {
namespace {

// ---------------------------------------------------------------------------------------------
// Accumulators and their warp shuffles (block_reduce.h's warp_reduce finds them by ADL)
// ---------------------------------------------------------------------------------------------

using FOO_TARGET::shfl_xor;  // the scalar shuffles, which the overloads below would hide

template <typename V>
struct ArgAcc {
  V value;
  int64_t index;  // -1: no element yet
};
template <typename V>
__device__ __forceinline__ ArgAcc<V> shfl_xor(ArgAcc<V> a, int lane_mask) {
  return {shfl_xor(a.value, lane_mask), shfl_xor(a.index, lane_mask)};
}

template <typename M>
struct WelfordAcc {
  M mean;
  M m2;  // sum of squared deviations from the mean
  int64_t n;
};
template <typename M>
__device__ __forceinline__ WelfordAcc<M> shfl_xor(WelfordAcc<M> a, int lane_mask) {
  return {shfl_xor(a.mean, lane_mask), shfl_xor(a.m2, lane_mask), shfl_xor(a.n, lane_mask)};
}

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

// sum / mean: the input is cast to Out, accumulated in Acc (int64 for integral outputs, float for
// 16-bit floats), and the result cast back to Out, as torch's CPU sum does.
template <typename In, typename Out, bool kMean>
struct SumOps {
  using in_t = In;
  using acc_t = std::conditional_t<std::is_integral_v<Out>, int64_t, opmath_t<Out>>;
  Out* out;
  int64_t size;
  FOO_HD acc_t identity() const { return acc_t(0); }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t) const { return a + static_cast<acc_t>(cast<opmath_t<Out>>(v)); }
  FOO_HD acc_t combine(acc_t a, acc_t b) const { return a + b; }
  FOO_HD void write(int64_t i, acc_t a) const {
    if constexpr (kMean) {
      out[i] = cast<Out>(a / static_cast<acc_t>(size));
    } else {
      out[i] = cast<Out>(a);
    }
  }
};

template <typename T>
FOO_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// amax / amin / max() / min(): NaN propagates.
template <typename In, bool kMax>
struct MinMaxOps {
  using in_t = In;
  using acc_t = opmath_t<In>;
  In* out;
  FOO_HD acc_t identity() const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    } else {
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
    }
  }
  FOO_HD acc_t combine(acc_t a, acc_t b) const {
    if (is_nan(a)) return a;
    return (kMax ? a > b : a < b) ? a : b;
  }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t) const { return combine(a, cast<acc_t>(v)); }
  FOO_HD void write(int64_t i, acc_t a) const { out[i] = cast<In>(a); }
};

// argmax / argmin / max.dim / min.dim: the first extreme wins (lowest index), a NaN beats any
// number (the first NaN), as the CPU kernels decide.
template <typename In, bool kMax>
struct ArgOps {
  using in_t = In;
  using value_t = opmath_t<In>;
  using acc_t = ArgAcc<value_t>;
  In* values;  // may be null: argmax/argmin write indices only
  int64_t* indices;
  FOO_HD acc_t identity() const { return {value_t(0), -1}; }
  FOO_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (kMax ? a.value > b.value : a.value < b.value) return a;
    if (kMax ? b.value > a.value : b.value < a.value) return b;
    return a.index < b.index ? a : b;
  }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t k) const { return combine(a, acc_t{cast<value_t>(v), k}); }
  FOO_HD void write(int64_t i, acc_t a) const {
    if (values != nullptr) values[i] = cast<In>(a.value);
    indices[i] = a.index;
  }
};

// var / std: Welford per thread, Chan's formula to combine; accumulated in double for
// float32/float64 (as the CPU does) and float for 16-bit floats.
template <typename In>
struct VarOps {
  using in_t = In;
  using M = std::conditional_t<std::is_same_v<opmath_t<In>, float> && sizeof(In) == 2, float, double>;
  using acc_t = WelfordAcc<M>;
  In* out;
  In* means;  // may be null
  double correction;
  bool take_sqrt;
  FOO_HD acc_t identity() const { return {M(0), M(0), 0}; }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t) const {
    const M x = static_cast<M>(cast<opmath_t<In>>(v));
    const int64_t n = a.n + 1;
    const M delta = x - a.mean;
    const M mean = a.mean + delta / static_cast<M>(n);
    return {mean, a.m2 + delta * (x - mean), n};
  }
  FOO_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const M delta = b.mean - a.mean;
    const M b_share = static_cast<M>(b.n) / static_cast<M>(n);
    return {a.mean + delta * b_share, a.m2 + b.m2 + delta * delta * static_cast<M>(a.n) * b_share, n};
  }
  FOO_HD void write(int64_t i, acc_t a) const {
    const M n = static_cast<M>(a.n), c = static_cast<M>(correction);
    const M divisor = n > c ? n - c : M(0);
    M var = a.m2 / divisor;
    if (take_sqrt) {
      var = math::sqrt(var);
    }
    out[i] = cast<In>(var);
    if (means != nullptr) means[i] = cast<In>(a.n == 0 ? std::numeric_limits<M>::quiet_NaN() : a.mean);
  }
};

// linalg.vector_norm: accumulated in opmath (float for 16-bit floats), as the CPU does. The
// common orders get their own fold (no pow per element); NaN propagates through each of them
// (a sum of NaN, and the comparisons of the inf-norms keep a NaN accumulator).
template <typename In>
struct NormOps {
  using in_t = In;
  using acc_t = opmath_t<In>;
  enum Kind : int8_t { Zero, One, Two, Inf, NegInf, P };
  In* out;
  acc_t p;
  Kind kind;
  static FOO_HD Kind kind_of(double ord) {
    if (ord == 0) return Zero;
    if (ord == 1) return One;
    if (ord == 2) return Two;
    if (ord == std::numeric_limits<double>::infinity()) return Inf;
    if (ord == -std::numeric_limits<double>::infinity()) return NegInf;
    return P;
  }
  FOO_HD acc_t identity() const {
    if (kind == NegInf) return std::numeric_limits<acc_t>::infinity();
    return acc_t(0);
  }
  FOO_HD acc_t combine(acc_t a, acc_t b) const {
    if (kind == Inf || kind == NegInf) {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return (kind == Inf ? a > b : a < b) ? a : b;
    }
    return a + b;
  }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t) const {
    const acc_t x = math::fabs(cast<acc_t>(v));
    switch (kind) {
      case Zero: return a + (x != acc_t(0) ? acc_t(1) : acc_t(0));
      case One: return a + x;
      case Two: return a + x * x;
      case Inf: case NegInf: return combine(a, x);
      default: return a + math::pow(x, p);
    }
  }
  FOO_HD void write(int64_t i, acc_t a) const {
    if (kind == Two) a = math::sqrt(a);
    else if (kind == P) a = math::pow(a, acc_t(1) / p);
    out[i] = cast<In>(a);
  }
};

// prod: the input arrives in the output dtype (the host casts, as the CPU does). 16-bit floats
// multiply in float (as CUDA; the CPU rounds each product to 16 bits), integers modulo 2^64 and
// truncated (the CPU's wrapping product, without signed overflow), bool is a logical and.
template <typename T>
struct ProdOps {
  using in_t = T;
  using acc_t = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;
  T* out;
  FOO_HD acc_t identity() const { return acc_t(1); }
  FOO_HD acc_t combine(acc_t a, acc_t b) const {
    if constexpr (std::is_same_v<acc_t, bool>) {
      return a && b;
    } else if constexpr (std::is_integral_v<acc_t>) {
      return static_cast<acc_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  }
  FOO_HD acc_t reduce(acc_t a, T v, int64_t) const { return combine(a, cast<acc_t>(v)); }
  FOO_HD void write(int64_t i, acc_t a) const { out[i] = cast<T>(a); }
};

// all / any: the output is bool (uint8 for uint8 input, as the CPU's), one byte 0/1 either way.
// An empty reduction gives the identity: true for all, false for any. The op is a runtime flag.
template <typename In>
struct AllAnyOps {
  using in_t = In;
  using acc_t = bool;
  uint8_t* out;
  bool all;
  FOO_HD acc_t identity() const { return all; }
  FOO_HD acc_t combine(acc_t a, acc_t b) const { return all ? (a && b) : (a || b); }
  FOO_HD acc_t reduce(acc_t a, In v, int64_t) const { return combine(a, cast<bool>(v)); }
  FOO_HD void write(int64_t i, acc_t a) const { out[i] = a ? 1 : 0; }
};

// Integers and bool are nonzero exactly when their bits are: they are read as the unsigned
// integer of their size, so all/any take one instantiation per storage type.
template <typename F>
void dispatch_truth(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return f(TypeTag<uint8_t>{});
    case DType::Int16: return f(TypeTag<uint16_t>{});
    case DType::Int32: return f(TypeTag<uint32_t>{});
    case DType::Int64: return f(TypeTag<uint64_t>{});
    default: return dispatch<kFloatingTypes>(d, op, f);
  }
}

// The second pass of a split reduction: folds the partial accumulators of each output.
template <class Ops>
struct PartialOps {
  using in_t = typename Ops::acc_t;
  using acc_t = typename Ops::acc_t;
  Ops ops;
  FOO_HD acc_t identity() const { return ops.identity(); }
  FOO_HD acc_t reduce(acc_t a, const acc_t& v, int64_t) const { return ops.combine(a, v); }
  FOO_HD acc_t combine(acc_t a, acc_t b) const { return ops.combine(a, b); }
  FOO_HD void write(int64_t i, acc_t a) const { ops.write(i, a); }
};

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

// Folds elements begin, begin + step, ... < end of one reduction (element k at base[k * stride])
// into 4 interleaved accumulators, then combines them.
template <class Ops>
__device__ __forceinline__ typename Ops::acc_t thread_fold(const Ops& ops, const typename Ops::in_t* base,
                                                           int64_t stride, int64_t k, int64_t end, int64_t step) {
  using acc_t = typename Ops::acc_t;
  acc_t a0 = ops.identity(), a1 = a0, a2 = a0, a3 = a0;
  for (; k + 3 * step < end; k += 4 * step) {
    a0 = ops.reduce(a0, base[k * stride], k);
    a1 = ops.reduce(a1, base[(k + step) * stride], k + step);
    a2 = ops.reduce(a2, base[(k + 2 * step) * stride], k + 2 * step);
    a3 = ops.reduce(a3, base[(k + 3 * step) * stride], k + 3 * step);
  }
  for (; k < end; k += step) a0 = ops.reduce(a0, base[k * stride], k);
  return ops.combine(ops.combine(a0, a1), ops.combine(a2, a3));
}

// Consecutive elements a Block-kernel thread folds before striding to its next run. On cuda 1
// (thread_fold: lane j reads element k + j, loads coalesce); on sim, where a block's threads run
// one after another, a thread striding by blockDim touches a new cache line per element; runs of
// 2048 (8 KiB of float) read whole lines in order and keep the hardware prefetcher on one stream
// (runs of 256 measured ~1.5-2x slower for a 4M sum).
#if defined(__CUDACC__)
constexpr int64_t kBlockRun = 1;
#else
constexpr int64_t kBlockRun = 2048;
#endif
// Interleaved accumulators of a run (sim): element j of a run goes to accumulator j % kRunLanes.
// 16 floats are four SSE registers: the host compiler turns the loop over them into vector
// operations (4 scalar chains, as before, kept one add per cycle at best), and a sum of 16
// interleaved partials is no less precise than one of 4.
constexpr int kRunLanes = 16;

// Folds runs of kBlockRun consecutive elements: [k, k + kBlockRun), then kBlockRun * blockDim
// further on, ... < end, each run into kRunLanes interleaved accumulators, combined pairwise at the
// end. With runs of 1 it is thread_fold with step blockDim.
template <class Ops>
__device__ __forceinline__ typename Ops::acc_t thread_fold_runs(const Ops& ops, const typename Ops::in_t* base,
                                                                int64_t stride, int64_t k, int64_t end) {
  if constexpr (kBlockRun == 1) {
    return thread_fold(ops, base, stride, k, end, blockDim.x);
  } else {
    using acc_t = typename Ops::acc_t;
    acc_t a[kRunLanes];
    for (int l = 0; l < kRunLanes; ++l) a[l] = ops.identity();
    const int64_t step = kBlockRun * blockDim.x;
    for (; k < end; k += step) {
      const int64_t run_end = end - k < kBlockRun ? end : k + kBlockRun;
      int64_t j = k;
      if (stride == 1) {  // rows: a contiguous loop the compiler can vectorise
        for (; j + kRunLanes <= run_end; j += kRunLanes) {
          for (int l = 0; l < kRunLanes; ++l) a[l] = ops.reduce(a[l], base[j + l], j + l);
        }
      } else {
        for (; j + kRunLanes <= run_end; j += kRunLanes) {
          for (int l = 0; l < kRunLanes; ++l) a[l] = ops.reduce(a[l], base[(j + l) * stride], j + l);
        }
      }
      for (int l = 0; j < run_end; ++j, ++l) a[l] = ops.reduce(a[l], base[j * stride], j);
    }
    for (int width = kRunLanes / 2; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) a[l] = ops.combine(a[l], a[l + width]);
    }
    return a[0];
  }
}

// ops.combine as the combine function of block_reduce.h's warp_reduce / block_reduce.
template <class Ops>
struct CombineOf {
  const Ops& ops;
  __device__ __forceinline__ typename Ops::acc_t operator()(typename Ops::acc_t a, typename Ops::acc_t b) const {
    return ops.combine(a, b);
  }
};

// Where output `o` (= outer index * inner + inner index) starts in the input.
template <typename T>
__device__ __forceinline__ const T* output_base(const T* in, int64_t o, int64_t size, int64_t inner) {
  const int64_t outer_index = o / inner;
  return in + (outer_index * size) * inner + (o - outer_index * inner);
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

template <class Ops>
__global__ void reduce_warp_kernel(Ops ops, const typename Ops::in_t* in, int64_t outer, int64_t size,
                                   int64_t inner) {
  const int64_t outputs = outer * inner;
  const int64_t warps_per_block = blockDim.x / kWarp;
  const int64_t lane = threadIdx.x % kWarp;
  for (int64_t o = blockIdx.x * warps_per_block + threadIdx.x / kWarp; o < outputs;
       o += static_cast<int64_t>(gridDim.x) * warps_per_block) {
    auto acc = thread_fold(ops, output_base(in, o, size, inner), inner, lane, size, kWarp);
    acc = warp_reduce(acc, CombineOf<Ops>{ops});
    if (lane == 0) ops.write(o, acc);
  }
}

// What reduce_warp_kernel computes, a thread per output: the 32 lanes' folds and the shuffle
// butterfly run in one thread's registers, in the same order with the same combines, so the result
// is bit-identical. For tiny reductions, where a warp's 32 threads (fibers on sim, rendezvousing at
// each of five shuffles) cost far more than the arithmetic; an independent launch on sim.
template <class Ops>
__global__ void reduce_serial_warp_kernel(Ops ops, const typename Ops::in_t* in, int64_t outer, int64_t size,
                                          int64_t inner) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= outer * inner) return;
  typename Ops::acc_t lanes[kWarp];
  for (int lane = 0; lane < kWarp; ++lane) {
    lanes[lane] = thread_fold(ops, output_base(in, o, size, inner), inner, lane, size, kWarp);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {  // warp_reduce's shfl_xor butterfly
    typename Ops::acc_t next[kWarp];
    for (int lane = 0; lane < kWarp; ++lane) next[lane] = ops.combine(lanes[lane], lanes[lane ^ offset]);
    for (int lane = 0; lane < kWarp; ++lane) lanes[lane] = next[lane];
  }
  ops.write(o, lanes[0]);
}

// Up to this many input elements a warp-kernel reduction runs serially (reduce_serial_warp_kernel).
constexpr int64_t kSerialReduceElements = 1024;

template <class Ops>
__global__ void reduce_block_kernel(Ops ops, const typename Ops::in_t* in, int64_t outer, int64_t size,
                                    int64_t inner, int64_t splits, typename Ops::acc_t* partials) {
  __shared__ typename Ops::acc_t smem[32];
  const int64_t items = outer * inner * splits;
  const int64_t chunk = (size + splits - 1) / splits;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {  // uniform over the block
    const int64_t o = item / splits, split = item - o * splits;
    const int64_t begin = split * chunk, end = begin + chunk < size ? begin + chunk : size;
    auto acc = thread_fold_runs(ops, output_base(in, o, size, inner), inner, begin + threadIdx.x * kBlockRun, end);
    acc = block_reduce(acc, CombineOf<Ops>{ops}, ops.identity(), smem);
    if (threadIdx.x == 0) {
      if (splits == 1) ops.write(o, acc);
      else partials[item] = acc;
    }
  }
}

template <class Ops>
__global__ void reduce_column_kernel(Ops ops, const typename Ops::in_t* in, int64_t outer, int64_t size,
                                     int64_t inner, int64_t splits, typename Ops::acc_t* partials) {
  __shared__ typename Ops::acc_t smem[kColumnHeight][kColumnWidth];
  const int64_t outputs = outer * inner;
  const int64_t tiles = (outputs + blockDim.x - 1) / blockDim.x;
  const int64_t items = tiles * splits;
  const int64_t chunk = (size + splits - 1) / splits;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {  // uniform over the block
    const int64_t tile = item / splits, split = item - tile * splits;
    const int64_t o = tile * blockDim.x + threadIdx.x;
    auto acc = ops.identity();
    if (o < outputs) {
      const int64_t begin = split * chunk, end = begin + chunk < size ? begin + chunk : size;
      acc = thread_fold(ops, output_base(in, o, size, inner), inner, begin + threadIdx.y, end, blockDim.y);
    }
    smem[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && o < outputs) {
      for (unsigned y = 1; y < blockDim.y; ++y) acc = ops.combine(acc, smem[y][threadIdx.x]);
      if (splits == 1) ops.write(o, acc);
      else partials[o * splits + split] = acc;
    }
    __syncthreads();  // smem is reused by the block's next tile
  }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

#if defined(__CUDACC__)
constexpr ReduceTuning kTuning{};
constexpr int kBlockThreads = kReduceThreads;  // threads of a Block-kernel block
#else
// sim: each thread of a Block kernel pays ~12 fiber switches (10 shuffles, 2 barriers) however
// few elements it folds. Fewer threads per block and longer chunks (up to 8192 elements a thread,
// in 16 interleaved sums of <= 512, which the host compiler vectorises) make the folding, not the
// switching, the cost; 8 blocks keep a few host threads busy. Two warps, not one, so block_reduce
// still combines across warps (one warp measured ~15% faster).
constexpr ReduceTuning kTuning{8, 1 << 19};
constexpr int kBlockThreads = 64;
#endif

template <class Ops>
void run(const char* name, const Ops& ops, const ReduceArgs& a, Stream stream) {
  using in_t = typename Ops::in_t;
  using acc_t = typename Ops::acc_t;
  static_assert(sizeof(acc_t) <= kReduceAccBytes, "raise kReduceAccBytes");
  static_assert(std::is_trivially_copyable_v<acc_t>, "accumulators live in shared memory");
  const int64_t outputs = a.outer * a.inner;
  if (outputs == 0) return;
  const auto* in = static_cast<const in_t*>(a.in);
  const ReducePlan p = plan_reduction(a.outer, a.size, a.inner, kTuning);
  auto* partials = static_cast<acc_t*>(a.workspace);
  if (p.splits > 1 && partials == nullptr) throw std::invalid_argument(std::string(name) + ": no workspace");
  const dim3 threads(kReduceThreads), column_threads(kColumnWidth, kColumnHeight);
  // A warp per output, and no more warps per block than outputs: a one-output reduction launches
  // one warp rather than eight of which seven find nothing to do (on sim each is 32 fibers).
  const dim3 warp_threads(threads_for(outputs * kWarp, kReduceThreads));
  const dim3 warp_grid = blocks_for(outputs, warp_threads.x / kWarp, kMaxGridBlocks);
  if (p.kernel == ReduceKernel::Warp && outputs * (a.size > 0 ? a.size : 1) <= kSerialReduceElements) {
    launch_independent(name, reduce_serial_warp_kernel<Ops>, blocks_for(outputs, threads_for(outputs)),
                       dim3(threads_for(outputs)), stream, ops, in, a.outer, a.size, a.inner);
    return;
  }
  switch (p.kernel) {
    case ReduceKernel::Warp:
      launch(name, reduce_warp_kernel<Ops>, warp_grid, warp_threads, 0, stream, ops, in, a.outer, a.size,
             a.inner);
      break;
    case ReduceKernel::Block:
      launch(name, reduce_block_kernel<Ops>, capped_grid(p.blocks, kMaxGridBlocks), dim3(kBlockThreads), 0, stream, ops, in,
             a.outer, a.size, a.inner, p.splits, partials);
      break;
    case ReduceKernel::Column:
      launch(name, reduce_column_kernel<Ops>, capped_grid(p.blocks, kMaxGridBlocks), column_threads, 0, stream, ops, in, a.outer, a.size,
             a.inner, p.splits, partials);
      break;
  }
  if (p.splits > 1) {
    const acc_t* parts = partials;
    launch(name, reduce_warp_kernel<PartialOps<Ops>>, warp_grid, warp_threads, 0, stream,
           PartialOps<Ops>{ops}, parts, outputs, p.splits, int64_t{1});
  }
}

[[noreturn]] void bad_dtypes(const char* op, const ReduceArgs& a) {
  throw std::invalid_argument(std::string(op) + ": foo has no kernel from " + dtype_name(a.in_dtype) + " to " +
                              dtype_name(a.out_dtype));
}

template <typename T>
constexpr bool kHalfLike = std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>;

// sum/mean: out dtype == in dtype, or integral/bool -> int64 (sum), or 16-bit float -> float32.
template <bool kMean>
void reduce_sum(Stream stream, const ReduceArgs& a) {
  const char* name = kMean ? "mean" : "sum";
  constexpr uint32_t types = kMean ? kFloatingTypes : kAllTypes;
  dispatch<types>(a.in_dtype, name, [&](auto tag) {
    using In = typename decltype(tag)::type;
    if (a.out_dtype == a.in_dtype) {
      run(name, SumOps<In, In, kMean>{static_cast<In*>(a.out), a.size}, a, stream);
      return;
    }
    if constexpr (!kMean && (std::is_integral_v<In>)) {
      if (a.out_dtype == DType::Int64) {
        run(name, SumOps<In, int64_t, kMean>{static_cast<int64_t*>(a.out), a.size}, a, stream);
        return;
      }
    }
    if constexpr (kHalfLike<In>) {
      if (a.out_dtype == DType::Float32) {
        run(name, SumOps<In, float, kMean>{static_cast<float*>(a.out), a.size}, a, stream);
        return;
      }
    }
    bad_dtypes(name, a);
  });
}

}  // namespace

void reduce(Stream stream, const ReduceArgs& a) {
  switch (a.op) {
    case ReduceOp::Sum:
      return reduce_sum<false>(stream, a);
    case ReduceOp::Mean:
      return reduce_sum<true>(stream, a);
    case ReduceOp::Max:
    case ReduceOp::Min:
      if (a.out_dtype != a.in_dtype) bad_dtypes("amax", a);
      return dispatch<kAllTypes>(a.in_dtype, a.op == ReduceOp::Max ? "amax" : "amin", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (a.op == ReduceOp::Max) run("amax", MinMaxOps<T, true>{static_cast<T*>(a.out)}, a, stream);
        else run("amin", MinMaxOps<T, false>{static_cast<T*>(a.out)}, a, stream);
      });
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      if (a.out != nullptr && a.out_dtype != a.in_dtype) bad_dtypes("argmax", a);
      return dispatch<kAllTypes>(a.in_dtype, a.op == ReduceOp::ArgMax ? "argmax" : "argmin", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (a.op == ReduceOp::ArgMax) run("argmax", ArgOps<T, true>{static_cast<T*>(a.out), a.indices}, a, stream);
        else run("argmin", ArgOps<T, false>{static_cast<T*>(a.out), a.indices}, a, stream);
      });
    case ReduceOp::All:
    case ReduceOp::Any: {
      const char* name = a.op == ReduceOp::All ? "all" : "any";
      if (a.out_dtype != DType::Bool && !(a.out_dtype == DType::UInt8 && a.in_dtype == DType::UInt8)) bad_dtypes(name, a);
      return dispatch_truth(a.in_dtype, name, [&](auto tag) {
        using T = typename decltype(tag)::type;
        run(name, AllAnyOps<T>{static_cast<uint8_t*>(a.out), a.op == ReduceOp::All}, a, stream);
      });
    }
    case ReduceOp::Var:
    case ReduceOp::Std:
      if (a.out_dtype != a.in_dtype) bad_dtypes("var", a);
      return dispatch<kFloatingTypes>(a.in_dtype, a.op == ReduceOp::Var ? "var" : "std", [&](auto tag) {
        using T = typename decltype(tag)::type;
        run(a.op == ReduceOp::Var ? "var" : "std",
            VarOps<T>{static_cast<T*>(a.out), static_cast<T*>(a.means), a.correction, a.op == ReduceOp::Std}, a, stream);
      });
    case ReduceOp::Norm:
      if (a.out_dtype != a.in_dtype) bad_dtypes("linalg_vector_norm", a);
      return dispatch<kFloatingTypes>(a.in_dtype, "linalg_vector_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using Ops = NormOps<T>;
        run("linalg_vector_norm", Ops{static_cast<T*>(a.out), static_cast<typename Ops::acc_t>(a.ord), Ops::kind_of(a.ord)},
            a, stream);
      });
    case ReduceOp::Prod:
      if (a.out_dtype != a.in_dtype) bad_dtypes("prod", a);
      return dispatch<kAllTypes>(a.in_dtype, "prod", [&](auto tag) {
        using T = typename decltype(tag)::type;
        run("prod", ProdOps<T>{static_cast<T*>(a.out)}, a, stream);
      });
  }
  throw std::invalid_argument("reduce: unknown op");
}

}  // namespace foo::kernels::FOO_TARGET
