#pragma once
// Host side of kernels/ops/indexing.h: turns an at::TensorIterator laid out as the index kernels
// want it (operand 0 written, operand 1 read unless a value is scattered, then the index tensors)
// into an IndexGeometry and launches; an index out of range is reported on the device
// (kernels/core/device_error.h) and raised at the host's next wait (runtime/device_error.h).
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include <optional>

#include "kernels/core/device_error.h"
#include "kernels/ops/indexing.h"

namespace foo::native {

// Which op an index out of range is reported for, and as which of the CPU's errors.
struct IndexReport {
  const char* op;  // a literal
  foo::kernels::DeviceErrorKind kind;
  int64_t dim = -1;  // reported as the dimension (gather/scatter); -1: the index tensor's number
};

struct IndexMove {
  foo::kernels::IndexMode mode;
  at::ScalarType dtype;                // of the moved elements
  at::DimVector indexed_sizes;         // bound of each index tensor
  at::DimVector indexed_strides;       // in bytes, of the indexed tensor (read for a gather, written for a scatter)
  bool wrap_negative = false;          // -1 means the last element (index.Tensor, index_put_)
  std::optional<at::Scalar> value;     // scatter this value: the iterator has no read operand
  IndexReport error;                   // how an index out of range is reported
};

// Runs the move over `iter` without waiting for the device: an index out of range is never used;
// the kernel records it in the device's error word and the op's Python error is raised at the
// next synchronisation, or at once under TORCH_FOO_LAUNCH_BLOCKING=1 (CUDA asserts on the device
// and loses the context; foo's device stays usable).
void run_index_move(const at::TensorIteratorBase& iter, const IndexMove& move);

// A 1-D (or 0-d) index laid along dim `dim` of `shape`: stride 0 in every other dim.
at::Tensor index_along(const at::Tensor& index, int64_t dim, at::IntArrayRef shape);

// Iterator over [written, read?, indices...] with nothing checked or resized: the index ops
// check their arguments themselves and write through stride-0 (restrided) views.
at::TensorIterator index_iterator(const at::Tensor& written, const std::optional<at::Tensor>& read,
                                  at::TensorList indices);

}  // namespace foo::native
