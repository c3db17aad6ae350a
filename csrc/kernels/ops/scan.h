#pragma once
// Cumulative sums and products (scan.cu) over a contiguous [outer, size, inner] array along
// `size`: out[o, k, i] = in[o, 0, i] (op) ... (op) in[o, k, i]. `in` and `out` have one dtype
// (the host casts first, as the CPU does); the running value is kept in the CPU's accumulation
// type: double for float32, float for 16-bit floats, int64 for integers (which wrap as the CPU's).
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {
enum class ScanOp : int8_t { Sum, Prod };
}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, scan, (Stream stream, ScanOp op, DType dtype, const void* in, void* out, int64_t outer,
                                int64_t size, int64_t inner))
