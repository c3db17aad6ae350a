// upsample_nearest2d and upsample_bilinear2d, forward and backward (kernels/upsample.h): what
// F.interpolate(mode='nearest' | 'bilinear') reaches; the 1-d ops (nearest, linear) run the same
// kernels on [N, C, 1, L] views. All are structured: ATen's meta functions (run by the generated
// wrappers) check the arguments and shape the outputs; these implement only impl().
// Scales are computed on the host with UpSample.h's own helpers, in the type the CPU computes
// them in.
#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>

#include "aten/kernel_dtype.h"
#include "aten/layout.h"
#include "kernels/upsample.h"
#include "native/upsample_bilinear2d_backward_out.h"
#include "native/upsample_bilinear2d_out.h"
#include "native/upsample_linear1d_backward_out.h"
#include "native/upsample_linear1d_out.h"
#include "native/upsample_nearest1d_backward_out.h"
#include "native/upsample_nearest1d_out.h"
#include "native/upsample_nearest2d_backward_out.h"
#include "native/upsample_nearest2d_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::UpsampleArgs;
using foo::kernels::UpsampleKind;

void check_dtype(const char* op, const at::Tensor& t, bool bytes = false) {
  check_kernel_dtype(op, t.scalar_type(),
                     foo::kernels::kFloatingTypes | (bytes ? foo::kernels::dtype_bit(foo::kernels::DType::UInt8) : 0u));
}

// A 1-d [N, C, L] tensor as the 2-d [N, C, 1, L] the kernels take (a view: writes land in t).
at::Tensor as_2d(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(2) : t; }

foo::kernels::ImageRef image_ref(const at::Tensor& t) {
  return {t.data_ptr(), t.stride(0), t.stride(1), 0, t.stride(2), t.stride(3)};
}

// input: the low-resolution side (grad_input backward), output: the high-resolution side.
UpsampleArgs upsample_args(UpsampleKind kind, const at::Tensor& input, const at::Tensor& output,
                           std::optional<double> scales_h, std::optional<double> scales_w, bool align_corners,
                           const at::Tensor& walked) {
  UpsampleArgs a{};
  a.kind = kind;
  a.dtype = kernel_dtype(input.scalar_type());
  a.n = input.size(0);
  a.c = input.size(1);
  a.in_h = input.size(2);
  a.in_w = input.size(3);
  a.out_h = output.size(2);
  a.out_w = output.size(3);
  if (kind == UpsampleKind::Nearest) {
    a.scale_h = at::native::compute_scales_value<float>(scales_h, a.in_h, a.out_h);
    a.scale_w = at::native::compute_scales_value<float>(scales_w, a.in_w, a.out_w);
  } else if (input.scalar_type() == at::kDouble) {
    a.scale_h = at::native::area_pixel_compute_scale<double>(a.in_h, a.out_h, align_corners, scales_h);
    a.scale_w = at::native::area_pixel_compute_scale<double>(a.in_w, a.out_w, align_corners, scales_w);
  } else {
    a.scale_h = at::native::area_pixel_compute_scale<float>(a.in_h, a.out_h, align_corners, scales_h);
    a.scale_w = at::native::area_pixel_compute_scale<float>(a.in_w, a.out_w, align_corners, scales_w);
  }
  a.align_corners = align_corners;
  a.input = image_ref(input);
  a.output = image_ref(output);
  a.channels_last = !walked.is_contiguous() && walked.is_contiguous(at::MemoryFormat::ChannelsLast);
  return a;
}

foo::kernels::Stream stream_of(const at::Tensor& t) { return foo::runtime::current_native_stream(t.device().index()); }

// Launch only: outputs allocated and shaped. The 1-d ops call these on [N, C, 1, L] views.

void upsample_nearest2d_impl(const at::Tensor& input, std::optional<double> scales_h, std::optional<double> scales_w,
                             const at::Tensor& output) {
  check_dtype("upsample_nearest2d", input, /*bytes=*/true);
  FOO_CALL_KERNEL(upsample2d_forward, stream_of(input),
                  upsample_args(UpsampleKind::Nearest, input, output, scales_h, scales_w, false, output));
}

void upsample_nearest2d_backward_impl(const at::Tensor& grad_output, std::optional<double> scales_h,
                                      std::optional<double> scales_w, const at::Tensor& grad_input) {
  check_dtype("upsample_nearest2d_backward", grad_output);
  FOO_CALL_KERNEL(upsample2d_backward, stream_of(grad_output),
                  upsample_args(UpsampleKind::Nearest, grad_input, grad_output, scales_h, scales_w, false, grad_input));
}

void upsample_bilinear2d_impl(const at::Tensor& input, bool align_corners, std::optional<double> scales_h,
                              std::optional<double> scales_w, const at::Tensor& output) {
  check_dtype("upsample_bilinear2d", input);
  FOO_CALL_KERNEL(upsample2d_forward, stream_of(input),
                  upsample_args(UpsampleKind::Bilinear, input, output, scales_h, scales_w, align_corners, output));
}

void upsample_bilinear2d_backward_impl(const at::Tensor& grad_output, bool align_corners,
                                       std::optional<double> scales_h, std::optional<double> scales_w,
                                       const at::Tensor& grad_input) {
  check_dtype("upsample_bilinear2d_backward", grad_output);
  FOO_CALL_KERNEL(upsample2d_backward, stream_of(grad_output),
                  upsample_args(UpsampleKind::Bilinear, grad_input, grad_output, scales_h, scales_w, align_corners,
                                grad_input));
}

}  // namespace

// ---- structured kernels: ATen's meta functions checked the arguments and shaped the outputs ------

TORCH_IMPL_FUNC(upsample_nearest2d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/,
                                        std::optional<double> scales_h, std::optional<double> scales_w,
                                        const at::Tensor& output) {
  upsample_nearest2d_impl(input, scales_h, scales_w, output);
}

TORCH_IMPL_FUNC(upsample_nearest2d_backward_out)(const at::Tensor& grad_output, at::IntArrayRef /*output_size*/,
                                                 at::IntArrayRef /*input_size*/, std::optional<double> scales_h,
                                                 std::optional<double> scales_w, const at::Tensor& grad_input) {
  upsample_nearest2d_backward_impl(grad_output, scales_h, scales_w, grad_input);
}

TORCH_IMPL_FUNC(upsample_bilinear2d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/, bool align_corners,
                                         std::optional<double> scales_h, std::optional<double> scales_w,
                                         const at::Tensor& output) {
  upsample_bilinear2d_impl(input, align_corners, scales_h, scales_w, output);
}

TORCH_IMPL_FUNC(upsample_bilinear2d_backward_out)(const at::Tensor& grad_output, at::IntArrayRef /*output_size*/,
                                                  at::IntArrayRef /*input_size*/, bool align_corners,
                                                  std::optional<double> scales_h, std::optional<double> scales_w,
                                                  const at::Tensor& grad_input) {
  upsample_bilinear2d_backward_impl(grad_output, align_corners, scales_h, scales_w, grad_input);
}

TORCH_IMPL_FUNC(upsample_nearest1d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/,
                                        std::optional<double> scales, const at::Tensor& output) {
  upsample_nearest2d_impl(as_2d(input), std::nullopt, scales, as_2d(output));
}

TORCH_IMPL_FUNC(upsample_nearest1d_backward_out)(const at::Tensor& grad_output, at::IntArrayRef /*output_size*/,
                                                 at::IntArrayRef /*input_size*/, std::optional<double> scales,
                                                 const at::Tensor& grad_input) {
  upsample_nearest2d_backward_impl(as_2d(grad_output), std::nullopt, scales, as_2d(grad_input));
}

TORCH_IMPL_FUNC(upsample_linear1d_out)(const at::Tensor& input, at::IntArrayRef /*output_size*/, bool align_corners,
                                       std::optional<double> scales, const at::Tensor& output) {
  upsample_bilinear2d_impl(as_2d(input), align_corners, std::nullopt, scales, as_2d(output));
}

TORCH_IMPL_FUNC(upsample_linear1d_backward_out)(const at::Tensor& grad_output, at::IntArrayRef /*output_size*/,
                                                at::IntArrayRef /*input_size*/, bool align_corners,
                                                std::optional<double> scales, const at::Tensor& grad_input) {
  upsample_bilinear2d_backward_impl(as_2d(grad_output), align_corners, std::nullopt, scales, as_2d(grad_input));
}

}  // namespace foo::native
