// 2-d pooling: max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d, adaptive_max_pool2d and
// their backward ops (kernels/pool.h). The structured ones implement only impl() (ATen's meta
// functions, run by the generated wrappers, check arguments and shape the outputs);
// _adaptive_avg_pool2d (not structured) uses ATen's shape rules directly. 3-d inputs are one
// image; any layout is read and written through strides (outputs follow the input's memory
// format, as the meta functions decide).
#include <ATen/ATen.h>
#include <ATen/native/AdaptivePooling.h>

#include "aten/kernel_dtype.h"
#include "aten/layout.h"
#include "kernels/pool.h"
#include "native/adaptive_avg_pool2d.h"
#include "native/adaptive_avg_pool2d_backward.h"
#include "native/adaptive_max_pool2d_backward_out.h"
#include "native/adaptive_max_pool2d_out.h"
#include "native/avg_pool2d_backward_out.h"
#include "native/avg_pool2d_out.h"
#include "native/max_pool2d_with_indices_backward_out.h"
#include "native/max_pool2d_with_indices_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::ImageRef;
using foo::kernels::PoolArgs;
using foo::kernels::PoolKind;

// (n, c, h, w) strides of a 3-d ([C, H, W], one image) or 4-d tensor.
ImageRef image_ref(const at::Tensor& t) {
  if (!t.defined()) return {nullptr, 0, 0, 0, 0, 0};
  const int64_t o = t.dim() - 3;
  return {t.data_ptr(), o ? t.stride(0) : 0, t.stride(o), 0, t.stride(o + 1), t.stride(o + 2)};
}

bool channels_last(const at::Tensor& t) { return t.dim() == 4 && !t.is_contiguous() && t.is_contiguous(at::MemoryFormat::ChannelsLast); }

// PoolArgs of input (n, c, in_h, in_w) and output (.., out_h, out_w) images; `walked` is the
// tensor the kernel writes (output forward, input gradient backward).
PoolArgs pool_args(PoolKind kind, const at::Tensor& input, const at::Tensor& output, const at::Tensor& indices,
                   const at::Tensor& walked) {
  PoolArgs a{};
  a.kind = kind;
  a.dtype = kernel_dtype(input.scalar_type());
  const int64_t o = input.dim() - 3;
  a.n = o ? input.size(0) : 1;
  a.c = input.size(o);
  a.in_h = input.size(o + 1);
  a.in_w = input.size(o + 2);
  a.out_h = output.size(o + 1);
  a.out_w = output.size(o + 2);
  a.input = image_ref(input);
  a.output = image_ref(output);
  a.indices = image_ref(indices);
  a.channels_last = channels_last(walked);
  return a;
}

void check_dtype(const char* op, const at::Tensor& t, bool integers = false) {
  check_kernel_dtype(op, t.scalar_type(),
                     foo::kernels::kFloatingTypes | (integers ? foo::kernels::kIntegralTypes : 0u));
}

foo::kernels::Stream stream_of(const at::Tensor& t) { return foo::runtime::current_native_stream(t.device().index()); }

// (first, second) of an int[2] argument given as one or two values; `empty` stands for an empty one.
std::pair<int64_t, int64_t> pair_of(at::IntArrayRef v, std::pair<int64_t, int64_t> empty) {
  if (v.empty()) return empty;
  return {v[0], v.size() == 1 ? v[0] : v[1]};
}

void set_window(PoolArgs& a, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                at::IntArrayRef dilation) {
  std::tie(a.kernel_h, a.kernel_w) = pair_of(kernel_size, {1, 1});
  std::tie(a.stride_h, a.stride_w) = pair_of(stride, {a.kernel_h, a.kernel_w});
  std::tie(a.pad_h, a.pad_w) = pair_of(padding, {0, 0});
  std::tie(a.dilation_h, a.dilation_w) = pair_of(dilation, {1, 1});
}

void adaptive_pool_impl(PoolKind kind, const at::Tensor& input, const at::Tensor& output, const at::Tensor& indices) {
  check_dtype(kind == PoolKind::AdaptiveMax ? "adaptive_max_pool2d" : "_adaptive_avg_pool2d", input);
  FOO_CALL_KERNEL(pool2d_forward, stream_of(input), pool_args(kind, input, output, indices, output));
}

void adaptive_pool_backward_impl(PoolKind kind, const at::Tensor& grad_output, const at::Tensor& indices,
                                 const at::Tensor& grad_input) {
  check_dtype(kind == PoolKind::AdaptiveMax ? "adaptive_max_pool2d_backward" : "_adaptive_avg_pool2d_backward",
              grad_input);
  FOO_CALL_KERNEL(pool2d_backward, stream_of(grad_input), pool_args(kind, grad_input, grad_output, indices, grad_input));
}

}  // namespace

// ---- structured kernels: ATen's meta functions checked the arguments and shaped the outputs ------

TORCH_IMPL_FUNC(max_pool2d_with_indices_out)(const at::Tensor& input, at::IntArrayRef kernel_size,
                                              at::IntArrayRef stride, at::IntArrayRef padding,
                                              at::IntArrayRef dilation, bool /*ceil_mode*/, const at::Tensor& output,
                                              const at::Tensor& indices) {
  check_dtype("max_pool2d_with_indices", input, /*integers=*/true);
  PoolArgs a = pool_args(PoolKind::Max, input, output, indices, output);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool2d_forward, stream_of(input), a);
}

TORCH_IMPL_FUNC(max_pool2d_with_indices_backward_out)(const at::Tensor& grad_output, const at::Tensor& input,
                                                       at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                       at::IntArrayRef padding, at::IntArrayRef dilation,
                                                       bool /*ceil_mode*/, const at::Tensor& indices,
                                                       const at::Tensor& grad_input) {
  check_dtype("max_pool2d_with_indices_backward", input);
  PoolArgs a = pool_args(PoolKind::Max, grad_input, grad_output, indices, grad_input);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool2d_backward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool2d_out)(const at::Tensor& input, int64_t kH, int64_t kW, int64_t dH, int64_t dW, int64_t padH,
                                int64_t padW, bool /*ceil_mode*/, bool count_include_pad,
                                std::optional<int64_t> divisor_override, const at::Tensor& output) {
  check_dtype("avg_pool2d", input);
  PoolArgs a = pool_args(PoolKind::Avg, input, output, at::Tensor(), output);
  set_window(a, {kH, kW}, {dH, dW}, {padH, padW}, {1, 1});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool2d_forward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool2d_backward_out)(const at::Tensor& grad_output, const at::Tensor& input,
                                         at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                         bool /*ceil_mode*/, bool count_include_pad,
                                         std::optional<int64_t> divisor_override, const at::Tensor& grad_input) {
  check_dtype("avg_pool2d_backward", input);
  PoolArgs a = pool_args(PoolKind::Avg, grad_input, grad_output, at::Tensor(), grad_input);
  set_window(a, kernel_size, stride, padding, {1, 1});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool2d_backward, stream_of(input), a);
}

TORCH_IMPL_FUNC(adaptive_max_pool2d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/,
                                         const at::Tensor& output, const at::Tensor& indices) {
  adaptive_pool_impl(PoolKind::AdaptiveMax, input, output, indices);
}

TORCH_IMPL_FUNC(adaptive_max_pool2d_backward_out)(const at::Tensor& grad_output, const at::Tensor& /*self*/,
                                                  const at::Tensor& indices, const at::Tensor& grad_input) {
  adaptive_pool_backward_impl(PoolKind::AdaptiveMax, grad_output, indices, grad_input);
}

// ---- _adaptive_avg_pool2d: not structured upstream, so it checks and allocates itself -----------

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  // The checks of ATen's adaptive_avg_pool2d_out_cpu_template.
  TORCH_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ",
              self.sizes());
  for (int64_t i = 1; i < self.dim(); ++i) {
    TORCH_CHECK(self.size(i) > 0, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch ",
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", i, " being empty");
  }
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0, "adaptive_avg_pool2d: elements of output_size must be ",
              "greater than or equal to 0 but received {", output_size[0], ", ", output_size[1], "}");
  auto sizes = self.sizes().vec();
  sizes[self.dim() - 2] = output_size[0];
  sizes[self.dim() - 1] = output_size[1];
  at::Tensor out = at::empty(sizes, self.options().memory_format(self.suggest_memory_format()));
  adaptive_pool_impl(PoolKind::AdaptiveAvg, self, out, at::Tensor());
  return out;
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  at::native::adaptive_pool_empty_output_check(grad_output, "adaptive_avg_pool2d_backward");
  TORCH_CHECK(self.dim() == grad_output.dim(), "adaptive_avg_pool2d_backward: expected grad_output of ", self.dim(),
              " dims, but got ", grad_output.dim());
  TORCH_CHECK(self.scalar_type() == grad_output.scalar_type(), "expected dtype ", self.scalar_type(),
              " for `grad_output` but got dtype ", grad_output.scalar_type());
  TORCH_CHECK(grad_output.sizes().slice(0, self.dim() - 2) == self.sizes().slice(0, self.dim() - 2),
              "adaptive_avg_pool2d_backward: grad_output of shape ", grad_output.sizes(),
              " does not match the batch and channels of self ", self.sizes());
  at::Tensor grad_input = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  adaptive_pool_backward_impl(PoolKind::AdaptiveAvg, grad_output, at::Tensor(), grad_input);
  return grad_input;
}

}  // namespace foo::native
