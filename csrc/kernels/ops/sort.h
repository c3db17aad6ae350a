#pragma once
// Sorting rows (sort.cu): `rows` contiguous rows of `n` keys each are sorted in place, with the
// original position of every key (int64) carried along, for sort, argsort and topk.
// The order is total and stable: keys compare by value, NaN after every number (before, when
// descending, as the CPU sorts), and equal keys (NaNs included) keep their original order; so
// stable=True and stable=False give the same, reproducible result.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// keys/indices: rows * n elements (the launcher fills indices with 0..n-1 itself); scratch_keys
// and scratch_indices: the same sizes again when n > kSortTile (the merge passes ping-pong),
// else may be null.
namespace foo::kernels {
constexpr int64_t kSortTile = 2048;  // rows up to this long are sorted by one block in shared memory
}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, sort_rows, (Stream stream, DType dtype, void* keys, int64_t* indices, void* scratch_keys,
                                     int64_t* scratch_indices, int64_t rows, int64_t n, bool descending))
