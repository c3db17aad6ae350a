#pragma once
// The elementwise launcher of both targets: out = f(in...) over an ElementwiseGeometry built by
// the host from at::TensorIterator (csrc/aten/core/elementwise.h). A kernel family instantiates it
// with a functor; types are fixed per instantiation (the host casts mismatched operands first).
//
// Three paths, chosen per launch: contiguous operands move in aligned vectors of up to 16 bytes
// (one load or store instruction each, as ATen's vectorized_elementwise_kernel; kWholeVectors
// says where sim does the same), the last partial vector and misaligned operands element by
// element; strided operands with 32-bit offsets split the linear index with precomputed
// dividers (kernels/core/int_divider.h), and those with 64-bit offsets with `/` and `%`. Every
// path computes each element alone, with the same functor: the results are the same bits.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {

// Operand k of element `offset`, in the type kernels compute with (opmath_t: float for the 16-bit
// floats, exact). A host scalar operand arrives in that type already: the host decides whether it
// was rounded to T first (TensorIterator's promotion) or not (the CPU's mul/div kernels), so
// x_half * 0.3 can multiply by 0.3f as the CPU does (csrc/aten/elementwise.cpp).
template <typename T, typename index_t>
__device__ __forceinline__ opmath_t<T> load_operand(const ElementwiseGeometry& g, int k, index_t offset) {
  const char* base = g.data[k];
  if (base == nullptr) return *reinterpret_cast<const opmath_t<T>*>(g.scalars[k]);
  return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(base + offset));
}

// Byte offsets of element `linear` in every operand, innermost dim first (as TensorIterator
// orders). 32-bit indices divide with the host's dividers: a multiply-high and a shift per
// dimension where `/` and `%` cost tens of instructions.
template <int N, typename index_t>
__device__ __forceinline__ void strided_offsets(const ElementwiseGeometry& g, index_t linear, index_t (&offsets)[N]) {
  for (int k = 0; k < N; ++k) offsets[k] = 0;
  for (int d = 0; d < g.ndim; ++d) {
    index_t index;
    if constexpr (std::is_same_v<index_t, uint32_t>) {
      const uint32_t quotient = g.dividers[d].divide(linear);
      index = linear - quotient * g.dividers[d].divisor;
      linear = quotient;
    } else {
      const index_t size = static_cast<index_t>(g.sizes[d]);
      index = linear % size;
      linear /= size;
    }
    for (int k = 0; k < N; ++k) offsets[k] += index * static_cast<index_t>(g.strides[k][d]);
  }
}

template <typename index_t, bool kContiguous, typename Out, typename... In, typename F, size_t... I>
__device__ __forceinline__ void elementwise_one(const ElementwiseGeometry& g, const F& f, index_t i,
                                                std::index_sequence<I...>) {
  constexpr int N = 1 + sizeof...(In);
  index_t offsets[N];
  if constexpr (kContiguous) {
    constexpr index_t sizes[N] = {static_cast<index_t>(sizeof(Out)), static_cast<index_t>(sizeof(In))...};
    for (int k = 0; k < N; ++k) offsets[k] = i * sizes[k];
  } else {
    strided_offsets(g, i, offsets);
  }
  *reinterpret_cast<Out*>(g.data[0] + offsets[0]) = f(load_operand<In>(g, I + 1, offsets[I + 1])...);
}

// V consecutive elements of one operand, moved as one aligned access of V * sizeof(T) bytes.
template <typename T, int V>
struct alignas(sizeof(T) * V) Vector {
  T v[V];
};

template <typename... T>
constexpr int widest_bytes() {
  int widest = 1;
  ((widest = static_cast<int>(sizeof(T)) > widest ? static_cast<int>(sizeof(T)) : widest), ...);
  return widest;
}

// Elements per vector: 16 bytes of the widest operand (4 floats, 8 halfs, 16 bools; a complex
// double has none: 1 is the element path).
template <typename Out, typename... In>
constexpr int kVectorWidth = 16 / widest_bytes<Out, In...>();

// Operand k's vector at element `first` (a multiple of V: the host checked its alignment).
template <typename T, int V>
__device__ __forceinline__ const Vector<T, V>* vector_at(const ElementwiseGeometry& g, int k, int64_t first) {
  return reinterpret_cast<const Vector<T, V>*>(g.data[k] + first * static_cast<int64_t>(sizeof(T)));
}

// Operand k's V elements, in one load instruction (or the host scalar V times).
template <typename T, int V>
__device__ __forceinline__ Vector<opmath_t<T>, V> load_vector(const ElementwiseGeometry& g, int k, int64_t first) {
  Vector<opmath_t<T>, V> values;
  if (g.data[k] == nullptr) {
    const opmath_t<T> scalar = *reinterpret_cast<const opmath_t<T>*>(g.scalars[k]);
    for (int j = 0; j < V; ++j) values.v[j] = scalar;
  } else {
    const Vector<T, V> raw = *vector_at<T, V>(g, k, first);
    for (int j = 0; j < V; ++j) values.v[j] = static_cast<opmath_t<T>>(raw.v[j]);
  }
  return values;
}

template <int V, typename Out, typename... In, typename F>
__device__ __forceinline__ void store_vector(const ElementwiseGeometry& g, const F& f, int64_t first,
                                             const Vector<opmath_t<In>, V>&... in) {
  Vector<Out, V> out;
  for (int j = 0; j < V; ++j) out.v[j] = f(in.v[j]...);
  *const_cast<Vector<Out, V>*>(vector_at<Out, V>(g, 0, first)) = out;  // one store instruction
}

template <int V, typename Out, typename... In, typename F, size_t... I>
__device__ __forceinline__ void elementwise_vector(const ElementwiseGeometry& g, const F& f, int64_t first,
                                                   std::index_sequence<I...>) {
  store_vector<V, Out, In...>(g, f, first, load_vector<In, V>(g, I + 1, first)...);
}

// Whole-vector accesses run on a GPU and, on sim, in the checked mode (sim/checked.h sees each
// 16-byte access; tests/test_sim_checked_build.py runs the alignment and tail tests there). The
// fast sim build leaves aligned vectors to the element loop, which the host compiler vectorises
// itself: measured on the 2-core machine (benchmarks/RESULTS.md), whole vectors made exp of 4M
// floats ~35% slower (a vector assembled on the stack around expf calls and read back whole
// stalls store forwarding) and visiting them element by element made add ~35% slower (a loop
// of 4 inside the run's loop vectorises worse than the run's flat loop).
#if defined(__CUDACC__) || defined(FOO_SIM_CHECKED)
constexpr bool kWholeVectors = true;
#else
constexpr bool kWholeVectors = false;
#endif

#if defined(__CUDACC__)
constexpr int64_t kMaxElementwiseBlocks = 65535;
// Consecutive elements a thread handles per step of its grid-stride loop: one vector on a GPU
// (one element on the element paths). The threads of a warp then read consecutive vectors, and
// their loads coalesce.
constexpr int kElementwiseRun = 1;
#else
// The sim device runs a block per host thread at a time; a few hundred blocks balance the load
// without paying per-thread overhead for millions of emulated threads.
constexpr int64_t kMaxElementwiseBlocks = 256;
// On sim an emulated thread is a function call that copies the kernel's parameters (a geometry
// of ~900 bytes): a run of 512 contiguous elements per thread amortises that, and is a plain
// loop the host compiler vectorises (SSE on x86-64) once the kernel is inlined into it.
constexpr int kElementwiseRun = 512;
#endif

// Elements of a thread's run on a path: whole vectors on the vector path (512 is a multiple of
// every width, so on sim the run stays 512 elements).
template <int V>
constexpr int64_t kRunElements = kElementwiseRun > V ? kElementwiseRun : V;

// Grid-stride loop over runs of consecutive elements: the grid is capped, each thread handles
// every (blockDim * gridDim)-th run. Any run length gives the same results: each element is
// computed alone. `aligned` (contiguous operands only): every operand's data is aligned to its
// vector, so runs, which then start at multiples of V, are whole aligned vectors but for the
// tensor's last V - 1 elements at most.
template <typename index_t, bool kContiguous, int V, typename F, typename Out, typename... In>
__global__ void elementwise_kernel(ElementwiseGeometry g, F f, bool aligned) {
  const index_t run = static_cast<index_t>(aligned ? kRunElements<V> : kElementwiseRun);
  const index_t n = static_cast<index_t>(g.numel);
  const index_t stride = static_cast<index_t>(blockDim.x) * gridDim.x * run;
  for (index_t first = (static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x) * run; first < n;
       first += stride) {
    const index_t end = n - first < run ? n : first + run;
    index_t i = first;
    if constexpr (kContiguous && V > 1 && kWholeVectors) {
      if (aligned) {
        for (; i + V <= end; i += V) elementwise_vector<V, Out, In...>(g, f, i, std::index_sequence_for<In...>{});
      }
    }
    for (; i < end; ++i) {
      elementwise_one<index_t, kContiguous, Out, In...>(g, f, i, std::index_sequence_for<In...>{});
    }
  }
}

// Whether every tensor operand's data is aligned to its V-element vector (a view that starts
// mid-allocation, x[1:], often is not).
template <int V, typename Out, typename... In>
bool vector_aligned(const ElementwiseGeometry& g) {
  constexpr uintptr_t kBytes[] = {sizeof(Out) * V, sizeof(In) * V...};
  for (int k = 0; k < 1 + static_cast<int>(sizeof...(In)); ++k) {
    if (g.data[k] != nullptr && reinterpret_cast<uintptr_t>(g.data[k]) % kBytes[k] != 0) return false;
  }
  return true;
}

// out[i] = f(in_0[i], ..., in_k[i]) with Out and In... the operands' element types.
template <typename Out, typename... In, typename F>
void launch_elementwise(const char* name, Stream stream, const ElementwiseGeometry& g, const F& f) {
  if (g.numel == 0) return;
  constexpr int V = kVectorWidth<Out, In...>;
  const auto plan = [&](int64_t run) {
    const int64_t runs = (g.numel + run - 1) / run;
    const unsigned threads = threads_for(runs);  // fewer threads for tiny ops (kernel.h)
    return std::make_pair(blocks_for(runs, threads, kMaxElementwiseBlocks), dim3(threads));
  };
  if (g.contiguous) {
    const bool aligned = vector_aligned<V, Out, In...>(g);
    const auto [grid, block] = plan(aligned ? kRunElements<V> : kElementwiseRun);
    launch_independent(name, elementwise_kernel<int64_t, true, V, F, Out, In...>, grid, block, stream, g, f, aligned);
    return;
  }
  const auto [grid, block] = plan(kElementwiseRun);
  if (g.index32) {
    launch_independent(name, elementwise_kernel<uint32_t, false, 1, F, Out, In...>, grid, block, stream, g, f, false);
  } else {
    launch_independent(name, elementwise_kernel<int64_t, false, 1, F, Out, In...>, grid, block, stream, g, f, false);
  }
}

}  // namespace foo::kernels::FOO_TARGET
