#pragma once
#include "kernels/dispatch.h"
#include "kernels/dtype.h"

// torch.randperm: element i gets the 64-bit random key (r0 << 32 | r1 or r2 << 32 | r3 of Philox
// counter i / 2, as random.h), the (key, i) pairs are sorted (a bitonic sort over global memory,
// padded to a power of two with pairs that sort last), and out[j] = the index of the j-th pair,
// cast to out's dtype. Ties of keys break by index, so the permutation is a function of
// (seed, offset, n) alone. keys and indices: scratch of next_pow2(n) elements each. out is
// contiguous. A general device sort (wip/index) could replace the bitonic passes.
FOO_DECLARE_KERNEL(void, randperm, (Stream stream, DType dtype, int64_t n, uint64_t seed, uint64_t offset,
                                    uint64_t* keys, int64_t* indices, void* out))
