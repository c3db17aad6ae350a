#pragma once
// Device-side error reporting, as CUDA's device asserts but recoverable: a kernel that meets bad
// input (an index out of range, a target out of bounds, a probability outside [0, 1]) never uses
// it and records the first such error of the device in the device's error word; the op returns
// without waiting. The host reads the word at the next point that waits for the device anyway
// (runtime/device_error.h: torch.foo.synchronize, .cpu()/.item(), Stream/Event synchronize) and
// raises the CPU's Python error there, naming the op; then the word is cleared.
//
// The word is plain device memory (kDeviceErrorWords 64-bit words per device), written only
// through report_device_error:
//   [0] state: 0 none, 1 being written, 2 complete (first error wins: atomicCAS 0 -> 1)
//   [1] op (the host's number for the op's name)   [2] kind (DeviceErrorKind)
//   [3] value (the offending index or target)      [4] dim   [5] size
// Kernels take a DeviceErrorSite by value; the host makes it (runtime/device_error.h) and kernels
// report through device_error.cuh. This header has no device code: the host side includes it.
#include <cstdint>

namespace foo::kernels {

constexpr int kDeviceErrorWords = 6;

// What went wrong; the host turns each into the CPU's exception type and message.
enum class DeviceErrorKind : int32_t {
  None = 0,
  IndexOutOfRangeInSelf = 1,  // IndexError "index out of range in self" (index_select, embedding, index_add)
  IndexOutOfBoundsDim = 2,    // RuntimeError "index V is out of bounds for dimension D with size S" (gather, scatter)
  IndexOutOfBoundsIndex = 3,  // IndexError, the same words (index.Tensor, index_put_: D numbers the index tensors)
  EmbeddingBackwardIndex = 4, // IndexError "embedding_dense_backward: index V is out of range for S embeddings"
  TargetOutOfBounds = 5,      // IndexError "Target V is out of bounds." (nll_loss, cross_entropy)
  BceInputRange = 6,          // RuntimeError "all elements of input should be between 0 and 1"
  BceTargetRange = 7,         // RuntimeError "all elements of target should be between 0 and 1"
  BernoulliProbability = 8,   // RuntimeError "Expected p_in >= 0 && p_in <= 1 to be true, but got false."
  MultiMarginTarget = 9,      // RuntimeError "target out of range" (multi_margin_loss)
  MultilabelMarginTarget = 10,  // RuntimeError "argument #2 'target' is out of range" (multilabel_margin_loss)
};

struct DeviceErrorSite {
  unsigned long long* word = nullptr;  // the device's error word
  int32_t op = 0;                      // runtime/device_error.h numbers op names
  DeviceErrorKind kind = DeviceErrorKind::None;
  int64_t dim = -1;  // reported as the dim when >= 0 (gather/scatter's dim), else the kernel's own
};

}  // namespace foo::kernels
