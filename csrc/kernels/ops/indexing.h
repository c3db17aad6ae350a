#pragma once
// Gathers and scatters through index tensors (indexing.cu): the one launcher behind index.Tensor,
// index_select, embedding, gather, index_put_, index_add, scatter/scatter_add/scatter_reduce and
// embedding's backward.
//
// The host describes the loop as ATen's index kernels do, with an at::TensorIterator over
//   operand 0: the written tensor, operand 1: the read tensor (null for a scatter of one value),
//   operands 2..: index tensors (int64 or int32),
// where the *indexed* tensor (the read one for a gather, the written one for a scatter) is
// restrided with stride 0 along its indexed dims. Element i then moves between
//   written[offset_0(i) + (scatter ? extra(i) : 0)] and read[offset_1(i) + (gather ? extra(i) : 0)],
//   extra(i) = sum_k index_k[i] * indexed_strides[k].
// An index outside [-size, size) (wrap_negative) or [0, size) is never used: the kernel reports
// it in the device's error word (device_error.h: the value, dim = k, which index tensor, unless
// the site names the dim, and size = its bound), which the host checks at its next wait.
#include <cstdint>

#include "kernels/core/device_error.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"

namespace foo::kernels {

constexpr int kMaxIndexTensors = 8;
constexpr int kIndexOperands = 2 + kMaxIndexTensors;

enum class IndexMode : int8_t {
  Gather,      // read through the index: written[i] = read[i + extra]
  Scatter,     // write through the index: written[i + extra] = read[i] (duplicates: one of them wins)
  ScatterAdd,  // written[i + extra] += read[i], atomically; ScatterMul, ScatterMax, ScatterMin alike
  ScatterMul,
  ScatterMax,
  ScatterMin,
};

struct IndexGeometry {
  int64_t numel = 0;
  int32_t ndim = 0;
  int32_t nindex = 0;          // index operands, at most kMaxIndexTensors
  bool index32 = false;        // every byte offset fits in 32 bits
  bool wrap_negative = false;  // index.Tensor/index_put_: -1 is the last element
  bool int32_indices = false;  // index operands are int32 (else int64)
  int64_t sizes[kMaxDims] = {};                  // innermost dim first
  int64_t strides[kIndexOperands][kMaxDims] = {};  // in bytes
  char* data[kIndexOperands] = {};
  int64_t indexed_sizes[kMaxIndexTensors] = {};    // bounds of each index
  int64_t indexed_strides[kMaxIndexTensors] = {};  // in bytes, of the indexed tensor
  // Scatter of one value (scatter.value, index_put_ of a host scalar): data[1] is null and the
  // value travels here, already in the element type.
  alignas(8) unsigned char value[8] = {};
};

}  // namespace foo::kernels

// Gather/Scatter move bytes and dispatch on the element size only; the combining modes dispatch
// on `dtype`.
FOO_DECLARE_KERNEL(void, index_move, (Stream stream, IndexMode mode, DType dtype, const IndexGeometry& g,
                                      const DeviceErrorSite& error))
