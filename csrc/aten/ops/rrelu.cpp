// rrelu_with_noise (what F.rrelu and nn.RReLU run): in training each x <= 0 is scaled by a
// uniform draw in [lower, upper] from the foo generator and the draw is kept in `noise` for the
// backward; in eval it is the leaky relu of slope (lower + upper) / 2. One kernel does both
// (kernels/ops/random.h), so eval mode does not fall back to leaky_relu on the CPU.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/random_common.h"
#include "kernels/ops/random.h"
#include "native/rrelu_with_noise.h"
#include "native/rrelu_with_noise_.h"
#include "native/rrelu_with_noise_out.h"

namespace foo::native {
namespace {

using foo::kernels::Layout;

// The core: out allocated with self's shape (it may be self).
void rrelu_core(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower, const at::Scalar& upper,
                bool training, std::optional<at::Generator> generator, at::Tensor& out) {
  check_kernel_dtype("rrelu_with_noise", self.scalar_type(), foo::kernels::kFloatingTypes);
  TORCH_CHECK(self.sizes() == noise.sizes(), "noise tensor shape must match self tensor shape. Got self.shape = ",
              self.sizes(), " noise.shape = ", noise.sizes());
  if (self.numel() == 0) return;
  // As the CPU: the bounds in opmath_t (float for float and the 16-bit types), the eval slope as
  // ATen computes (lower_tensor + upper_tensor) / 2 (double tensors for Python floats).
  const bool wide = self.scalar_type() == at::kDouble;
  const double lo = wide ? lower.to<double>() : lower.to<float>();
  const double hi = wide ? upper.to<double>() : upper.to<float>();
  const double slope = ((at::scalar_to_tensor(lower) + at::scalar_to_tensor(upper)) / 2).item<double>();
  const auto [x, x_layout] = readable_layout(self);
  const auto state = training ? reserve_philox(self.device().index(), std::move(generator), self.numel())
                              : foo::runtime::PhiloxState{0, 0};
  const auto stream = current_kernel_stream(self);
  auto noise_target = noise;
  auto noise_layout = layout_of(noise);
  if (training && !noise_layout) {
    noise_target = at::empty(noise.sizes(), noise.options());
    noise_layout = Layout{};
  }
  write_in_place(out, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(rrelu_fill, stream, kernel_dtype(t.scalar_type()), x.const_data_ptr(), x_layout,
                    t.mutable_data_ptr(), layout, training ? noise_target.mutable_data_ptr() : nullptr,
                    noise_layout.value_or(Layout{}), t.numel(), state.seed, state.offset, training ? lo : slope, hi,
                    training);
  });
  if (training && !noise_target.is_same(noise)) noise.copy_(noise_target);
}

}  // namespace

at::Tensor& rrelu_with_noise_out(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                                 const at::Scalar& upper, bool training, std::optional<at::Generator> generator,
                                 at::Tensor& out) {
  at::native::resize_output(out, self.sizes());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "rrelu_with_noise: expected out of dtype ", self.scalar_type(),
              ", got ", out.scalar_type());
  rrelu_core(self, noise, lower, upper, training, std::move(generator), out);
  return out;
}

at::Tensor rrelu_with_noise(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                            const at::Scalar& upper, bool training, std::optional<at::Generator> generator) {
  auto out = at::empty_like(self, at::MemoryFormat::Contiguous);
  rrelu_core(self, noise, lower, upper, training, std::move(generator), out);
  return out;
}

at::Tensor& rrelu_with_noise_(at::Tensor& self, at::Tensor& noise, const at::Scalar& lower, const at::Scalar& upper,
                              bool training, std::optional<at::Generator> generator) {
  rrelu_core(self, noise, lower, upper, training, std::move(generator), self);
  return self;
}

}  // namespace foo::native
