// Batch norm: native_batch_norm (+ out=), the _native_batch_norm_legit family (+ out=),
// _batch_norm_with_update, and the backward ops native_batch_norm_backward and batch_norm_backward
// (kernels/ops/norm.h, batch_norm_forward/backward). Running statistics are updated in place in
// training (momentum, unbiased variance, as the CPU) and used in evaluation; the CPU fallback
// could not do this, since it does not write back `Tensor(a!)?` arguments.
//
// Tensors are seen as [N, C, S] with any strides that merge the spatial dims into one (contiguous
// and channels_last both do); other layouts are made contiguous first.
#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <ATen/native/Resize.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/layout.h"
#include "kernels/ops/norm.h"
#include "native/batch_norm_backward.h"
#include "native/batch_norm_with_update.h"
#include "native/batch_norm_with_update_out.h"
#include "native/native_batch_norm_backward.h"
#include "native/native_batch_norm_legit.h"
#include "native/native_batch_norm_legit_no_stats.h"
#include "native/native_batch_norm_legit_no_stats_out.h"
#include "native/native_batch_norm_legit_out.h"
#include "native/native_batch_norm_out.h"

namespace foo::native {
namespace {

using foo::kernels::ChannelTensorRef;

at::Tensor defined_or_empty(const std::optional<at::Tensor>& t) { return t.has_value() ? *t : at::Tensor(); }

// t as [N, C, S] (S: the spatial dims merged), or nullopt when its spatial dims do not merge.
std::optional<ChannelTensorRef> channel_view(const at::Tensor& t) {
  ChannelTensorRef r{t.const_data_ptr(), t.stride(0), t.stride(1), 1};
  int64_t expected = -1;  // the stride the next-outer spatial dim must have
  bool first = true;
  for (int64_t d = t.dim() - 1; d >= 2; --d) {
    if (t.size(d) == 1) continue;
    if (first) {
      r.ss = t.stride(d);
      first = false;
    } else if (t.stride(d) != expected) {
      return std::nullopt;
    }
    expected = t.stride(d) * t.size(d);
  }
  return r;
}

// t itself if it has a channel view, else a copy in its suggested memory format.
at::Tensor viewable(const at::Tensor& t) {
  return channel_view(t) ? t : t.contiguous(t.suggest_memory_format());
}

int64_t spatial_numel(const at::Tensor& t) {
  int64_t s = 1;
  for (int64_t d = 2; d < t.dim(); ++d) s *= t.size(d);
  return s;
}


// Checks the per-channel tensors and returns their dtype: the input's, or float32 with a 16-bit
// input (the CPU's mixed case).
at::ScalarType check_params(const char* op, const at::Tensor& input, std::initializer_list<const at::Tensor*> params,
                            std::initializer_list<const char*> names) {
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input of at least 2 dims (N, C, ...), but got ", input.dim(), "-d");
  const auto t = input.scalar_type();
  check_kernel_dtype(op, t, foo::kernels::kFloatingTypes);
  const int64_t c = input.size(1);
  std::optional<at::ScalarType> p;
  auto name = names.begin();
  for (const at::Tensor* q : params) {
    const char* n = *name++;
    if (!q->defined()) continue;
    TORCH_CHECK(q->numel() == c, n, " should contain ", c, " elements not ", q->numel());
    if (!p) p = q->scalar_type();
    TORCH_CHECK(q->scalar_type() == *p, op, ": expected all parameters and statistics of one dtype, but ", n, " is ",
                q->scalar_type(), " and others ", *p);
  }
  if (!p || *p == t) return t;
  TORCH_CHECK(*p == at::kFloat && (t == at::kHalf || t == at::kBFloat16), op,
              ": expected parameters and statistics of dtype ", t, " (the input's), or float32 with a float16/bfloat16 ",
              "input, but got ", *p);
  return at::kFloat;
}

// The per-channel tensors must be contiguous vectors for the kernel; running statistics are
// written in place, so a non-contiguous one is updated through a copy.
at::Tensor vector_of(const at::Tensor& t) { return t.defined() ? t.contiguous() : t; }
void write_back(const at::Tensor& dst, const at::Tensor& written) {
  if (dst.defined() && !written.is_same(dst)) dst.copy_(written);
}

// Core: y (input-shaped), save_mean and save_invstd ([C], the accumulation dtype) allocated by
// the caller.
void batch_norm_into(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                     const at::Tensor& running_mean, const at::Tensor& running_var, bool training, double momentum,
                     double eps, at::ScalarType param, const at::Tensor& y, const at::Tensor& save_mean,
                     const at::Tensor& save_invstd) {
  const at::Tensor x = viewable(input);
  const bool y_ok = channel_view(y).has_value();
  const at::Tensor target = y_ok ? y : at::empty_like(x, x.suggest_memory_format());
  const at::Tensor rm = vector_of(running_mean), rv = vector_of(running_var);
  foo::kernels::BatchNormArgs a{};
  a.dtype = kernel_dtype(x.scalar_type());
  a.param_dtype = kernel_dtype(param);
  a.n = x.size(0);
  a.c = x.size(1);
  a.s = spatial_numel(x);
  a.training = training;
  a.momentum = momentum;
  a.eps = eps;
  a.x = *channel_view(x);
  a.y = *channel_view(target);
  const at::Tensor w = vector_of(weight), b = vector_of(bias);
  a.weight = ptr_or_null(w);
  a.bias = ptr_or_null(b);
  a.running_mean = mutable_ptr_or_null(rm);
  a.running_var = mutable_ptr_or_null(rv);
  a.save_mean = save_mean.mutable_data_ptr();
  a.save_invstd = save_invstd.mutable_data_ptr();
  FOO_CALL_KERNEL(batch_norm_forward, stream_of(x), a);
  if (!target.is_same(y)) y.copy_(target);
  if (training) {
    write_back(running_mean, rm);
    write_back(running_var, rv);
  }
}

void check_forward(const char* op, const at::Tensor& input, const at::Tensor& running_mean,
                   const at::Tensor& running_var, bool training) {
  TORCH_CHECK(input.numel() != 0, "input tensor must have at least one element, but got input_sizes = ",
              input.sizes());
  if (!training) {
    TORCH_CHECK(running_mean.defined() && running_var.defined(), op,
                ": running_mean and running_var must be defined in evaluation mode");
  }
}

// A saved statistic: [C] in the accumulation dtype (float32 for 16-bit inputs), as CUDA and ATen's
// meta off the CPU, in evaluation too (the CPU: the parameters' dtype, 0 elements in evaluation;
// docs/decisions.md). Returns the buffer the kernel writes: `t` itself, or when an out= tensor of
// another floating dtype was given, a new one copied into it afterwards.
at::Tensor saved_stat(at::Tensor& t, const at::Tensor& input) {
  const auto options = input.options().dtype(at::toOpMathType(input.scalar_type()));
  if (!t.defined()) {
    t = at::empty({input.size(1)}, options);
    return t;
  }
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "Expected out tensor to have a floating dtype, but got ", t.dtype(),
              " instead");
  at::native::resize_output(t, {input.size(1)});
  return t.scalar_type() == options.dtype().toScalarType() ? t : at::empty({input.size(1)}, options);
}

// The outputs of a forward call: `out`-style tensors are resized, undefined ones allocated.
void prepare(at::Tensor& t, at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!t.defined()) {
    t = at::empty(sizes, options);
    return;
  }
  TORCH_CHECK(t.scalar_type() == c10::typeMetaToScalarType(options.dtype()), "Expected out tensor to have dtype ",
              options.dtype(), ", but got ", t.dtype(), " instead");
  at::native::resize_output(t, sizes);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_outputs(
    const char* op, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
    const at::Tensor& running_mean, const at::Tensor& running_var, bool training, double momentum, double eps,
    at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  const auto param = check_params(op, input, {&weight, &bias, &running_mean, &running_var},
                                  {"weight", "bias", "running_mean", "running_var"});
  check_forward(op, input, running_mean, running_var, training);
  if (out.defined()) {
    prepare(out, input.sizes(), input.options());
  } else {
    out = at::empty_like(input, input.suggest_memory_format());
  }
  const at::Tensor mean = saved_stat(save_mean, input), invstd = saved_stat(save_invstd, input);
  batch_norm_into(input, weight, bias, running_mean, running_var, training, momentum, eps, param, out, mean, invstd);
  write_back(save_mean, mean);
  write_back(save_invstd, invstd);
  return {out, save_mean, save_invstd};
}

// Core of the backward ops: the wanted gradients allocated by the caller, others undefined.
// mean/invstd_or_var: save_mean/save_invstd in training, running_mean/running_var otherwise.
void batch_norm_backward_into(const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
                              const at::Tensor& mean, const at::Tensor& invstd_or_var, bool training, double eps,
                              at::ScalarType param, const at::Tensor& grad_input, const at::Tensor& grad_weight,
                              const at::Tensor& grad_bias) {
  const at::Tensor x = viewable(input), dy = viewable(grad_out);
  const bool gi_ok = !grad_input.defined() || channel_view(grad_input).has_value();
  const at::Tensor gi = gi_ok ? grad_input : at::empty_like(x, x.suggest_memory_format());
  const auto acc = at::toOpMathType(x.scalar_type());
  const at::Tensor w = vector_of(weight), m = mean.to(acc).contiguous(), v = invstd_or_var.to(acc).contiguous();
  foo::kernels::BatchNormBackwardArgs a{};
  a.dtype = kernel_dtype(x.scalar_type());
  a.param_dtype = kernel_dtype(param);
  a.n = x.size(0);
  a.c = x.size(1);
  a.s = spatial_numel(x);
  a.training = training;
  a.eps = eps;
  a.grad_out = *channel_view(dy);
  a.x = *channel_view(x);
  a.grad_input = gi.defined() ? *channel_view(gi) : ChannelTensorRef{nullptr, 0, 0, 0};
  a.weight = ptr_or_null(w);
  a.mean = m.const_data_ptr();
  a.invstd_or_var = v.const_data_ptr();
  a.grad_weight = mutable_ptr_or_null(grad_weight);
  a.grad_bias = mutable_ptr_or_null(grad_bias);
  FOO_CALL_KERNEL(batch_norm_backward, stream_of(x), a);
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward_impl(
    const char* op, const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const at::Tensor& running_mean, const at::Tensor& running_var, const at::Tensor& save_mean,
    const at::Tensor& save_invstd, bool train, double eps, std::array<bool, 3> output_mask) {
  // In evaluation the saved statistics (the running ones, as CUDA returns them; 0 elements from
  // the CPU) are unused: the running statistics are read. Saved statistics may come in the
  // accumulation dtype (foo's and CUDA's forward) or the parameters' (the CPU's): both are widened.
  const auto param = check_params(op, input, {&weight, &running_mean, &running_var},
                                  {"weight", "running_mean", "running_var"});
  TORCH_CHECK(grad_out.scalar_type() == input.scalar_type(), op, ": expected grad_out of dtype ", input.scalar_type(),
              ", but got ", grad_out.scalar_type());
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out of shape ", grad_out.sizes(),
              " does not match the input's ", input.sizes());
  const at::Tensor& mean = train ? save_mean : running_mean;
  const at::Tensor& stat = train ? save_invstd : running_var;
  TORCH_CHECK(mean.defined() && stat.defined(), op, ": ",
              train ? "save_mean and save_invstd" : "running_mean and running_var", " must be defined when train is ",
              train ? "true" : "false");
  TORCH_CHECK(mean.numel() == input.size(1) && stat.numel() == input.size(1) && at::isFloatingType(mean.scalar_type()) &&
                  at::isFloatingType(stat.scalar_type()),
              op, ": expected save_mean and save_invstd of ", input.size(1), " floating elements, but got ",
              mean.sizes(), " ", mean.scalar_type(), " and ", stat.sizes(), " ", stat.scalar_type());
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = at::empty_like(input, input.suggest_memory_format());
  if (output_mask[1]) grad_weight = at::empty({input.size(1)}, input.options().dtype(param));
  if (output_mask[2]) grad_bias = at::empty({input.size(1)}, input.options().dtype(param));
  if (input.numel() == 0) {
    if (grad_weight.defined()) grad_weight.zero_();
    if (grad_bias.defined()) grad_bias.zero_();
    return {grad_input, grad_weight, grad_bias};
  }
  batch_norm_backward_into(grad_out, input, weight, mean, stat, train, eps, param, grad_input, grad_weight, grad_bias);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> native_batch_norm_out(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  return batch_norm_outputs("native_batch_norm", input, defined_or_empty(weight), defined_or_empty(bias),
                            defined_or_empty(running_mean), defined_or_empty(running_var), training, momentum, eps,
                            out, save_mean, save_invstd);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps) {
  at::Tensor out, save_mean, save_invstd;
  batch_norm_outputs("_native_batch_norm_legit", input, defined_or_empty(weight), defined_or_empty(bias), running_mean,
                     running_var, training, momentum, eps, out, save_mean, save_invstd);
  return {out, save_mean, save_invstd};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> native_batch_norm_legit_out(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps, at::Tensor& out,
    at::Tensor& save_mean, at::Tensor& save_invstd) {
  return batch_norm_outputs("_native_batch_norm_legit", input, defined_or_empty(weight), defined_or_empty(bias),
                            running_mean, running_var, training, momentum, eps, out, save_mean, save_invstd);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit_no_stats(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    bool training, double momentum, double eps) {
  at::Tensor out, save_mean, save_invstd;
  batch_norm_outputs("_native_batch_norm_legit", input, defined_or_empty(weight), defined_or_empty(bias), at::Tensor(),
                     at::Tensor(), training, momentum, eps, out, save_mean, save_invstd);
  return {out, save_mean, save_invstd};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> native_batch_norm_legit_no_stats_out(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    bool training, double momentum, double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  return batch_norm_outputs("_native_batch_norm_legit", input, defined_or_empty(weight), defined_or_empty(bias),
                            at::Tensor(), at::Tensor(), training, momentum, eps, out, save_mean, save_invstd);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps) {
  at::Tensor out, save_mean, save_invstd;
  batch_norm_outputs("_batch_norm_with_update", input, defined_or_empty(weight), defined_or_empty(bias), running_mean,
                     running_var, /*training=*/true, momentum, eps, out, save_mean, save_invstd);
  // The reserve tensor cuDNN would use: empty, as on the CPU.
  return {out, save_mean, save_invstd, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_with_update_out(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps, at::Tensor& out,
    at::Tensor& save_mean, at::Tensor& save_invstd, at::Tensor& reserve) {
  batch_norm_outputs("_batch_norm_with_update", input, defined_or_empty(weight), defined_or_empty(bias), running_mean,
                     running_var, /*training=*/true, momentum, eps, out, save_mean, save_invstd);
  prepare(reserve, {0}, input.options().dtype(at::kByte));
  return {out, save_mean, save_invstd, reserve};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  return batch_norm_backward_impl("native_batch_norm_backward", grad_out, input, defined_or_empty(weight),
                                  defined_or_empty(running_mean), defined_or_empty(running_var),
                                  defined_or_empty(save_mean), defined_or_empty(save_invstd), train, eps, output_mask);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_var, bool update, double eps,
    std::array<bool, 3> output_mask, const at::Tensor& reserve) {
  (void)reserve;  // cuDNN's workspace; empty here
  return batch_norm_backward_impl("batch_norm_backward", grad_out, input, weight, defined_or_empty(running_mean),
                                  defined_or_empty(running_var), defined_or_empty(save_mean),
                                  defined_or_empty(save_var), update, eps, output_mask);
}

}  // namespace foo::native
