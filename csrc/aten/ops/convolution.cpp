// convolution_overrideable and convolution_backward_overrideable: what at::convolution and its
// autograd formula call for a PrivateUse1 device (after ATen's own shape checks, batch-less
// inputs, padding='same' and the like are dealt with). 1-d, 2-d and 3-d, any stride, padding,
// dilation and groups, transposed or not, any memory layout (kernels read through strides; the
// output is channels_last when the input or the weight is, as on CUDA). The kernels are
// implicit GEMMs (kernels/ops/conv.h); grad_bias is a native sum.
#include <ATen/ATen.h>
#include <ATen/native/ConvUtils.h>

#include "aten/core/launch_args.h"
#include "aten/core/layout.h"
#include "kernels/ops/conv.h"
#include "native/convolution_backward_overrideable.h"
#include "native/convolution_overrideable.h"

namespace foo::native {
namespace {

using foo::kernels::ConvArgs;
using foo::kernels::ConvTensorRef;
using foo::kernels::kConvDims;

void check_inputs(const char* op, const at::Tensor& input, const at::Tensor& weight) {
  TORCH_CHECK(input.dim() >= 3 && input.dim() <= 5, op, ": expected a 3-d, 4-d or 5-d input (batch, channels, 1 to 3 ",
              "spatial dims), but got ", input.dim(), "-d");
  TORCH_CHECK(weight.dim() == input.dim(), op, ": expected weight of ", input.dim(), " dims, but got ", weight.dim());
  const auto t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16, op,
                              ": foo has no kernel for dtype ", t, " (convolutions support float32, float64, float16 ",
                              "and bfloat16)");
  TORCH_CHECK(weight.scalar_type() == t, op, ": input type (", t, ") and weight type (", weight.scalar_type(),
              ") should be the same");
}

// The kernels' 5-d view (n, c, d, h, w) of a 3-d to 5-d tensor: missing spatial dims lead, size 1.
ConvTensorRef ref(const at::Tensor& t) {
  ConvTensorRef r{t.data_ptr(), {0, 0, 0, 0, 0}};
  const int64_t missing = 5 - t.dim();
  r.stride[0] = t.stride(0);
  r.stride[1] = t.stride(1);
  for (int64_t d = 2; d < t.dim(); ++d) r.stride[d + missing] = t.stride(d);
  return r;
}

void spatial(int64_t (&dst)[kConvDims], at::IntArrayRef src, int64_t fill) {
  const int64_t missing = kConvDims - static_cast<int64_t>(src.size());
  for (int64_t i = 0; i < kConvDims; ++i) dst[i] = i < missing ? fill : src[i - missing];
}

// stride, padding, dilation and output_padding with one value per spatial dim (a single value
// stands for all, as expand_param_if_needed does), checked.
struct Params {
  std::vector<int64_t> stride, padding, dilation, output_padding;
};

Params params(const char* op, int64_t dims, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
              at::IntArrayRef output_padding) {
  auto expand = [&](const char* name, at::IntArrayRef v, int64_t min) {
    TORCH_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == dims, op, ": expected ", name, " of 1 or ", dims,
                " values, but got ", v);
    for (const int64_t e : v) TORCH_CHECK(e >= min, op, ": ", name, " must be at least ", min, ", but got ", v);
    return v.size() == 1 ? std::vector<int64_t>(dims, v[0]) : v.vec();
  };
  return {expand("stride", stride, 1), expand("padding", padding, 0), expand("dilation", dilation, 1),
          expand("output_padding", output_padding.empty() ? at::IntArrayRef{0} : output_padding, 0)};
}

// The relation y = conv(x, w) (kernels/ops/conv.h) of the three tensors, whichever is written, and
// the bias (or undefined) of the written activation's channels.
ConvArgs relation(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w, const at::Tensor& bias,
                  const Params& p, int64_t groups) {
  ConvArgs a{};
  a.dtype = kernel_dtype(x.scalar_type());
  a.batch = x.size(0);
  a.groups = groups;
  a.x_channels = x.size(1);
  a.y_channels = y.size(1);
  spatial(a.x_size, x.sizes().slice(2), 1);
  spatial(a.y_size, y.sizes().slice(2), 1);
  spatial(a.kernel, w.sizes().slice(2), 1);
  spatial(a.stride, p.stride, 1);
  spatial(a.padding, p.padding, 0);
  spatial(a.dilation, p.dilation, 1);
  a.x = ref(x);
  a.y = ref(y);
  a.w = ref(w);
  if (bias.defined()) {
    a.bias = bias.const_data_ptr();
    a.bias_stride = bias.stride(0);
  }
  return a;
}

at::MemoryFormat conv_memory_format(const at::Tensor& input, const at::Tensor& weight) {
  const auto channels_last = input.dim() == 5 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast;
  if (input.dim() >= 4 &&
      (input.suggest_memory_format() == channels_last || weight.suggest_memory_format() == channels_last)) {
    return channels_last;
  }
  return at::MemoryFormat::Contiguous;
}

// The shape checks at::convolution makes before it calls us, repeated for direct calls: the
// kernels index with these sizes. Returns the output's shape.
std::vector<int64_t> check_shapes(const char* op, const at::Tensor& input, const at::Tensor& weight,
                                  const at::Tensor& bias, const Params& p, bool transposed, int64_t groups) {
  TORCH_CHECK(groups > 0 && weight.size(0) % groups == 0, op, ": ", weight.size(0), " weight channels (dim 0) do ",
              "not divide into ", groups, " groups");
  const int64_t in_channels = transposed ? weight.size(0) : weight.size(1) * groups;
  TORCH_CHECK(input.size(1) == in_channels, op, ": input with ", input.size(1), " channels does not match weight of ",
              "shape ", weight.sizes(), " with groups=", groups, " (expected ", in_channels, " channels)");
  const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
  TORCH_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == out_channels), op, ": expected a bias of ",
              out_channels, " elements, but got shape ", bias.defined() ? bias.sizes() : at::IntArrayRef{});
  const auto sizes = transposed ? at::native::conv_input_size(input.sizes(), weight.sizes(), p.padding,
                                                              p.output_padding, p.stride, p.dilation, groups)
                                : at::native::conv_output_size(input.sizes(), weight.sizes(), p.padding, p.stride,
                                                               p.dilation);
  for (const int64_t d : sizes) {
    TORCH_CHECK(d >= 0, op, ": the output size ", at::IntArrayRef(sizes), " is too small for input of shape ",
                input.sizes(), " and weight of shape ", weight.sizes());
  }
  return sizes;
}

// Core kernels: outputs allocated and shaped by the caller.

// y = conv(x, w) + bias (non-transposed forward; the input gradient of a transposed convolution).
void conv_into(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const Params& p, int64_t groups,
               const at::Tensor& y) {
  FOO_CALL_KERNEL(conv_forward, stream_of(y), relation(x, y, w, bias, p, groups));
}

// x = conv^T(y, w) + bias (the input gradient; a transposed convolution's forward).
void conv_transpose_into(const at::Tensor& y, const at::Tensor& w, const at::Tensor& bias, const Params& p,
                         int64_t groups, const at::Tensor& x) {
  FOO_CALL_KERNEL(conv_backward_input, stream_of(x), relation(x, y, w, bias, p, groups));
}

// w = corr(y, x) (the weight gradient).
void conv_weight_into(const at::Tensor& y, const at::Tensor& x, const Params& p, int64_t groups, const at::Tensor& w) {
  FOO_CALL_KERNEL(conv_backward_weight, stream_of(w), relation(x, y, w, at::Tensor(), p, groups));
}

}  // namespace

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias_opt, at::IntArrayRef stride,
                                    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                    at::IntArrayRef output_padding, int64_t groups) {
  check_inputs("convolution", input, weight);
  const at::Tensor bias = bias_opt.value_or(at::Tensor());
  TORCH_CHECK(!bias.defined() || bias.scalar_type() == input.scalar_type(), "convolution: bias type (",
              bias.defined() ? bias.scalar_type() : input.scalar_type(), ") and input type (", input.scalar_type(),
              ") should be the same");
  const Params p = params("convolution", input.dim() - 2, stride, padding, dilation, output_padding);
  const auto sizes = check_shapes("convolution", input, weight, bias, p, transposed, groups);
  at::Tensor out = at::empty(sizes, input.options().memory_format(conv_memory_format(input, weight)));
  if (transposed) conv_transpose_into(input, weight, bias, p, groups, out);
  else conv_into(input, weight, bias, p, groups, out);
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  check_inputs("convolution_backward", input, weight);
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), "convolution_backward: grad_output type (",
              grad_output.scalar_type(), ") and input type (", input.scalar_type(), ") should be the same");
  const Params p = params("convolution_backward", input.dim() - 2, stride, padding, dilation, output_padding);
  const auto expected = check_shapes("convolution_backward", input, weight, at::Tensor(), p, transposed, groups);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(expected), "convolution_backward: expected grad_output of shape ",
              at::IntArrayRef(expected), ", but got ", grad_output.sizes());
  const auto format = conv_memory_format(input, weight);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = at::empty(input.sizes(), input.options().memory_format(format));
    // A transposed convolution's input gradient is an ordinary convolution of grad_output.
    if (transposed) conv_into(grad_output, weight, at::Tensor(), p, groups, grad_input);
    else conv_transpose_into(grad_output, weight, at::Tensor(), p, groups, grad_input);
  }
  if (output_mask[1]) {
    grad_weight = at::empty(weight.sizes(), weight.options().memory_format(format));
    // Transposed, the roles of input and grad_output in the relation swap.
    if (transposed) conv_weight_into(input, grad_output, p, groups, grad_weight);
    else conv_weight_into(grad_output, input, p, groups, grad_weight);
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    grad_bias = grad_output.sum(dims);
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace foo::native
