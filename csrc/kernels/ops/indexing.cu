// Gathers and scatters through index tensors: see indexing.h. One grid-stride kernel; each thread
// finds its element's byte offsets in every operand (TensorIterator geometry), reads its indices,
// checks them, and moves or combines one element.
#include <algorithm>
#include <cstdint>

#include "kernels/core/atomic_ops.h"
#include "kernels/core/device_error.cuh"
#include "kernels/core/dtype.h"
#include "kernels/core/element_bits.h"
#include "kernels/core/elementwise.cuh"
#include "kernels/ops/indexing.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename index_t, IndexMode Mode, typename T>
__global__ void index_kernel(IndexGeometry g, DeviceErrorSite error) {
  const index_t n = static_cast<index_t>(g.numel);
  const index_t step = static_cast<index_t>(blockDim.x) * gridDim.x;
  const int operands = 2 + g.nindex;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    index_t offsets[kIndexOperands];
    for (int k = 0; k < operands; ++k) offsets[k] = 0;
    index_t linear = i;
    for (int d = 0; d < g.ndim; ++d) {
      const index_t size = static_cast<index_t>(g.sizes[d]);
      const index_t coordinate = linear % size;
      linear /= size;
      for (int k = 0; k < operands; ++k) offsets[k] += coordinate * static_cast<index_t>(g.strides[k][d]);
    }
    int64_t extra = 0;
    bool in_range = true;
    for (int k = 0; k < g.nindex; ++k) {
      const char* p = g.data[2 + k] + offsets[2 + k];
      const int64_t value = g.int32_indices ? static_cast<int64_t>(*reinterpret_cast<const int32_t*>(p))
                                            : *reinterpret_cast<const int64_t*>(p);
      const int64_t size = g.indexed_sizes[k];
      const int64_t wrapped = value < 0 && g.wrap_negative ? value + size : value;
      if (wrapped < 0 || wrapped >= size) {
        report_device_error(error, error.kind, value, k, size);
        in_range = false;
        break;
      }
      extra += wrapped * g.indexed_strides[k];
    }
    if (!in_range) continue;
    if constexpr (Mode == IndexMode::Gather) {
      *reinterpret_cast<T*>(g.data[0] + offsets[0]) = *reinterpret_cast<const T*>(g.data[1] + offsets[1] + extra);
    } else {
      const T v = g.data[1] != nullptr ? *reinterpret_cast<const T*>(g.data[1] + offsets[1])
                                       : *reinterpret_cast<const T*>(g.value);
      T* target = reinterpret_cast<T*>(g.data[0] + offsets[0] + extra);
      if constexpr (Mode == IndexMode::Scatter) *target = v;
      else if constexpr (Mode == IndexMode::ScatterAdd) atomic_combine<Combine::Add>(target, v);
      else if constexpr (Mode == IndexMode::ScatterMul) atomic_combine<Combine::Mul>(target, v);
      else if constexpr (Mode == IndexMode::ScatterMax) atomic_combine<Combine::Max>(target, v);
      else atomic_combine<Combine::Min>(target, v);
    }
  }
}

template <typename index_t, IndexMode Mode, typename T>
void run(const char* name, Stream stream, const IndexGeometry& g, const DeviceErrorSite& error) {
  const unsigned kThreads = threads_for(g.numel);
  const dim3 grid = blocks_for(g.numel, kThreads, kMaxElementwiseBlocks);
  launch_independent(name, index_kernel<index_t, Mode, T>, grid, dim3(kThreads), stream, g, error);
}

template <IndexMode Mode>
void run_combining(const char* name, Stream stream, DType dtype, const IndexGeometry& g, const DeviceErrorSite& error) {
  dispatch<kAllTypes>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run<int64_t, Mode, T>(name, stream, g, error);
  });
}

}  // namespace

void index_move(Stream stream, IndexMode mode, DType dtype, const IndexGeometry& g, const DeviceErrorSite& err) {
  if (g.numel == 0) return;
  switch (mode) {
    case IndexMode::Gather:
    case IndexMode::Scatter:
      dispatch<kAllTypes>(dtype, mode == IndexMode::Gather ? "index gather" : "index scatter", [&](auto tag) {
        using Bits = typename BitsOf<sizeof(typename decltype(tag)::type)>::type;
        const char* name = mode == IndexMode::Gather ? "index_gather" : "index_scatter";
        if (mode == IndexMode::Gather) {
          if (g.index32) run<uint32_t, IndexMode::Gather, Bits>(name, stream, g, err);
          else run<int64_t, IndexMode::Gather, Bits>(name, stream, g, err);
        } else {
          if (g.index32) run<uint32_t, IndexMode::Scatter, Bits>(name, stream, g, err);
          else run<int64_t, IndexMode::Scatter, Bits>(name, stream, g, err);
        }
      });
      return;
    case IndexMode::ScatterAdd:
      return run_combining<IndexMode::ScatterAdd>("index_scatter_add", stream, dtype, g, err);
    case IndexMode::ScatterMul:
      return run_combining<IndexMode::ScatterMul>("index_scatter_mul", stream, dtype, g, err);
    case IndexMode::ScatterMax:
      return run_combining<IndexMode::ScatterMax>("index_scatter_max", stream, dtype, g, err);
    case IndexMode::ScatterMin:
      return run_combining<IndexMode::ScatterMin>("index_scatter_min", stream, dtype, g, err);
  }
}

}  // namespace foo::kernels::FOO_TARGET
