#pragma once
// ctc_loss (ctc_loss.cu): the connectionist temporal classification loss of Graves et al. (2006)
// in log space, forward (alpha recursion) and backward (beta recursion and the gradient with
// respect to log_probs), with the formulas and the summation order of ATen's CPU kernels
// (aten/src/ATen/native/LossCTC.cpp). One block per batch element, its threads over the extended
// target positions s in [0, 2 * target_length] (blank, label, blank, ...), a barrier per time step.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

// Float tensors have `dtype` (Float32 or Float64); targets `target_dtype` (Int32 or Int64).
struct CtcLossArgs {
  DType dtype, target_dtype;
  int64_t batch_size, max_input_length, num_labels, blank;
  // log_probs [max_input_length, batch_size, num_labels], strides in elements.
  const void* log_probs;
  int64_t lp_stride_t, lp_stride_b, lp_stride_c;
  // Batch element b's target k is targets[offset_b + k * target_stride].
  const void* targets;
  int64_t target_stride;
  // Device int64 [3, batch_size]: input lengths, target lengths, target offsets (in elements).
  const int64_t* lengths;
  // log_alpha [batch_size, max_input_length, la_positions] contiguous; neg_log_likelihood
  // [batch_size] contiguous.
  int64_t la_positions;
  void* log_alpha;
  void* neg_log_likelihood;
  // Backward: grad_out [batch_size] (stride in elements), log_beta scratch shaped as log_alpha,
  // grad [max_input_length, batch_size, num_labels] contiguous; label_scratch int64
  // [batch_size, num_labels + la_positions] (where each label last occurs in the target, and
  // each target position's previous occurrence of its label).
  const void* grad_out;
  int64_t grad_out_stride;
  void* log_beta;
  void* grad;
  int64_t* label_scratch;
  bool zero_infinity;
};

}  // namespace foo::kernels

// Writes neg_log_likelihood and all of log_alpha: -inf where t >= input length or
// s > 2 * target length (the CPU leaves those entries uninitialised, CUDA writes -inf), and every
// entry of an element whose input length is 0 (its loss is 0 for an empty target, else inf).
FOO_DECLARE_KERNEL(void, ctc_loss_forward, (Stream stream, const CtcLossArgs& a))
// Writes all of grad: the CPU's (exp(lp) - exp(log(sum alpha beta) + nll - lp)) * grad_out for
// t < input length, 0 after; an element with nll == inf is all zeros when zero_infinity.
FOO_DECLARE_KERNEL(void, ctc_loss_backward, (Stream stream, const CtcLossArgs& a))
