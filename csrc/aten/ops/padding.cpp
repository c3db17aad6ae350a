// Reflection and replication padding, 1-d to 3-d, forward and backward: what F.pad(mode='reflect'
// | 'replicate') reaches (torch.stft pads with reflect by default). The forward is one
// coordinate-mapped copy (kernels/ops/shape_copy.h, CoordMap::Reflect / Clamp: out[c] = in[m(c)] for
// any strides and element size); the backward its transpose, a gather that sums, for each input
// element, the output elements read from it (pad_backward_sum: no atomics, deterministic, the
// CPU's order of additions).
//
// Most of these ops are structured upstream: ATen's meta functions (run by the generated
// wrappers) check the arguments and shape the outputs, and impl() only launches.
// reflection_pad2d and the 2-d/3-d backward ops of replication padding, and reflection_pad2d's
// backward, are not structured: their checks are the CPU's (ReflectionPad.cpp,
// ReplicationPadding.cpp), with ATen's padding::check_valid_input, and their outputs follow the
// input's memory format as the CPU's do.
#include <ATen/ATen.h>
#include <ATen/native/Padding.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "aten/core/out_arg.h"
#include "kernels/ops/shape_copy.h"
#include "native/reflection_pad1d_backward_out.h"
#include "native/reflection_pad1d_out.h"
#include "native/reflection_pad2d_backward_out.h"
#include "native/reflection_pad2d_out.h"
#include "native/reflection_pad3d_backward_out.h"
#include "native/reflection_pad3d_out.h"
#include "native/replication_pad1d_backward_out.h"
#include "native/replication_pad1d_out.h"
#include "native/replication_pad2d_backward_out.h"
#include "native/replication_pad2d_out.h"
#include "native/replication_pad3d_backward_out.h"
#include "native/replication_pad3d_out.h"

namespace foo::native {
namespace {

using foo::kernels::CoordMap;
using foo::kernels::MapCopy;

// The copy of `input` into `output` padded by `padding` (before/after pairs for the last
// padding.size() / 2 dims, innermost first, as F.pad takes them). Dims that are neither padded
// nor larger than 1 move nothing and are dropped; padded ones are kept even at size 1 (their
// one element may come from anywhere in the input's row).
MapCopy pad_map(const at::Tensor& input, const at::Tensor& output, at::IntArrayRef padding, CoordMap map) {
  MapCopy m;
  m.numel = output.numel();
  m.element_size = static_cast<int32_t>(output.element_size());
  const int64_t padded = static_cast<int64_t>(padding.size()) / 2;
  for (int64_t d = 0; d < input.dim(); ++d) {
    const int64_t pair = input.dim() - 1 - d;  // padding[2 * pair] is this dim's "before"
    const bool is_padded = pair < padded;
    if (!is_padded && output.size(d) == 1) continue;
    foo::kernels::MapDim& md = m.dims[m.ndim++];
    md.size = output.size(d);
    md.in_size = input.size(d);
    md.out_stride = output.stride(d);
    md.in_stride = input.stride(d);
    md.map = is_padded ? map : CoordMap::Same;
    md.shift = is_padded ? padding[2 * pair] : 0;
  }
  return m;
}

// Every dtype the CPU's padding kernels take (AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(Half,
// BFloat16)); the copy moves them as bytes.
constexpr uint32_t kForwardTypes = foo::kernels::kNumericTypes | foo::kernels::kComplexTypes;

void pad_forward(const char* op, CoordMap map, const at::Tensor& input, at::IntArrayRef padding,
                 const at::Tensor& output) {
  check_kernel_dtype(op, input.scalar_type(), kForwardTypes);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), op, ": expected out tensor to have dtype ",
              input.scalar_type(), ", but got ", output.scalar_type(), " instead");
  if (output.numel() == 0) return;
  FOO_CALL_KERNEL(map_copy, stream_of(input), pad_map(input, output, padding, map), input.const_data_ptr(),
                  output.mutable_data_ptr());
}

void pad_backward(const char* op, CoordMap map, const at::Tensor& grad_output, const at::Tensor& input,
                  at::IntArrayRef padding, const at::Tensor& grad_input) {
  check_kernel_dtype(op, grad_output.scalar_type(), foo::kernels::kFloatingTypes);
  TORCH_CHECK(grad_input.scalar_type() == grad_output.scalar_type(), op, ": expected grad_input to have dtype ",
              grad_output.scalar_type(), ", but got ", grad_input.scalar_type(), " instead");
  // The meta functions check the padded sizes; the kernel also relies on the others matching.
  TORCH_CHECK(grad_output.dim() == input.dim(), op, ": expected grad_output of ", input.dim(), " dims, got ",
              grad_output.sizes());
  const int64_t padded = static_cast<int64_t>(padding.size()) / 2;
  for (int64_t d = 0; d < input.dim(); ++d) {
    const int64_t pair = input.dim() - 1 - d;
    const int64_t expected = pair < padded ? input.size(d) + padding[2 * pair] + padding[2 * pair + 1] : input.size(d);
    TORCH_CHECK(grad_output.size(d) == expected, op, ": grad_output of size ", grad_output.sizes(),
                " does not match an input of size ", input.sizes(), " padded by ", padding);
  }
  if (grad_input.numel() == 0) return;
  FOO_CALL_KERNEL(pad_backward_sum, stream_of(grad_output), kernel_dtype(grad_output.scalar_type()),
                  pad_map(grad_input, grad_output, padding, map), grad_output.const_data_ptr(),
                  grad_input.mutable_data_ptr(), grad_input.numel());
}

// ---- the unstructured ops' checks, as the CPU's --------------------------------------------------

// reflection_pad2d_out_template (ReflectionPad.cpp): the output's sizes.
std::vector<int64_t> reflection_pad2d_sizes(const at::Tensor& input, at::IntArrayRef padding) {
  at::native::padding::check_valid_input<2>(input, padding);
  const bool batched = input.dim() == 4;
  const int64_t dim_w = batched ? 3 : 2, dim_h = batched ? 2 : 1, dim_slices = batched ? 1 : 0;
  const int64_t pad_l = padding[0], pad_r = padding[1], pad_t = padding[2], pad_b = padding[3];
  const int64_t nplane = input.size(dim_slices), input_h = input.size(dim_h), input_w = input.size(dim_w);
  const int64_t output_h = input_h + pad_t + pad_b, output_w = input_w + pad_l + pad_r;
  TORCH_CHECK(pad_l < input_w && pad_r < input_w,
              "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
              pad_l, ", ", pad_r, ") at dimension ", dim_w, " of input ", input.sizes());
  TORCH_CHECK(pad_t < input_h && pad_b < input_h,
              "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (",
              pad_t, ", ", pad_b, ") at dimension ", dim_h, " of input ", input.sizes());
  TORCH_CHECK(output_w >= 1 || output_h >= 1, "input (H: ", input_h, ", W: ", input_w,
              ") is too small. Calculated output H: ", output_h, " W: ", output_w);
  if (batched) return {input.size(0), nplane, output_h, output_w};
  return {nplane, output_h, output_w};
}

// The backward ops' size checks (reflection_pad2d_backward_out_template,
// replication_pad{2,3}d_backward_out_cpu_template), `grad` naming grad_output as each does.
void check_backward_sizes(int dims, const char* grad, const at::Tensor& grad_output, const at::Tensor& input,
                          at::IntArrayRef padding) {
  TORCH_CHECK(static_cast<int>(padding.size()) == 2 * dims, "padding size is expected to be ", 2 * dims);
  TORCH_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2, "Expected ", dims + 1, "D or ", dims + 2,
              "D input for padding of ", dims, " dims, but got: ", input.sizes());
  TORCH_CHECK(grad_output.dim() == input.dim(), grad, " expected to have ", input.dim(), " dims, but got: ",
              grad_output.sizes());
  static const char* const names[] = {"width", "height", "depth"};
  for (int k = 0; k < dims; ++k) {
    const int64_t d = input.dim() - 1 - k;
    const int64_t expected = input.size(d) + padding[2 * k] + padding[2 * k + 1];
    TORCH_CHECK(expected == grad_output.size(d), grad, " ", names[k], " unexpected. Expected: ", expected,
                ", Got: ", grad_output.size(d));
  }
}

// grad_input of an unstructured backward op: allocated (functional) or resized (out=) in the
// input's memory format, as the CPU's.
at::Tensor& prepare_grad_input(at::Tensor& grad_input, const at::Tensor& input) {
  return prepare_out(grad_input, input.sizes(), input.options().memory_format(input.suggest_memory_format()));
}

}  // namespace

// ---- structured: ATen's meta functions checked the arguments and shaped the outputs -------------

TORCH_IMPL_FUNC(reflection_pad1d_out)(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) {
  pad_forward("reflection_pad1d", CoordMap::Reflect, self, padding, out);
}

TORCH_IMPL_FUNC(reflection_pad1d_backward_out)(const at::Tensor& grad_output, const at::Tensor& self,
                                               at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward("reflection_pad1d_backward", CoordMap::Reflect, grad_output, self, padding, grad_input);
}

TORCH_IMPL_FUNC(reflection_pad3d_out)(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) {
  out.resize_(out.sizes(), self.suggest_memory_format());  // as the CPU's impl (channels_last_3d stays)
  pad_forward("reflection_pad3d", CoordMap::Reflect, self, padding, out);
}

TORCH_IMPL_FUNC(reflection_pad3d_backward_out)(const at::Tensor& grad_output, const at::Tensor& self,
                                               at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward("reflection_pad3d_backward", CoordMap::Reflect, grad_output, self, padding, grad_input);
}

TORCH_IMPL_FUNC(replication_pad1d_out)(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) {
  pad_forward("replication_pad1d", CoordMap::Clamp, self, padding, out);
}

TORCH_IMPL_FUNC(replication_pad1d_backward_out)(const at::Tensor& grad_output, const at::Tensor& self,
                                                at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward("replication_pad1d_backward", CoordMap::Clamp, grad_output, self, padding, grad_input);
}

TORCH_IMPL_FUNC(replication_pad2d_out)(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) {
  // As the CPU's impl (ATen's meta leaves it to the device): the output takes the input's memory
  // format (channels_last stays; CUDA's is contiguous).
  out.resize_(out.sizes(), self.suggest_memory_format());
  pad_forward("replication_pad2d", CoordMap::Clamp, self, padding, out);
}

TORCH_IMPL_FUNC(replication_pad3d_out)(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) {
  out.resize_(out.sizes(), self.suggest_memory_format());  // as the CPU's impl (channels_last_3d stays)
  pad_forward("replication_pad3d", CoordMap::Clamp, self, padding, out);
}

// ---- unstructured: out-as-primary (an undefined out/grad_input from the functional overload) ----

at::Tensor& reflection_pad2d_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out) {
  const std::vector<int64_t> sizes = reflection_pad2d_sizes(self, padding);
  // The CPU's output keeps a 4-d input's memory format (CUDA's is contiguous; ATen's meta
  // function follows the CPU for devices other than cuda).
  const auto format = self.dim() == 4 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  prepare_out(out, sizes, self.options().memory_format(format));
  pad_forward("reflection_pad2d", CoordMap::Reflect, self, padding, out);
  return out;
}

at::Tensor& reflection_pad2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                          at::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward_sizes(2, "grad_output", grad_output, self, padding);
  prepare_grad_input(grad_input, self);
  pad_backward("reflection_pad2d_backward", CoordMap::Reflect, grad_output, self, padding, grad_input);
  return grad_input;
}

at::Tensor& replication_pad2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                           at::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward_sizes(2, "gradOutput", grad_output, self, padding);
  prepare_grad_input(grad_input, self);
  pad_backward("replication_pad2d_backward", CoordMap::Clamp, grad_output, self, padding, grad_input);
  return grad_input;
}

at::Tensor& replication_pad3d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                           at::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward_sizes(3, "gradOutput", grad_output, self, padding);
  prepare_grad_input(grad_input, self);
  pad_backward("replication_pad3d_backward", CoordMap::Clamp, grad_output, self, padding, grad_input);
  return grad_input;
}

}  // namespace foo::native
