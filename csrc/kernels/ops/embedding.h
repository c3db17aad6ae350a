#pragma once
// embedding_renorm_'s row scaling (embedding.cu): each listed row of a [rows, width] table
// (strides in elements) whose norm_type-norm exceeds max_norm is scaled by
// max_norm / (norm + 1e-7), as the CPU does. `rows` lists n distinct row numbers.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

FOO_DECLARE_KERNEL(void, renorm_rows, (Stream stream, DType dtype, void* table, int64_t row_stride,
                                       int64_t col_stride, int64_t width, const int64_t* rows, int64_t n,
                                       double max_norm, double norm_type))
