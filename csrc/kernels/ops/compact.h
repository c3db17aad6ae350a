#pragma once
// Stream compaction in logical (row-major) order, for nonzero, masked_select and masked_scatter_
// (compact.cu). Element i of a flag tensor is *selected* when flags[i] != 0; the selected
// elements are numbered 0, 1, ... in order of i. Two launches with the host in between:
//   compact_count: offsets[t] = how many elements tiles 0..t-1 select (tiles of kCompactTile
//                  elements), offsets[tiles] = the total, which the host reads back to size the
//                  result (the one synchronisation of these ops);
//   compact_write: each selected element does its op's write at its number.
// Flags and data are read through kernels/core/layout.h: any strides, broadcast (stride 0) included.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/layout.h"

namespace foo::kernels {

constexpr int64_t kCompactTile = 1024;
FOO_HD int64_t compact_tiles(int64_t numel) { return (numel + kCompactTile - 1) / kCompactTile; }

struct FlagTensor {
  const void* data = nullptr;
  DType dtype = DType::Bool;
  Layout layout;
  int64_t numel = 0;
};

enum class CompactOp : int8_t {
  Nonzero,  // out (int64, [count, ndim] contiguous) row k = the coordinates of selected element k
  Select,   // out[k] = data[i]
  Scatter,  // data[i] = out[k]  (`out` is the source)
};

struct CompactWrite {
  CompactOp op = CompactOp::Nonzero;
  int32_t ndim = 0;                     // Nonzero: the flag tensor's dims, outermost first
  int64_t sizes[kLayoutMaxDims] = {};
  void* data = nullptr;                 // Select/Scatter: the tensor read or written at element i
  Layout data_layout;
  int32_t element_size = 0;             // Select/Scatter: bytes per element of data and out
  void* out = nullptr;
};

}  // namespace foo::kernels

// `offsets` holds compact_tiles(flags.numel) + 1 int64 of device memory.
FOO_DECLARE_KERNEL(void, compact_count, (Stream stream, const FlagTensor& flags, int64_t* offsets))
FOO_DECLARE_KERNEL(void, compact_write, (Stream stream, const FlagTensor& flags, const int64_t* offsets,
                                         const CompactWrite& write))
