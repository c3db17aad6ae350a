// 2-d and 3-d pooling: max_pool{2,3}d_with_indices, avg_pool{2,3}d, _adaptive_avg_pool{2,3}d,
// adaptive_max_pool{2,3}d and their backward ops (kernels/ops/pool.h: one kernel, 2-d images being
// depth 1). The structured ones implement only impl() (ATen's meta functions, run by the generated
// wrappers, check arguments and shape the outputs); the others (_adaptive_avg_pool*,
// max_pool3d_with_indices*) check and allocate as the CPU's. Unbatched inputs are one image; any
// layout is read and written through strides (outputs follow the input's memory format, as on the CPU).
#include <array>

#include <ATen/ATen.h>
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>

#include "aten/core/image.h"
#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/out_arg.h"
#include "kernels/ops/pool.h"
#include "native/adaptive_avg_pool2d.h"
#include "native/adaptive_avg_pool2d_backward.h"
#include "native/adaptive_avg_pool3d.h"
#include "native/adaptive_avg_pool3d_backward.h"
#include "native/adaptive_max_pool2d_backward_out.h"
#include "native/adaptive_max_pool2d_out.h"
#include "native/adaptive_max_pool3d_backward_out.h"
#include "native/adaptive_max_pool3d_out.h"
#include "native/avg_pool2d_backward_out.h"
#include "native/avg_pool2d_out.h"
#include "native/avg_pool3d_backward_out.h"
#include "native/avg_pool3d_out.h"
#include "native/max_pool2d_with_indices_backward_out.h"
#include "native/max_pool2d_with_indices_out.h"
#include "native/max_pool3d_with_indices_backward_out.h"
#include "native/max_pool3d_with_indices_out.h"

namespace foo::native {
namespace {

using foo::kernels::PoolArgs;
using foo::kernels::PoolDim;
using foo::kernels::PoolKind;

// PoolArgs of `dims`-d input (n, c, in...) and output (.., out...) images, windows of 1 (set_window
// sets them); `walked` is the tensor the kernel writes (output forward, input gradient backward).
PoolArgs pool_args(PoolKind kind, int dims, const at::Tensor& input, const at::Tensor& output,
                   const at::Tensor& indices, const at::Tensor& walked) {
  PoolArgs a{};
  a.kind = kind;
  a.dtype = kernel_dtype(input.scalar_type());
  a.dims = dims;
  const int64_t o = input.dim() - dims - 1;
  a.n = o ? input.size(0) : 1;
  a.c = input.size(o);
  PoolDim* spatial[3] = {&a.d, &a.h, &a.w};
  for (int i = 0; i < 3; ++i) {
    const int64_t t = input.dim() - 3 + i;  // the tensors' dim (a 2-d op's depth: none, size 1)
    const bool has = i >= 3 - dims;
    *spatial[i] = {has ? input.size(t) : 1, has ? output.size(t) : 1, 1, 1, 0, 1};
  }
  a.input = image_ref(input, dims);
  a.output = image_ref(output, dims);
  a.indices = image_ref(indices, dims);
  a.channels_last = walks_channels_last(walked, dims);
  return a;
}

void check_dtype(const char* op, const at::Tensor& t, bool integers = false) {
  check_kernel_dtype(op, t.scalar_type(),
                     foo::kernels::kFloatingTypes | (integers ? foo::kernels::kIntegralTypes : 0u));
}

// Element i of an int[dims] argument given as one value or one per dimension; `empty` stands for
// an empty one.
int64_t dim_arg(at::IntArrayRef v, size_t i, int64_t empty) {
  if (v.empty()) return empty;
  return v[v.size() == 1 ? 0 : i];
}

void set_window(PoolArgs& a, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                at::IntArrayRef dilation) {
  PoolDim* spatial[3] = {&a.d, &a.h, &a.w};
  for (int i = 0; i < a.dims; ++i) {
    PoolDim& x = *spatial[3 - a.dims + i];
    x.kernel = dim_arg(kernel_size, i, 1);
    x.stride = dim_arg(stride, i, x.kernel);
    x.pad = dim_arg(padding, i, 0);
    x.dilation = dim_arg(dilation, i, 1);
  }
}

void adaptive_pool_impl(const char* op, PoolKind kind, int dims, const at::Tensor& input, const at::Tensor& output,
                        const at::Tensor& indices) {
  check_dtype(op, input);
  FOO_CALL_KERNEL(pool_forward, stream_of(input), pool_args(kind, dims, input, output, indices, output));
}

void adaptive_pool_backward_impl(const char* op, PoolKind kind, int dims, const at::Tensor& grad_output,
                                 const at::Tensor& indices, const at::Tensor& grad_input) {
  check_dtype(op, grad_input);
  FOO_CALL_KERNEL(pool_backward, stream_of(grad_input),
                  pool_args(kind, dims, grad_input, grad_output, indices, grad_input));
}

// The memory format of a pooling's output or input gradient: the input's when batched, as on the CPU.
at::MemoryFormat pool_format(const at::Tensor& input, int dims) {
  return input.dim() == dims + 2 ? input.suggest_memory_format() : at::MemoryFormat::Contiguous;
}

// The layout of _adaptive_avg_pool{2,3}d's output and input gradient: the CPU's 3-d ones are
// contiguous whatever the input's layout.
at::MemoryFormat adaptive_avg_format(const at::Tensor& self, int dims) {
  return dims == 2 ? pool_format(self, dims) : at::MemoryFormat::Contiguous;
}

// _adaptive_avg_pool{2,3}d: the checks of ATen's adaptive_avg_pool{2,3}d_out_cpu_template.
at::Tensor adaptive_avg_pool(const at::Tensor& self, at::IntArrayRef output_size, int dims) {
  const std::string op = "adaptive_avg_pool" + std::to_string(dims) + "d";
  TORCH_CHECK(static_cast<int>(output_size.size()) == dims, op, ": output_size must be ", dims);
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, op, "(): Expected ", dims + 1, "D or ", dims + 2,
              "D tensor, but got ", self.sizes());
  for (int64_t i = 1; i < self.dim(); ++i) {
    TORCH_CHECK(self.size(i) > 0, op, "(): Expected input to have non-zero size for non-batch dimensions, but ",
                "input has sizes ", self.sizes(), " with dimension ", i, " being empty");
  }
  auto sizes = self.sizes().vec();
  for (int i = 0; i < dims; ++i) {
    TORCH_CHECK(output_size[i] >= 0, op, ": elements of output_size must be greater than or equal to 0 but ",
                "received ", output_size);
    sizes[self.dim() - dims + i] = output_size[i];
  }
  at::Tensor out = at::empty(sizes, self.options().memory_format(adaptive_avg_format(self, dims)));
  adaptive_pool_impl(("_" + op).c_str(), PoolKind::AdaptiveAvg, dims, self, out, at::Tensor());
  return out;
}

at::Tensor adaptive_avg_pool_backward(const at::Tensor& grad_output, const at::Tensor& self, int dims) {
  const std::string op = "adaptive_avg_pool" + std::to_string(dims) + "d_backward";
  at::native::adaptive_pool_empty_output_check(grad_output, op.c_str());
  TORCH_CHECK(self.dim() == grad_output.dim(), op, ": expected grad_output of ", self.dim(), " dims, but got ",
              grad_output.dim());
  TORCH_CHECK(self.scalar_type() == grad_output.scalar_type(), "expected dtype ", self.scalar_type(),
              " for `grad_output` but got dtype ", grad_output.scalar_type());
  TORCH_CHECK(grad_output.sizes().slice(0, self.dim() - dims) == self.sizes().slice(0, self.dim() - dims), op,
              ": grad_output of shape ", grad_output.sizes(), " does not match the batch and channels of self ",
              self.sizes());
  at::Tensor grad_input = at::empty(self.sizes(), self.options().memory_format(adaptive_avg_format(self, dims)));
  adaptive_pool_backward_impl(("_" + op).c_str(), PoolKind::AdaptiveAvg, dims, grad_output, at::Tensor(), grad_input);
  return grad_input;
}

// The int[3] window arguments of max_pool3d, read and checked as ATen's CPU kernels do
// (DilatedMaxPool3d.cpp); [0] is depth.
struct MaxPool3dWindow {
  int k[3], s[3], p[3], dil[3];
};

MaxPool3dWindow max_pool3d_window(const at::Tensor& input, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                  at::IntArrayRef padding, at::IntArrayRef dilation) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  TORCH_CHECK(input.dim() == 4 || input.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  using at::native::safe_downcast;
  MaxPool3dWindow win{};
  for (size_t i = 0; i < 3; ++i) {
    win.k[i] = safe_downcast<int, int64_t>(dim_arg(kernel_size, i, 1));
    win.s[i] = safe_downcast<int, int64_t>(dim_arg(stride, i, win.k[i]));
    win.p[i] = safe_downcast<int, int64_t>(dim_arg(padding, i, 0));
    win.dil[i] = safe_downcast<int, int64_t>(dim_arg(dilation, i, 1));
  }
  return win;
}

}  // namespace

// ---- structured kernels: ATen's meta functions checked the arguments and shaped the outputs ------

TORCH_IMPL_FUNC(max_pool2d_with_indices_out)(const at::Tensor& input, at::IntArrayRef kernel_size,
                                              at::IntArrayRef stride, at::IntArrayRef padding,
                                              at::IntArrayRef dilation, bool /*ceil_mode*/, const at::Tensor& output,
                                              const at::Tensor& indices) {
  check_dtype("max_pool2d_with_indices", input, /*integers=*/true);
  PoolArgs a = pool_args(PoolKind::Max, 2, input, output, indices, output);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool_forward, stream_of(input), a);
}

TORCH_IMPL_FUNC(max_pool2d_with_indices_backward_out)(const at::Tensor& grad_output, const at::Tensor& input,
                                                       at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                       at::IntArrayRef padding, at::IntArrayRef dilation,
                                                       bool /*ceil_mode*/, const at::Tensor& indices,
                                                       const at::Tensor& grad_input) {
  check_dtype("max_pool2d_with_indices_backward", input);
  PoolArgs a = pool_args(PoolKind::Max, 2, grad_input, grad_output, indices, grad_input);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool_backward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool2d_out)(const at::Tensor& input, int64_t kH, int64_t kW, int64_t dH, int64_t dW, int64_t padH,
                                int64_t padW, bool /*ceil_mode*/, bool count_include_pad,
                                std::optional<int64_t> divisor_override, const at::Tensor& output) {
  check_dtype("avg_pool2d", input);
  PoolArgs a = pool_args(PoolKind::Avg, 2, input, output, at::Tensor(), output);
  set_window(a, {kH, kW}, {dH, dW}, {padH, padW}, {});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool_forward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool2d_backward_out)(const at::Tensor& grad_output, const at::Tensor& input,
                                         at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                         bool /*ceil_mode*/, bool count_include_pad,
                                         std::optional<int64_t> divisor_override, const at::Tensor& grad_input) {
  check_dtype("avg_pool2d_backward", input);
  PoolArgs a = pool_args(PoolKind::Avg, 2, grad_input, grad_output, at::Tensor(), grad_input);
  set_window(a, kernel_size, stride, padding, {});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool_backward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool3d_out)(const at::Tensor& input, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                at::IntArrayRef padding, bool /*ceil_mode*/, bool count_include_pad,
                                std::optional<int64_t> divisor_override, const at::Tensor& output) {
  check_dtype("avg_pool3d", input);
  PoolArgs a = pool_args(PoolKind::Avg, 3, input, output, at::Tensor(), output);
  set_window(a, kernel_size, stride, padding, {});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool_forward, stream_of(input), a);
}

TORCH_IMPL_FUNC(avg_pool3d_backward_out)(const at::Tensor& grad_output, const at::Tensor& input,
                                         at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                         bool /*ceil_mode*/, bool count_include_pad,
                                         std::optional<int64_t> divisor_override, const at::Tensor& grad_input) {
  check_dtype("avg_pool3d_backward", input);
  PoolArgs a = pool_args(PoolKind::Avg, 3, grad_input, grad_output, at::Tensor(), grad_input);
  set_window(a, kernel_size, stride, padding, {});
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override.value_or(0);
  FOO_CALL_KERNEL(pool_backward, stream_of(input), a);
}

TORCH_IMPL_FUNC(adaptive_max_pool2d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/,
                                         const at::Tensor& output, const at::Tensor& indices) {
  adaptive_pool_impl("adaptive_max_pool2d", PoolKind::AdaptiveMax, 2, input, output, indices);
}

TORCH_IMPL_FUNC(adaptive_max_pool2d_backward_out)(const at::Tensor& grad_output, const at::Tensor& /*self*/,
                                                  const at::Tensor& indices, const at::Tensor& grad_input) {
  adaptive_pool_backward_impl("adaptive_max_pool2d_backward", PoolKind::AdaptiveMax, 2, grad_output, indices,
                              grad_input);
}

TORCH_IMPL_FUNC(adaptive_max_pool3d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/,
                                         const at::Tensor& output, const at::Tensor& indices) {
  adaptive_pool_impl("adaptive_max_pool3d", PoolKind::AdaptiveMax, 3, input, output, indices);
}

TORCH_IMPL_FUNC(adaptive_max_pool3d_backward_out)(const at::Tensor& grad_output, const at::Tensor& /*self*/,
                                                  const at::Tensor& indices, const at::Tensor& grad_input) {
  adaptive_pool_backward_impl("adaptive_max_pool3d_backward", PoolKind::AdaptiveMax, 3, grad_output, indices,
                              grad_input);
}

// ---- not structured upstream: these check and allocate themselves -------------------------------

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  return adaptive_avg_pool(self, output_size, 2);
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  return adaptive_avg_pool_backward(grad_output, self, 2);
}

at::Tensor adaptive_avg_pool3d(const at::Tensor& self, at::IntArrayRef output_size) {
  return adaptive_avg_pool(self, output_size, 3);
}

at::Tensor adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  return adaptive_avg_pool_backward(grad_output, self, 3);
}

// The checks and output shapes of ATen's max_pool3d_with_indices_out_cpu_template; out= tensors
// are resized, the functional overload's (undefined) allocated.
std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                                 at::IntArrayRef stride, at::IntArrayRef padding,
                                                                 at::IntArrayRef dilation, bool ceil_mode,
                                                                 at::Tensor& out, at::Tensor& indices) {
  const MaxPool3dWindow win = max_pool3d_window(self, kernel_size, stride, padding, dilation);
  std::array<int64_t, 3> in{}, size{};
  for (int i = 0; i < 3; ++i) {
    in[i] = self.size(self.dim() - 3 + i);
    size[i] = at::native::pooling_output_shape<int64_t>(in[i], win.k[i], win.p[i], win.s[i], win.dil[i], ceil_mode);
  }
  at::native::pool3d_shape_check(self, self.size(-4), win.k[0], win.k[1], win.k[2], win.s[0], win.s[1], win.s[2],
                                 win.p[0], win.p[1], win.p[2], win.dil[0], win.dil[1], win.dil[2], in[0], in[1],
                                 in[2], size[0], size[1], size[2], "max_pool3d_with_indices()");
  check_dtype("max_pool3d_with_indices", self, /*integers=*/true);
  auto sizes = self.sizes().vec();
  std::copy(size.begin(), size.end(), sizes.end() - 3);
  const auto options = self.options().memory_format(pool_format(self, 3));
  prepare_out(out, sizes, options);
  prepare_out(indices, sizes, options.dtype(at::kLong));
  PoolArgs a = pool_args(PoolKind::Max, 3, self, out, indices, out);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool_forward, stream_of(self), a);
  return {out, indices};
}

at::Tensor& max_pool3d_with_indices_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                 at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, bool /*ceil_mode*/,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  const MaxPool3dWindow win = max_pool3d_window(self, kernel_size, stride, padding, dilation);
  at::native::max_pool3d_backward_shape_check(
      self, grad_output, indices, self.size(-4), win.k[0], win.k[1], win.k[2], win.s[0], win.s[1], win.s[2], win.p[0],
      win.p[1], win.p[2], win.dil[0], win.dil[1], win.dil[2], self.size(-3), self.size(-2), self.size(-1),
      grad_output.size(-3), grad_output.size(-2), grad_output.size(-1), "max_pool3d_with_indices_backward()");
  check_dtype("max_pool3d_with_indices_backward", self);
  prepare_out(grad_input, self.sizes(), self.options().memory_format(pool_format(self, 3)));
  PoolArgs a = pool_args(PoolKind::Max, 3, grad_input, grad_output, indices, grad_input);
  set_window(a, kernel_size, stride, padding, dilation);
  FOO_CALL_KERNEL(pool_backward, stream_of(self), a);
  return grad_input;
}

}  // namespace foo::native
