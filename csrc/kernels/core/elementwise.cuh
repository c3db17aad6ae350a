#pragma once
// The elementwise launcher of both targets: out = f(in...) over an ElementwiseGeometry built by
// the host from at::TensorIterator (csrc/aten/core/elementwise.h). A kernel family instantiates it
// with a functor; types are fixed per instantiation (the host casts mismatched operands first).
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

// Byte offsets of element `linear` in every operand, innermost dim first (as TensorIterator orders).
template <int N, typename index_t>
__device__ __forceinline__ void strided_offsets(const ElementwiseGeometry& g, index_t linear, index_t (&offsets)[N]) {
  for (int k = 0; k < N; ++k) offsets[k] = 0;
  for (int d = 0; d < g.ndim; ++d) {
    const index_t size = static_cast<index_t>(g.sizes[d]);
    const index_t index = linear % size;
    linear /= size;
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

#if defined(__CUDACC__)
constexpr int64_t kMaxElementwiseBlocks = 65535;
// Consecutive elements a thread handles per step of its grid-stride loop. On a GPU one: the
// threads of a warp then read consecutive elements, and their loads coalesce.
constexpr int kElementwiseRun = 1;
#else
// The sim device runs a block per host thread at a time; a few hundred blocks balance the load
// without paying per-thread overhead for millions of emulated threads.
constexpr int64_t kMaxElementwiseBlocks = 256;
// On sim an emulated thread is a function call that copies the kernel's parameters (a geometry
// of ~700 bytes): a run of 512 contiguous elements per thread amortises that, and is a plain
// loop the host compiler vectorises (SSE on x86-64) once the kernel is inlined into it.
constexpr int kElementwiseRun = 512;
#endif

// Grid-stride loop over runs of kElementwiseRun consecutive elements: the grid is capped, each
// thread handles every (blockDim * gridDim)-th run. Any run length gives the same results: each
// element is computed alone.
template <typename index_t, bool kContiguous, typename F, typename Out, typename... In>
__global__ void elementwise_kernel(ElementwiseGeometry g, F f) {
  const index_t n = static_cast<index_t>(g.numel);
  const index_t stride = static_cast<index_t>(blockDim.x) * gridDim.x * kElementwiseRun;
  for (index_t first = (static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kElementwiseRun; first < n;
       first += stride) {
    const index_t end = n - first < kElementwiseRun ? n : first + kElementwiseRun;
    for (index_t i = first; i < end; ++i) {
      elementwise_one<index_t, kContiguous, Out, In...>(g, f, i, std::index_sequence_for<In...>{});
    }
  }
}

// out[i] = f(in_0[i], ..., in_k[i]) with Out and In... the operands' element types.
template <typename Out, typename... In, typename F>
void launch_elementwise(const char* name, Stream stream, const ElementwiseGeometry& g, const F& f) {
  if (g.numel == 0) return;
  const int64_t runs = (g.numel + kElementwiseRun - 1) / kElementwiseRun;
  const unsigned kThreads = threads_for(runs);  // fewer threads for tiny ops (kernel.h)
  const dim3 grid = blocks_for(runs, kThreads, kMaxElementwiseBlocks);
  if (g.contiguous) {
    launch_independent(name, elementwise_kernel<int64_t, true, F, Out, In...>, grid, dim3(kThreads), stream, g, f);
  } else if (g.index32) {
    launch_independent(name, elementwise_kernel<uint32_t, false, F, Out, In...>, grid, dim3(kThreads), stream, g, f);
  } else {
    launch_independent(name, elementwise_kernel<int64_t, false, F, Out, In...>, grid, dim3(kThreads), stream, g, f);
  }
}

}  // namespace foo::kernels::FOO_TARGET
