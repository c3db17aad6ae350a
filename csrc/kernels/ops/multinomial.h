#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// torch.multinomial: n_rows distributions of n_cat non-negative weights (probs, contiguous,
// floating dtype), n_sample draws each into out (int64, contiguous [n_rows, n_sample]). One block
// per row; draws come from Philox as in random.h (element e takes uniform e % 2 of counter e / 2).
//   with replacement:    the block writes the row's running sums (double) into scratch, then
//                        sample j of row r takes the uniform of element r * n_sample + j and picks
//                        the first category whose running sum exceeds u * total.
//   without replacement: key_c = p_c / E_c, E_c = -log(1 - u) (Exp(1)) of element r * n_cat + c;
//                        the n_sample largest keys in decreasing order (ties: lower index): the
//                        exponential trick PyTorch's CPU and CUDA kernels use, with a selection
//                        instead of topk.
// scratch: n_rows * n_cat doubles. *error (a device int the host zeroed) gets bit 1 for an inf,
// nan or negative weight, bit 2 for a row whose weights sum to 0; the host raises the CPU's
// messages.
FOO_DECLARE_KERNEL(void, multinomial, (Stream stream, DType dtype, const void* probs, int64_t n_rows, int64_t n_cat,
                                       int64_t n_sample, bool replacement, uint64_t seed, uint64_t offset,
                                       double* scratch, int64_t* out, int* error))
