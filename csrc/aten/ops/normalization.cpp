// native_layer_norm, native_group_norm, _fused_rms_norm and their backward ops (kernels/ops/norm.h,
// the row kernels).
// Inputs are made contiguous (as the CPU kernels do) and seen as [rows, cols]: layer norm's rows
// are the leading dims and cols the normalised ones; group norm's rows are (n, group) pairs and
// cols the group's channels times HxW. Outputs, statistics shapes and dtypes follow ATen's meta
// (as CUDA): group norm's mean/rstd have the input's dtype, or float32 for a 16-bit input with
// float32 weight and bias; layer and RMS norm's are float32 for 16-bit inputs.
#include <limits>

#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <ATen/native/layer_norm.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/layout.h"
#include "aten/core/torch_compat.h"
#include "kernels/ops/norm.h"
#include "native/fused_rms_norm.h"
#include "native/fused_rms_norm_backward.h"
#include "native/native_group_norm.h"
#include "native/native_group_norm_backward.h"
#include "native/native_layer_norm.h"
#include "native/native_layer_norm_backward.h"

namespace foo::native {
namespace {


// The dtype of parameters and statistics: the input's, or float32 for a 16-bit input whose
// weight/bias are float32 (the CPU's mixed case).
at::ScalarType param_dtype(const char* op, const at::Tensor& input, std::initializer_list<const at::Tensor*> params) {
  const auto t = input.scalar_type();
  check_kernel_dtype(op, t, foo::kernels::kFloatingTypes);
  std::optional<at::ScalarType> p;
  for (const at::Tensor* q : params) {
    if (!q->defined()) continue;
    if (!p) p = q->scalar_type();
    TORCH_CHECK(q->scalar_type() == *p, op, ": expected weight and bias of one dtype, but got ", *p, " and ",
                q->scalar_type());
  }
  if (!p || *p == t) return t;
  TORCH_CHECK(*p == at::kFloat && (t == at::kHalf || t == at::kBFloat16), op, ": expected parameters of dtype ", t,
              " (the input's), or float32 with a float16/bfloat16 input, but got ", *p);
  return at::kFloat;
}


at::Tensor contiguous_or_undefined(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? t->contiguous() : at::Tensor();
}

// A parameter in the row kernels' parameter dtype (a 16-bit one widened on the device), and a
// gradient computed in that dtype narrowed back to its parameter's.
at::Tensor widened(const at::Tensor& t, at::ScalarType dtype) { return t.defined() ? t.to(dtype) : t; }
at::Tensor narrowed(const at::Tensor& grad, const at::Tensor& param) {
  return grad.defined() && grad.scalar_type() != param.scalar_type() ? grad.to(param.scalar_type()) : grad;
}

struct RowShape {
  int64_t rows, cols, groups, inner;
};

// Core: y, mean and rstd allocated (contiguous, [rows, cols] / [rows] elements) by the caller.
void row_norm_into(const RowShape& s, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                   double eps, bool rms, at::ScalarType param, const at::Tensor& y, const at::Tensor& mean,
                   const at::Tensor& rstd) {
  foo::kernels::RowNormArgs a{};
  a.dtype = kernel_dtype(x.scalar_type());
  a.param_dtype = kernel_dtype(param);
  a.rows = s.rows;
  a.cols = s.cols;
  a.groups = s.groups;
  a.inner = s.inner;
  a.eps = eps;
  a.rms = rms;
  a.x = x.const_data_ptr();
  a.weight = ptr_or_null(weight);
  a.bias = ptr_or_null(bias);
  a.y = y.mutable_data_ptr();
  a.mean = mutable_ptr_or_null(mean);
  a.rstd = rstd.mutable_data_ptr();
  FOO_CALL_KERNEL(row_norm_forward, stream_of(x), a);
}

// Core: the wanted gradients allocated (contiguous) by the caller, the others undefined.
void row_norm_backward_into(const RowShape& s, const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& mean,
                            const at::Tensor& rstd, const at::Tensor& weight, bool rms, at::ScalarType param,
                            const at::Tensor& grad_input, const at::Tensor& grad_weight, const at::Tensor& grad_bias) {
  foo::kernels::RowNormBackwardArgs a{};
  a.dtype = kernel_dtype(x.scalar_type());
  a.param_dtype = kernel_dtype(param);
  a.rows = s.rows;
  a.cols = s.cols;
  a.groups = s.groups;
  a.inner = s.inner;
  a.rms = rms;
  a.grad_out = grad_out.const_data_ptr();
  a.x = x.const_data_ptr();
  a.mean = ptr_or_null(mean);
  a.rstd = rstd.const_data_ptr();
  a.weight = ptr_or_null(weight);
  a.grad_input = mutable_ptr_or_null(grad_input);
  a.grad_weight = mutable_ptr_or_null(grad_weight);
  a.grad_bias = mutable_ptr_or_null(grad_bias);
  FOO_CALL_KERNEL(row_norm_backward, stream_of(x), a);
}

// Layer norm's statistics shape: the leading dims, then a 1 per normalised dim.
std::vector<int64_t> stat_shape(const at::Tensor& input, int64_t normalized_ndim) {
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - normalized_ndim);
  shape.insert(shape.end(), normalized_ndim, 1);
  return shape;
}

void check_same_dtype(const char* op, const char* what, const at::Tensor& t, at::ScalarType expected) {
  TORCH_CHECK(t.scalar_type() == expected, op, ": expected ", what, " of dtype ", expected, ", but got ",
              t.scalar_type());
}

// grad_out shaped like the input and one statistic per row: the kernels index with these.
void check_backward_shapes(const char* op, const at::Tensor& grad_out, const at::Tensor& input,
                           std::initializer_list<const at::Tensor*> stats, int64_t rows) {
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out of shape ", grad_out.sizes(),
              " does not match the input's ", input.sizes());
  for (const at::Tensor* t : stats) {
    TORCH_CHECK(t->numel() == rows, op, ": expected statistics of ", rows, " elements, but got shape ", t->sizes());
  }
}

}  // namespace

// Layer norm's mean/rstd are in the accumulation dtype (float32 for 16-bit inputs), as CUDA and
// ATen's meta (the CPU: the input's dtype); the row kernels then take float32 parameters, so 16-bit
// weight/bias are widened first and their gradients narrowed back (as for RMS norm below).
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(const at::Tensor& input,
                                                                 at::IntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight_opt,
                                                                 const std::optional<at::Tensor>& bias_opt, double eps) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt), bias = contiguous_or_undefined(bias_opt);
  const auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  param_dtype("native_layer_norm", input, {&weight, &bias});
  const auto acc = at::toOpMathType(input.scalar_type());
  const at::Tensor x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  const auto shape = stat_shape(input, static_cast<int64_t>(normalized_shape.size()));
  at::Tensor mean = at::empty(shape, x.options().dtype(acc));
  at::Tensor rstd = at::empty(shape, x.options().dtype(acc));
  row_norm_into({M, N, 1, 1}, x, widened(weight, acc), widened(bias, acc), eps, /*rms=*/false, acc, y, mean, rstd);
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt, const std::optional<at::Tensor>& bias_opt,
    std::array<bool, 3> output_mask) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt), bias = contiguous_or_undefined(bias_opt);
  const auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const auto param = param_dtype("native_layer_norm_backward", input, {&weight, &bias});
  const auto acc = at::toOpMathType(input.scalar_type());
  check_same_dtype("native_layer_norm_backward", "grad_out", grad_out, input.scalar_type());
  // foo's forward gives mean/rstd in `acc`; the CPU's forward gives them in `param`: both are taken.
  TORCH_CHECK((mean.scalar_type() == acc || mean.scalar_type() == param) && rstd.scalar_type() == mean.scalar_type(),
              "native_layer_norm_backward: expected mean and rstd of dtype ", acc, ", but got ", mean.scalar_type(),
              " and ", rstd.scalar_type());
  check_backward_shapes("native_layer_norm_backward", grad_out, input, {&mean, &rstd}, M);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = at::empty(x.sizes(), x.options());
  if (output_mask[1] && weight.defined()) grad_weight = at::empty(weight.sizes(), weight.options().dtype(acc));
  if (output_mask[2] && bias.defined()) grad_bias = at::empty(bias.sizes(), bias.options().dtype(acc));
  row_norm_backward_into({M, N, 1, 1}, dy, x, mean.to(acc).contiguous(), rstd.to(acc).contiguous(), widened(weight, acc),
                         /*rms=*/false, acc, grad_input, grad_weight, grad_bias);
  return {grad_input, narrowed(grad_weight, weight), narrowed(grad_bias, bias)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(const at::Tensor& input,
                                                                 const std::optional<at::Tensor>& weight_opt,
                                                                 const std::optional<at::Tensor>& bias_opt, int64_t N,
                                                                 int64_t C, int64_t HxW, int64_t group, double eps) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt), bias = contiguous_or_undefined(bias_opt);
  TORCH_CHECK(group > 0 && C % group == 0, "Expected number of channels in input to be divisible by num_groups, ",
              "but got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(input.numel() == N * C * HxW, "native_group_norm: expected input with N * C * HxW = ", N * C * HxW,
              " elements, but got ", input.numel());
  TORCH_CHECK(!weight.defined() || weight.numel() == C, "Expected weight to be a vector of size equal to the number ",
              "of channels in input, but got weight of shape ", weight.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(!bias.defined() || bias.numel() == C, "Expected bias to be a vector of size equal to the number of ",
              "channels in input, but got bias of shape ", bias.sizes(), " and input of shape ", input.sizes());
  // As the CPU of this torch (aten/core/torch_compat.h).
  TORCH_CHECK(kGroupNormTakesAnyLayout || input.is_contiguous(input.suggest_memory_format()),
              "native_group_norm: expected an input contiguous in its memory format");
  const auto param = param_dtype("native_group_norm", input, {&weight, &bias});
  const at::Tensor x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  at::Tensor mean = at::empty({N, group}, x.options().dtype(param));
  at::Tensor rstd = at::empty({N, group}, x.options().dtype(param));
  row_norm_into({N * group, C / group * HxW, group, HxW}, x, weight, bias, eps, /*rms=*/false, param, y, mean, rstd);
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight_opt, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> output_mask) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt);
  TORCH_CHECK(group > 0 && C % group == 0, "native_group_norm_backward: ", C, " channels do not divide into ", group,
              " groups");
  TORCH_CHECK(input.numel() == N * C * HxW && grad_out.numel() == input.numel(),
              "native_group_norm_backward: expected input and grad_out with N * C * HxW = ", N * C * HxW, " elements");
  const auto param = param_dtype("native_group_norm_backward", input, {&weight});
  check_same_dtype("native_group_norm_backward", "grad_out", grad_out, input.scalar_type());
  check_same_dtype("native_group_norm_backward", "mean", mean, param);
  check_same_dtype("native_group_norm_backward", "rstd", rstd, param);
  check_backward_shapes("native_group_norm_backward", grad_out, input, {&mean, &rstd}, N * group);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = at::empty(x.sizes(), x.options());
  if (output_mask[1]) grad_weight = at::empty({C}, x.options().dtype(param));
  if (output_mask[2]) grad_bias = at::empty({C}, x.options().dtype(param));
  row_norm_backward_into({N * group, C / group * HxW, group, HxW}, dy, x, mean.contiguous(), rstd.contiguous(), weight,
                         /*rms=*/false, param, grad_input, grad_weight, grad_bias);
  return {grad_input, grad_weight, grad_bias};
}

// RMS norm: what F.rms_norm reaches (rms_norm -> _fused_rms_norm, whose composite kernel only
// serves backends without their own). rstd is float32 for 16-bit inputs (float64 for float64),
// shaped like layer norm's statistics, as on CUDA; the row kernels then take float32 parameters,
// so a 16-bit weight is widened on the device first and its gradient narrowed back.
std::tuple<at::Tensor, at::Tensor> fused_rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                                  const std::optional<at::Tensor>& weight_opt,
                                                  std::optional<double> eps) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt);
  const auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, at::Tensor());
  param_dtype("_fused_rms_norm", input, {&weight});
  TORCH_CHECK(!weight.defined() || weight.scalar_type() == input.scalar_type(), "_fused_rms_norm: expected weight of ",
              "dtype ", input.scalar_type(), " (the input's), but got ", weight.scalar_type());
  const auto acc = at::toOpMathType(input.scalar_type());
  const double eps_value = eps.value_or(acc == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                           : std::numeric_limits<float>::epsilon());
  const at::Tensor x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  at::Tensor rstd = at::empty(stat_shape(input, static_cast<int64_t>(normalized_shape.size())), x.options().dtype(acc));
  row_norm_into({M, N, 1, 1}, x, widened(weight, acc), at::Tensor(), eps_value, /*rms=*/true, acc, y, at::Tensor(), rstd);
  return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor> fused_rms_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                           at::IntArrayRef normalized_shape, const at::Tensor& rstd,
                                                           const std::optional<at::Tensor>& weight_opt,
                                                           std::array<bool, 2> output_mask) {
  const at::Tensor weight = contiguous_or_undefined(weight_opt);
  const auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, at::Tensor());
  const auto acc = at::toOpMathType(input.scalar_type());
  check_same_dtype("_fused_rms_norm_backward", "grad_out", grad_out, input.scalar_type());
  check_same_dtype("_fused_rms_norm_backward", "rstd", rstd, acc);
  check_backward_shapes("_fused_rms_norm_backward", grad_out, input, {&rstd}, M);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  at::Tensor grad_input, grad_weight;
  if (output_mask[0]) grad_input = at::empty(x.sizes(), x.options());
  if (output_mask[1] && weight.defined()) grad_weight = at::empty(weight.sizes(), weight.options().dtype(acc));
  row_norm_backward_into({M, N, 1, 1}, dy, x, at::Tensor(), rstd.contiguous(), widened(weight, acc), /*rms=*/true, acc,
                         grad_input, grad_weight, at::Tensor());
  return {grad_input, narrowed(grad_weight, weight)};
}

}  // namespace foo::native
