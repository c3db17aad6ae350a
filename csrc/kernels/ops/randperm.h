#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// torch.randperm's keys: element i gets the 64-bit random key (r0 << 32 | r1 or r2 << 32 | r3 of
// Philox counter i / 2, as random.h), stored with its top bit flipped so that signed int64 order
// is the keys' unsigned order. The host sorts (key, i) pairs with the device sort (sort.h: ties
// break by index), so the permutation is a function of (seed, offset, n) alone.
FOO_DECLARE_KERNEL(void, randperm_keys, (Stream stream, int64_t n, uint64_t seed, uint64_t offset, int64_t* keys))
