#pragma once
// Host side of kernels/indexing.h: turns an at::TensorIterator laid out as the index kernels
// want it (operand 0 written, operand 1 read unless a value is scattered, then the index tensors)
// into an IndexGeometry, launches, and raises the op's own error for an index out of range.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include <functional>
#include <optional>

#include "kernels/indexing.h"

namespace foo::native {

struct IndexMove {
  foo::kernels::IndexMode mode;
  at::ScalarType dtype;                // of the moved elements
  at::DimVector indexed_sizes;         // bound of each index tensor
  at::DimVector indexed_strides;       // in bytes, of the indexed tensor (read for a gather, written for a scatter)
  bool wrap_negative = false;          // -1 means the last element (index.Tensor, index_put_)
  std::optional<at::Scalar> value;     // scatter this value: the iterator has no read operand
  // Raises the op's error for index tensor k holding `value` out of range.
  std::function<void(int64_t value, int64_t k)> out_of_range;
};

// Runs the move over `iter`. Reading back the kernel's error slot waits for the device (one
// synchronisation per call, skipped when there is nothing to move): an index out of range
// raises the op's Python error instead of touching memory (CUDA would assert on the device and
// lose the context).
void run_index_move(const at::TensorIteratorBase& iter, const IndexMove& move);

// A 1-D (or 0-d) index laid along dim `dim` of `shape`: stride 0 in every other dim.
at::Tensor index_along(const at::Tensor& index, int64_t dim, at::IntArrayRef shape);

// Iterator over [written, read?, indices...] with nothing checked or resized: the index ops
// check their arguments themselves and write through stride-0 (restrided) views.
at::TensorIterator index_iterator(const at::Tensor& written, const std::optional<at::Tensor>& read,
                                  at::TensorList indices);

}  // namespace foo::native
