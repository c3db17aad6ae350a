// F.ctc_loss / nn.CTCLoss: _ctc_loss and _ctc_loss_backward, each with integer-list lengths and
// with tensor lengths (kernels/ops/ctc_loss.h). ATen's composite ctc_loss above them does the rest
// (targets to the device as int64, zero_infinity's where on the losses, the reduction).
//
// Shapes and argument checks are the CPU's own: its meta kernel (ctc_loss_meta, which shares
// ctc_loss_allocate_outputs with the CPU's kernel) runs on meta tensors of the arguments' sizes and
// strides, so every message is the CPU's. The lengths are host integers; the per-element lengths
// and target offsets reach the device by one host-to-device copy, as CUDA's do. The .Tensor
// overloads copy their length tensors to the host first, as CUDA's ctc_loss_tensor does (a
// synchronisation when they are on foo, as on CUDA); nothing else reads device data back.
//
// log_alpha is fully written: -inf outside t < input_length, s <= 2 * target_length (the CPU
// leaves those entries uninitialised; CUDA writes -inf). Targets of a 1-D (concatenated) layout
// are read at offset * stride; the CPU adds the offsets unscaled, which only matters for a
// non-contiguous 1-D targets tensor (tests/test_ctc_loss.py).
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>

#include <vector>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/ctc_loss.h"
#include "native/ctc_loss.h"
#include "native/ctc_loss_backward.h"
#include "native/ctc_loss_backward_tensor.h"
#include "native/ctc_loss_tensor.h"

namespace foo::native {
namespace {

using foo::kernels::CtcLossArgs;

constexpr uint32_t kCtcTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

at::Tensor meta_like(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

// The dtypes the kernels take, with the CPU's target check where it is not one of them.
void check_dtypes(const at::Tensor& log_probs, const at::Tensor& targets) {
  check_kernel_dtype("ctc_loss", log_probs.scalar_type(), kCtcTypes);
  if (targets.scalar_type() != at::kLong) {
    at::checkScalarType("ctc_loss_allocate_outputs", at::TensorArg(targets, "targets", 2), at::kInt);
  }
}

// Device int64 [3, batch]: input lengths, target lengths, offsets of each element's targets.
at::Tensor lengths_on_device(const at::Tensor& targets, at::IntArrayRef input_lengths,
                             at::IntArrayRef target_lengths, const at::Tensor& like) {
  const int64_t n = static_cast<int64_t>(input_lengths.size());
  std::vector<int64_t> host(3 * n);
  int64_t pos = 0;
  for (int64_t b = 0; b < n; ++b) {
    host[b] = input_lengths[b];
    host[n + b] = target_lengths[b];
    if (targets.dim() == 1) {
      host[2 * n + b] = pos * targets.stride(0);
      pos += target_lengths[b];
    } else {
      host[2 * n + b] = b * targets.stride(0);
    }
  }
  return at::tensor(host, at::TensorOptions().dtype(at::kLong)).to(like.device());
}

CtcLossArgs make_args(const at::Tensor& log_probs, const at::Tensor& targets, const at::Tensor& lengths,
                      int64_t blank, const at::Tensor& log_alpha) {
  CtcLossArgs a{};
  a.dtype = kernel_dtype(log_probs.scalar_type());
  a.target_dtype = kernel_dtype(targets.scalar_type());
  a.max_input_length = log_probs.size(0);
  a.batch_size = log_probs.size(1);
  a.num_labels = log_probs.size(2);
  a.blank = blank;
  a.log_probs = log_probs.const_data_ptr();
  a.lp_stride_t = log_probs.stride(0);
  a.lp_stride_b = log_probs.stride(1);
  a.lp_stride_c = log_probs.stride(2);
  a.targets = targets.const_data_ptr();
  a.target_stride = targets.dim() == 1 ? targets.stride(0) : targets.stride(1);
  a.lengths = lengths.const_data_ptr<int64_t>();
  a.la_positions = log_alpha.size(2);
  return a;
}

std::vector<int64_t> host_lengths(const at::Tensor& lengths, const char* name) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false), name, " must be integral");
  const at::Tensor l = lengths.to(at::Device(at::kCPU), at::kLong).contiguous();
  return std::vector<int64_t>(l.const_data_ptr<int64_t>(), l.const_data_ptr<int64_t>() + l.numel());
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                            int64_t blank, bool zero_infinity) {
  check_dtypes(log_probs, targets);
  TORCH_CHECK(log_probs.numel() > 0, "log_probs tensor must not be empty");  // the CPU's and CUDA's
  // The CPU's other checks and result shapes.
  const auto [meta_nll, meta_alpha] =
      at::_ctc_loss(meta_like(log_probs), meta_like(targets), input_lengths, target_lengths, blank, zero_infinity);
  at::Tensor neg_log_likelihood = at::empty(meta_nll.sizes(), log_probs.options());
  at::Tensor log_alpha = at::empty(meta_alpha.sizes(), log_probs.options());
  if (log_probs.size(1) == 0) return {neg_log_likelihood, log_alpha};
  const at::Tensor lengths = lengths_on_device(targets, input_lengths, target_lengths, log_probs);
  CtcLossArgs a = make_args(log_probs, targets, lengths, blank, log_alpha);
  a.log_alpha = log_alpha.mutable_data_ptr();
  a.neg_log_likelihood = neg_log_likelihood.mutable_data_ptr();
  FOO_CALL_KERNEL(ctc_loss_forward, stream_of(log_probs), a);
  return {neg_log_likelihood, log_alpha};
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs, const at::Tensor& targets,
                                                   const at::Tensor& input_lengths, const at::Tensor& target_lengths,
                                                   int64_t blank, bool zero_infinity) {
  const std::vector<int64_t> il = host_lengths(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = host_lengths(target_lengths, "target_lengths");
  return at::_ctc_loss(log_probs, targets, il, tl, blank, zero_infinity);
}

at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs, const at::Tensor& targets,
                             at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                             const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha_, int64_t blank,
                             bool zero_infinity) {
  // The CPU's backward trusts its forward's arguments; what the kernel reads is checked here.
  check_dtypes(log_probs, targets);
  TORCH_CHECK(log_probs.dim() == 3, "ctc_loss_backward: expected 3-D log_probs, got ", log_probs.dim(), "-D");
  TORCH_CHECK(targets.dim() == 1 || targets.dim() == 2, "ctc_loss_backward: expected 1-D or 2-D targets, got ",
              targets.dim(), "-D");
  const int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  const at::ScalarType dt = log_probs.scalar_type();
  TORCH_CHECK(grad.scalar_type() == dt && neg_log_likelihood.scalar_type() == dt && log_alpha_.scalar_type() == dt,
              "ctc_loss_backward: expected grad, neg_log_likelihood and log_alpha of dtype ", dt, ", got ",
              grad.scalar_type(), ", ", neg_log_likelihood.scalar_type(), " and ", log_alpha_.scalar_type());
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == N && static_cast<int64_t>(target_lengths.size()) == N,
              "ctc_loss_backward: expected ", N, " input and target lengths, got ", input_lengths.size(), " and ",
              target_lengths.size());
  TORCH_CHECK(0 <= blank && blank < C, "blank must be in label range");
  int64_t max_target_length = 0, total = 0;
  for (int64_t b = 0; b < N; ++b) {
    TORCH_CHECK(input_lengths[b] >= 0 && input_lengths[b] <= T && target_lengths[b] >= 0,
                "ctc_loss_backward: lengths out of range for element ", b);
    max_target_length = std::max(max_target_length, target_lengths[b]);
    total += target_lengths[b];
  }
  TORCH_CHECK(targets.dim() == 1 ? targets.size(0) >= total
                                 : targets.size(0) == N && targets.size(1) >= max_target_length,
              "ctc_loss_backward: targets of shape ", targets.sizes(), " do not hold the target lengths");
  TORCH_CHECK(grad.dim() == 1 && grad.size(0) == N && neg_log_likelihood.numel() == N,
              "ctc_loss_backward: expected grad and neg_log_likelihood of ", N, " elements, got ", grad.sizes(),
              " and ", neg_log_likelihood.sizes());
  TORCH_CHECK(log_alpha_.dim() == 3 && log_alpha_.size(0) == N && log_alpha_.size(1) == T &&
                  log_alpha_.size(2) >= 2 * max_target_length + 1,
              "ctc_loss_backward: expected log_alpha of ", N, "x", T, "x", 2 * max_target_length + 1, ", got ",
              log_alpha_.sizes());

  at::Tensor grad_lp = at::empty({T, N, C}, log_probs.options());
  if (grad_lp.numel() == 0) return grad_lp;
  const at::Tensor log_alpha = log_alpha_.contiguous();
  const at::Tensor nll = neg_log_likelihood.contiguous();
  at::Tensor log_beta = at::empty_like(log_alpha, at::MemoryFormat::Contiguous);
  at::Tensor label_scratch = at::empty({N, C + log_alpha.size(2)}, log_probs.options().dtype(at::kLong));
  const at::Tensor lengths = lengths_on_device(targets, input_lengths, target_lengths, log_probs);
  CtcLossArgs a = make_args(log_probs, targets, lengths, blank, log_alpha);
  a.log_alpha = const_cast<void*>(log_alpha.const_data_ptr());  // read only
  a.neg_log_likelihood = const_cast<void*>(nll.const_data_ptr());  // read only
  a.grad_out = grad.const_data_ptr();
  a.grad_out_stride = grad.stride(0);
  a.log_beta = log_beta.mutable_data_ptr();
  a.grad = grad_lp.mutable_data_ptr();
  a.label_scratch = label_scratch.mutable_data_ptr<int64_t>();
  a.zero_infinity = zero_infinity;
  FOO_CALL_KERNEL(ctc_loss_backward, stream_of(log_probs), a);
  return grad_lp;
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad, const at::Tensor& log_probs, const at::Tensor& targets,
                                   const at::Tensor& input_lengths, const at::Tensor& target_lengths,
                                   const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha, int64_t blank,
                                   bool zero_infinity) {
  const std::vector<int64_t> il = host_lengths(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = host_lengths(target_lengths, "target_lengths");
  return at::_ctc_loss_backward(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

}  // namespace foo::native
