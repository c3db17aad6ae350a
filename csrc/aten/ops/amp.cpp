// GradScaler's two device ops (kernels/ops/amp.h), with the checks of CUDA's implementations.
#include <ATen/ATen.h>

#include "aten/core/layout.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/amp.h"
#include "native/amp_non_finite_check_and_unscale_.h"
#include "native/amp_update_scale_.h"
#include "runtime/stream.h"

namespace foo::native {

void amp_non_finite_check_and_unscale_(at::TensorList self, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  TORCH_CHECK(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(inv_scale.scalar_type() == at::kFloat, "inv_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  for (const auto& grad : self) {
    if (!grad.defined() || grad.numel() == 0) continue;
    TORCH_CHECK(grad.layout() == at::kStrided, "one of scaled_grads was not a strided tensor.");
    TORCH_CHECK(at::isFloatingType(grad.scalar_type()), "_amp_foreach_non_finite_check_and_unscale_: ",
                "expected floating-point gradients, got ", grad.scalar_type());
    const auto stream = stream_of(grad);
    at::Tensor target = grad;
    write_in_place(target, [&](at::Tensor& t, const foo::kernels::Layout& layout) {
      // A temporary (too many dims) starts as a copy of the gradient.
      if (!t.is_same(grad)) t.copy_(grad);
      FOO_CALL_KERNEL(amp_unscale, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                      found_inf.mutable_data_ptr<float>(), inv_scale.const_data_ptr<float>());
    });
  }
}

at::Tensor& amp_update_scale_(at::Tensor& self, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                              double scale_growth_factor, double scale_backoff_factor, int64_t growth_interval) {
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(self.numel() == 1, "current_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.");
  TORCH_CHECK(self.scalar_type() == at::kFloat, "current_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  FOO_CALL_KERNEL(amp_update_scale, stream_of(self),
                  self.mutable_data_ptr<float>(), growth_tracker.mutable_data_ptr<int32_t>(),
                  found_inf.const_data_ptr<float>(), scale_growth_factor, scale_backoff_factor, growth_interval);
  return self;
}

}  // namespace foo::native
