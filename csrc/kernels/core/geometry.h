#pragma once
// The shape of an elementwise loop as the host's at::TensorIterator computed it (broadcasting,
// dim coalescing and reordering already applied), in plain numbers a kernel can take by value.
#include <cstdint>

#include "kernels/core/int_divider.h"

namespace foo::kernels {

constexpr int kMaxDims = 16;      // the host makes operands contiguous if coalescing leaves more
constexpr int kMaxOperands = 4;   // operand 0 is the output, then up to three inputs

struct ElementwiseGeometry {
  int64_t numel = 0;
  int32_t ndim = 0;
  bool contiguous = false;         // every tensor operand is dense in iteration order
  bool index32 = false;            // every byte offset fits in 32 bits
  int64_t sizes[kMaxDims] = {};    // innermost dim first
  IntDivider32 dividers[kMaxDims] = {};  // of sizes, when index32 (the 32-bit path divides with them)
  int64_t strides[kMaxOperands][kMaxDims] = {};  // in bytes
  char* data[kMaxOperands] = {};   // null for an input that is a host scalar: see scalars
  // A host scalar input (a Python number, a 0-d CPU tensor) travels by value, already converted
  // to the operand's element type, as CUDA kernels take scalars.
  // 16 bytes: a complex128 is the largest.
  alignas(16) unsigned char scalars[kMaxOperands][16] = {};
};

}  // namespace foo::kernels
