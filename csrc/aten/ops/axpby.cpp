// foo::axpby — the first custom op: out = a * x + b * y, run by our own kernel.
#include <ATen/ATen.h>

#include "kernels/ops/axpby.h"
#include "native/axpby.h"
#include "runtime/stream.h"

namespace foo::native {

at::Tensor axpby(const at::Tensor& x, const at::Tensor& y, double a, double b) {
  TORCH_CHECK(x.sizes() == y.sizes(), "foo::axpby: x and y must have the same shape, got ", x.sizes(), " and ", y.sizes());
  TORCH_CHECK(x.scalar_type() == y.scalar_type(), "foo::axpby: x and y must have the same dtype, got ",
              x.scalar_type(), " and ", y.scalar_type());
  const auto xc = x.contiguous(), yc = y.contiguous();
  auto out = at::empty_like(xc, at::MemoryFormat::Contiguous);
  auto stream = foo::runtime::current_native_stream(x.device().index());
  switch (x.scalar_type()) {
    case at::kFloat:
      FOO_CALL_KERNEL(axpby, stream, xc.const_data_ptr<float>(), yc.const_data_ptr<float>(),
                      out.mutable_data_ptr<float>(), static_cast<float>(a), static_cast<float>(b), out.numel());
      break;
    case at::kDouble:
      FOO_CALL_KERNEL(axpby, stream, xc.const_data_ptr<double>(), yc.const_data_ptr<double>(),
                      out.mutable_data_ptr<double>(), a, b, out.numel());
      break;
    default:
      TORCH_CHECK(false, "foo::axpby: unsupported dtype ", x.scalar_type(), " (float32 and float64 are supported)");
  }
  return out;
}

}  // namespace foo::native
