// Resampling, forward and backward (kernels/ops/upsample.h): what F.interpolate reaches for modes
// nearest, nearest-exact (1-d, 2-d, 3-d), linear, bilinear, bicubic and trilinear. All are
// structured: ATen's meta functions (run by the generated wrappers) check the arguments and shape
// the outputs; these implement only impl(). Scales are computed on the host with UpSample.h's own
// helpers, in the type the CPU computes them in.
#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>

#include "aten/core/image.h"
#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/upsample.h"
#include "native/_upsample_nearest_exact1d_backward_out.h"
#include "native/_upsample_nearest_exact1d_out.h"
#include "native/_upsample_nearest_exact2d_backward_out.h"
#include "native/_upsample_nearest_exact2d_out.h"
#include "native/_upsample_nearest_exact3d_backward_out.h"
#include "native/_upsample_nearest_exact3d_out.h"
#include "native/upsample_bicubic2d_backward_out.h"
#include "native/upsample_bicubic2d_out.h"
#include "native/upsample_bilinear2d_backward_out.h"
#include "native/upsample_bilinear2d_out.h"
#include "native/upsample_linear1d_backward_out.h"
#include "native/upsample_linear1d_out.h"
#include "native/upsample_nearest1d_backward_out.h"
#include "native/upsample_nearest1d_out.h"
#include "native/upsample_nearest2d_backward_out.h"
#include "native/upsample_nearest2d_out.h"
#include "native/upsample_nearest3d_backward_out.h"
#include "native/upsample_nearest3d_out.h"
#include "native/upsample_trilinear3d_backward_out.h"
#include "native/upsample_trilinear3d_out.h"

namespace foo::native {
namespace {

using foo::kernels::UpsampleArgs;
using foo::kernels::UpsampleKind;
using Scale = std::optional<double>;
struct Scales {  // a 1-d op gives only w, a 2-d op h and w
  Scale d, h, w;
};

// Size of spatial dimension i (0: d, 1: h, 2: w) of the 5-d view of t.
int64_t spatial(const at::Tensor& t, int i) {
  const int64_t missing = 5 - t.dim();
  return i < missing ? 1 : t.size(i - missing + 2);
}

// low: the low-resolution side (input forward, grad_input backward); high: the other. The kernel
// writes high forward, low backward.
UpsampleArgs upsample_args(UpsampleKind kind, const char* op, const at::Tensor& low, const at::Tensor& high,
                           const Scales& scales, bool align_corners, bool backward) {
  const bool nearest = kind == UpsampleKind::Nearest || kind == UpsampleKind::NearestExact;
  // Nearest forward moves elements: uint8 images too, as on the CPU.
  check_kernel_dtype(op, low.scalar_type(),
                     foo::kernels::kFloatingTypes |
                         (nearest && !backward ? foo::kernels::dtype_bit(foo::kernels::DType::UInt8) : 0u));
  UpsampleArgs a{};
  a.kind = kind;
  a.dtype = kernel_dtype(low.scalar_type());
  a.op = op;
  a.n = low.size(0);
  a.c = low.size(1);
  int64_t* in[3] = {&a.in_d, &a.in_h, &a.in_w};
  int64_t* out[3] = {&a.out_d, &a.out_h, &a.out_w};
  double* scale[3] = {&a.scale_d, &a.scale_h, &a.scale_w};
  const Scale given[3] = {scales.d, scales.h, scales.w};
  for (int i = 0; i < 3; ++i) {
    *in[i] = spatial(low, i);
    *out[i] = spatial(high, i);
    if (nearest) {
      *scale[i] = at::native::compute_scales_value<float>(given[i], *in[i], *out[i]);
    } else if (low.scalar_type() == at::kDouble) {
      *scale[i] = at::native::area_pixel_compute_scale<double>(*in[i], *out[i], align_corners, given[i]);
    } else {
      *scale[i] = at::native::area_pixel_compute_scale<float>(*in[i], *out[i], align_corners, given[i]);
    }
  }
  a.align_corners = align_corners;
  // [N, C, L], [N, C, H, W] or [N, C, D, H, W]: 1 to 3 spatial dimensions.
  const int dims = static_cast<int>(low.dim()) - 2;
  a.input = image_ref(low, dims);
  a.output = image_ref(high, dims);
  a.channels_last = walks_channels_last(backward ? low : high, dims);
  return a;
}

void forward(UpsampleKind kind, const char* op, const at::Tensor& input, const at::Tensor& output, const Scales& scales,
             bool align_corners = false) {
  FOO_CALL_KERNEL(upsample_forward, stream_of(input),
                  upsample_args(kind, op, input, output, scales, align_corners, false));
}

void backward(UpsampleKind kind, const char* op, const at::Tensor& grad_output, const at::Tensor& grad_input,
              const Scales& scales, bool align_corners = false) {
  FOO_CALL_KERNEL(upsample_backward, stream_of(grad_output),
                  upsample_args(kind, op, grad_input, grad_output, scales, align_corners, true));
}

constexpr auto kNearest = UpsampleKind::Nearest;
constexpr auto kExact = UpsampleKind::NearestExact;
constexpr auto kLinear = UpsampleKind::Linear;
constexpr auto kCubic = UpsampleKind::Cubic;

}  // namespace

// ---- structured kernels: ATen's meta functions checked the arguments and shaped the outputs ------
// (output_size and input_size are the shapes the meta functions already gave the tensors.)

using at::IntArrayRef;
using at::Tensor;

// nearest
TORCH_IMPL_FUNC(upsample_nearest1d_out)(const Tensor& in, IntArrayRef, Scale w, const Tensor& out) {
  forward(kNearest, "upsample_nearest1d", in, out, {{}, {}, w});
}
TORCH_IMPL_FUNC(upsample_nearest1d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale w, const Tensor& gi) {
  backward(kNearest, "upsample_nearest1d_backward", go, gi, {{}, {}, w});
}
TORCH_IMPL_FUNC(upsample_nearest2d_out)(const Tensor& in, IntArrayRef, Scale h, Scale w, const Tensor& out) {
  forward(kNearest, "upsample_nearest2d", in, out, {{}, h, w});
}
TORCH_IMPL_FUNC(upsample_nearest2d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale h, Scale w,
                                                 const Tensor& gi) {
  backward(kNearest, "upsample_nearest2d_backward", go, gi, {{}, h, w});
}
TORCH_IMPL_FUNC(upsample_nearest3d_out)(const Tensor& in, IntArrayRef, Scale d, Scale h, Scale w, const Tensor& out) {
  forward(kNearest, "upsample_nearest3d", in, out, {d, h, w});
}
TORCH_IMPL_FUNC(upsample_nearest3d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale d, Scale h,
                                                 Scale w, const Tensor& gi) {
  backward(kNearest, "upsample_nearest3d_backward", go, gi, {d, h, w});
}

// nearest-exact
TORCH_IMPL_FUNC(_upsample_nearest_exact1d_out)(const Tensor& in, IntArrayRef, Scale w, const Tensor& out) {
  forward(kExact, "_upsample_nearest_exact1d", in, out, {{}, {}, w});
}
TORCH_IMPL_FUNC(_upsample_nearest_exact1d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale w,
                                                        const Tensor& gi) {
  backward(kExact, "_upsample_nearest_exact1d_backward", go, gi, {{}, {}, w});
}
TORCH_IMPL_FUNC(_upsample_nearest_exact2d_out)(const Tensor& in, IntArrayRef, Scale h, Scale w, const Tensor& out) {
  forward(kExact, "_upsample_nearest_exact2d", in, out, {{}, h, w});
}
TORCH_IMPL_FUNC(_upsample_nearest_exact2d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale h, Scale w,
                                                        const Tensor& gi) {
  backward(kExact, "_upsample_nearest_exact2d_backward", go, gi, {{}, h, w});
}
TORCH_IMPL_FUNC(_upsample_nearest_exact3d_out)(const Tensor& in, IntArrayRef, Scale d, Scale h, Scale w,
                                               const Tensor& out) {
  forward(kExact, "_upsample_nearest_exact3d", in, out, {d, h, w});
}
TORCH_IMPL_FUNC(_upsample_nearest_exact3d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, Scale d, Scale h,
                                                        Scale w, const Tensor& gi) {
  backward(kExact, "_upsample_nearest_exact3d_backward", go, gi, {d, h, w});
}

// linear, bilinear, trilinear
TORCH_IMPL_FUNC(upsample_linear1d_out)(const Tensor& in, IntArrayRef, bool align_corners, Scale w, const Tensor& out) {
  forward(kLinear, "upsample_linear1d", in, out, {{}, {}, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_linear1d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, bool align_corners,
                                                Scale w, const Tensor& gi) {
  backward(kLinear, "upsample_linear1d_backward", go, gi, {{}, {}, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_bilinear2d_out)(const Tensor& in, IntArrayRef, bool align_corners, Scale h, Scale w,
                                         const Tensor& out) {
  forward(kLinear, "upsample_bilinear2d", in, out, {{}, h, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_bilinear2d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, bool align_corners,
                                                  Scale h, Scale w, const Tensor& gi) {
  backward(kLinear, "upsample_bilinear2d_backward", go, gi, {{}, h, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_trilinear3d_out)(const Tensor& in, IntArrayRef, bool align_corners, Scale d, Scale h,
                                          Scale w, const Tensor& out) {
  forward(kLinear, "upsample_trilinear3d", in, out, {d, h, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_trilinear3d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, bool align_corners,
                                                   Scale d, Scale h, Scale w, const Tensor& gi) {
  backward(kLinear, "upsample_trilinear3d_backward", go, gi, {d, h, w}, align_corners);
}

// bicubic
TORCH_IMPL_FUNC(upsample_bicubic2d_out)(const Tensor& in, IntArrayRef, bool align_corners, Scale h, Scale w,
                                        const Tensor& out) {
  forward(kCubic, "upsample_bicubic2d", in, out, {{}, h, w}, align_corners);
}
TORCH_IMPL_FUNC(upsample_bicubic2d_backward_out)(const Tensor& go, IntArrayRef, IntArrayRef, bool align_corners,
                                                 Scale h, Scale w, const Tensor& gi) {
  backward(kCubic, "upsample_bicubic2d_backward", go, gi, {{}, h, w}, align_corners);
}

}  // namespace foo::native
