#pragma once
// Normalisation kernels (norm.cu): layer norm, group norm and RMS norm over the rows of a
// contiguous [rows, cols] array, and batch norm over the channels of an [N, C, S] array.
//
// Element types: `dtype` for the data (x, y and their gradients) and `param_dtype` for the
// per-channel or per-row tensors (weight, bias, mean, rstd/invstd, running statistics): the same
// dtype, or float32 with 16-bit data (the CPU's "mixed" case); batch norm's saved statistics are
// in the accumulation dtype instead. Sums accumulate in float (double for float64); variances are
// two-pass (the mean first, then the squared deviations).
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

// Row normalisation. Row r, column j of x is x[r * cols + j]; its weight and bias are at
//   (r % groups) * (cols / inner) + j / inner
// so layer norm is groups = inner = 1 (a weight per column) and group norm is rows = N * G,
// cols = C / G * HxW, groups = G, inner = HxW (a weight per channel).
struct RowNormArgs {
  DType dtype, param_dtype;
  int64_t rows, cols, groups, inner;
  double eps;
  bool rms;  // RMS norm: no mean is subtracted (mean is not written); rstd = 1 / sqrt(mean(x^2) + eps)
  const void* x;
  const void* weight;  // or null (1)
  const void* bias;    // or null (0)
  void* y;
  void* mean;  // [rows], param_dtype (null for rms)
  void* rstd;  // [rows], param_dtype
};

// Backward of RowNormArgs' forward given its saved mean and rstd. grad_input, grad_weight and
// grad_bias may each be null (not wanted). grad_weight and grad_bias have groups * cols / inner
// elements.
struct RowNormBackwardArgs {
  DType dtype, param_dtype;
  int64_t rows, cols, groups, inner;
  bool rms;
  const void* grad_out;
  const void* x;
  const void* mean;  // ignored for rms
  const void* rstd;
  const void* weight;  // or null
  void* grad_input;
  void* grad_weight;
  void* grad_bias;
};

// Batch norm over an [n, c, s] array: element (i, ch, k) of a tensor t at t.data[i*t.sn + ch*t.sc + k*t.ss].
struct ChannelTensorRef {
  const void* data;
  int64_t sn, sc, ss;
};

// Training: per-channel mean and biased variance over (n, s); save_mean and save_invstd
// (1 / sqrt(var + eps)) written; running_mean/var (if not null) become
// momentum * batch + (1 - momentum) * running, with the unbiased variance.
// Evaluation: mean and invstd come from the running statistics and are written to save_mean and
// save_invstd (CUDA's convention); running_mean/var are left alone.
// y = (x - mean) * invstd * weight + bias.
struct BatchNormArgs {
  DType dtype, param_dtype;
  int64_t n, c, s;
  bool training;
  double momentum, eps;
  ChannelTensorRef x, y;  // y.data is written
  const void* weight;     // or null
  const void* bias;       // or null
  void* running_mean;     // or null
  void* running_var;      // or null
  void* save_mean;        // written, in the accumulation dtype (float32 for 16-bit data, as CUDA):
  void* save_invstd;      // the batch statistics, or in evaluation the running ones
};

// Gradients of batch norm. Training: mean/invstd are the saved statistics and the batch
// statistics' own gradients are included; evaluation: mean/invstd come from running_mean and
// running_var (invstd = 1 / sqrt(var + eps)). grad_input, grad_weight, grad_bias may be null.
struct BatchNormBackwardArgs {
  DType dtype, param_dtype;
  int64_t n, c, s;
  bool training;
  double eps;
  ChannelTensorRef grad_out, x, grad_input;  // grad_input.data is written (or null)
  const void* weight;                        // or null
  const void* mean;                          // save_mean (training) or running_mean, both in the
  const void* invstd_or_var;                 // accumulation dtype; save_invstd or running_var
  void* grad_weight;
  void* grad_bias;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, row_norm_forward, (Stream stream, const RowNormArgs& args))
FOO_DECLARE_KERNEL(void, row_norm_backward, (Stream stream, const RowNormBackwardArgs& args))
FOO_DECLARE_KERNEL(void, batch_norm_forward, (Stream stream, const BatchNormArgs& args))
FOO_DECLARE_KERNEL(void, batch_norm_backward, (Stream stream, const BatchNormBackwardArgs& args))
