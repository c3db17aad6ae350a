#pragma once
// Multi-tensor kernels (foreach.cu) for torch._foreach_* and the fused optimizers: one launch
// covers every tensor of a list. The host writes a table of the tensors (pointers, sizes, a
// per-tensor scalar) into device memory; each block walks chunks of kForeachChunk elements and
// finds its tensor by binary search over the table's chunk offsets.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int kForeachLists = 6;           // pointwise ops: list 0 is written, lists 1..3 read
constexpr int64_t kForeachChunk = 4096;    // elements of a tensor one block handles per step

// One row of the device table.
struct ForeachTensor {
  char* data[kForeachLists];  // null past the op's lists
  int64_t numel;
  int64_t first_chunk;        // sum of the chunks of the tensors before this one
  double scalar;              // ForeachScalar::PerTensor: this tensor's scalar
};

// out = f(a, b, c) with a, b, c lists 1, 2, 3 and s the scalar (every list has one dtype).
enum class ForeachOp : int32_t {
  AddScalar,  // a + s
  MulScalar,  // a * s
  DivScalar,  // a / s
  AddList,    // a + alpha * b
  MulList,    // a * b
  DivList,    // a / b
  Maximum,    // max(a, b), NaN propagates
  Sqrt,       // sqrt(a)
  Neg,        // -a
  Zero,       // 0
  Lerp,       // lerp(a, b, s)
  LerpList,   // lerp(a, b, c)
  Addcmul,    // a + s * b * c
  Addcdiv,    // a + s * b / c
};

enum class ForeachScalar : int32_t {
  Value,      // `scalar`
  PerTensor,  // the table row's scalar
  Device,     // *device_scalar, a device value of opmath_t (a 0-d tensor)
};

struct ForeachArgs {
  ForeachOp op;
  ForeachScalar scalar_from;
  double scalar;
  double alpha;
  const void* device_scalar;
  const ForeachTensor* table;  // device memory
  int32_t tensors;
  int64_t chunks;              // total over the table
};

// Adam / AdamW (fused=True) over the table's lists 0..5: params, grads, exp_avgs, exp_avg_sqs,
// max_exp_avg_sqs (amsgrad; else null), steps (a device float32 0-d tensor per param, read only).
struct AdamArgs {
  const ForeachTensor* table;
  int32_t tensors;
  int64_t chunks;
  double lr, beta1, beta2, weight_decay, eps;
  const float* lr_tensor;   // tensor_lr overload: a device float32, else null
  const float* grad_scale;  // device float32 or null: grads are divided by it (and stored so)
  const float* found_inf;   // device float32 or null: nonzero skips the step
  bool amsgrad, maximize, decoupled;  // decoupled: AdamW
};

// SGD (fused=True) over lists 0..2: params, grads, momentum buffers (null when momentum == 0).
struct SgdArgs {
  const ForeachTensor* table;
  int32_t tensors;
  int64_t chunks;
  double weight_decay, momentum, lr, dampening;
  const float* grad_scale;  // as AdamArgs
  const float* found_inf;
  bool nesterov, maximize, is_first_step;  // is_first_step: the buffers take the gradient
};

// Adagrad (fused=True) over lists 0..3: params, grads, state sums, steps (device float32, already
// incremented by torch.optim).
struct AdagradArgs {
  const ForeachTensor* table;
  int32_t tensors;
  int64_t chunks;
  double lr, lr_decay, weight_decay, eps;
  const float* grad_scale;  // as AdamArgs
  const float* found_inf;
  bool maximize;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, foreach_pointwise, (Stream, DType dtype, const ForeachArgs& args))
// Norms of each tensor of list 1 written as 0-d tensors of list 0 (same dtype): ord 1, 2 or
// infinity. `partials`: `args.chunks` doubles of device memory.
FOO_DECLARE_KERNEL(void, foreach_norm, (Stream, DType dtype, const ForeachArgs& args, double ord, double* partials))
FOO_DECLARE_KERNEL(void, fused_adam, (Stream, DType dtype, const AdamArgs& args))
FOO_DECLARE_KERNEL(void, fused_sgd, (Stream, DType dtype, const SgdArgs& args))
FOO_DECLARE_KERNEL(void, fused_adagrad, (Stream, DType dtype, const AdagradArgs& args))
