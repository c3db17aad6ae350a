#pragma once
// embedding_bag (embedding_bag.cu): reductions of bags of embedding rows and their gradients.
// Bag b holds the indices at positions [offsets[b], offsets[b + 1]) (the last bag up to the end of
// `indices`), as the CPU's offset2bag says. Nothing is read back by the host: an index outside
// [0, num_weights) never touches memory; the forward makes its bag's output row NaN (the CPU
// raises, which needs a synchronisation), the backward kernels skip it.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

enum class BagMode : int8_t { Sum = 0, Mean = 1, Max = 2 };  // ATen's mode numbers

// Every index-like tensor (indices, offsets, offset2bag, bag_size, max_indices, counts) has
// `index_dtype` (Int32 or Int64) and is contiguous; float tensors have `dtype` unless noted.
struct EmbeddingBagArgs {
  DType dtype, index_dtype;
  BagMode mode;
  int64_t num_weights, width, num_indices, num_bags;
  int64_t padding_idx;  // indices equal to it are left out of their bag (-1: none)
  const void* weight;   // [num_weights, width], strides in elements
  int64_t weight_stride0, weight_stride1;
  const void* indices;
  const void* offsets;               // num_bags starts
  const void* per_sample_weights;    // sum mode, or null; stride in elements
  int64_t psw_stride;
  // Forward results, contiguous: output [num_bags, width]; for mean and max bag_size [num_bags]
  // (the bag's indices other than padding_idx) and max_indices ([num_bags] = bag_size for mean;
  // [num_bags, width] for max: the row each maximum came from, 0 in an empty bag).
  void* output;
  void* bag_size;
  void* max_indices;
  // Backward inputs: grad [num_bags, width] contiguous, offset2bag [num_indices], counts
  // [num_weights] (int64, scale_grad_by_freq) or null.
  const void* grad;
  const void* offset2bag;
  const void* counts;
  // Backward results: grad_weight [num_weights, width] in opmath_t of dtype (float for 16-bit),
  // zeroed by the caller and accumulated with atomics; grad_psw [num_indices].
  void* grad_weight;
  void* grad_psw;
};

}  // namespace foo::kernels

// offset2bag[i] = the last bag b < num_bags with offsets[b] <= i (-1 before the first), what the
// CPU's cumulative count of offsets gives.
FOO_DECLARE_KERNEL(void, embedding_bag_offset2bag,
                   (Stream stream, DType index_dtype, const void* offsets, int64_t num_offsets, int64_t num_indices,
                    void* offset2bag))
FOO_DECLARE_KERNEL(void, embedding_bag_forward, (Stream stream, const EmbeddingBagArgs& a))
// How often each row is indexed (int64 counts, zeroed by the caller), for scale_grad_by_freq.
FOO_DECLARE_KERNEL(void, embedding_bag_count, (Stream stream, const EmbeddingBagArgs& a, int64_t* counts))
// grad_weight of sum/mean (by offset2bag) or max (by max_indices, non-empty bags only).
FOO_DECLARE_KERNEL(void, embedding_bag_backward, (Stream stream, const EmbeddingBagArgs& a))
// grad_psw[i] = <grad[offset2bag[i]], weight[indices[i]]>, 0 for padding_idx.
FOO_DECLARE_KERNEL(void, embedding_bag_psw_backward, (Stream stream, const EmbeddingBagArgs& a))
