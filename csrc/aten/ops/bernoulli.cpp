// bernoulli_ (p a float or a tensor), bernoulli (functional and out=) and native_dropout (what
// F.dropout calls on a foo tensor), drawn from the foo generator (kernels/ops/random.h).
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "aten/core/random_common.h"
#include "kernels/ops/random.h"
#include "runtime/device_error.h"
#include "native/bernoulli_float_.h"
#include "native/bernoulli_out.h"
#include "native/bernoulli_tensor_.h"
#include "native/native_dropout.h"

namespace foo::native {
namespace {

using foo::kernels::Layout;

void check_p(double p) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}

at::Tensor& bernoulli_scalar(at::Tensor& self, double p, std::optional<at::Generator> generator) {
  check_p(p);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  const auto state = reserve_philox(self.device().index(), std::move(generator), self.numel());
  const auto stream = current_kernel_stream(self);
  return write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(bernoulli_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, p, nullptr, foo::kernels::DType::Float64, Layout{},
                    foo::kernels::DeviceErrorSite{});
  });
}

// self[i] = u_i < p[i], p broadcast to self's shape. Like the CPU, a p outside [0, 1] is an error:
// the kernel reports it on the device, raised at the host's next wait (runtime/device_error.h);
// the op does not wait.
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> generator) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(p.scalar_type()),
                              "\"bernoulli_\" not implemented for a probability tensor of dtype ", p.scalar_type());
  const auto p_broadcast = p.expand(self.sizes());  // a shape error even when self is empty
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  const auto [p_expanded, p_layout] = readable_layout(p_broadcast);
  const auto state = reserve_philox(self.device().index(), std::move(generator), self.numel());
  const auto stream = current_kernel_stream(self);
  const auto error = foo::runtime::device_error_site(self.device().index(), stream, "bernoulli_",
                                                    foo::kernels::DeviceErrorKind::BernoulliProbability);
  write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(bernoulli_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, 0.0, p_expanded.const_data_ptr(), kernel_dtype(p.scalar_type()),
                    p_layout, error);
  });
  foo::runtime::raise_device_error_if_blocking(self.device().index());
  return self;
}

}  // namespace

at::Tensor& bernoulli_float_(at::Tensor& self, double p, std::optional<at::Generator> generator) {
  return bernoulli_scalar(self, p, std::move(generator));
}

at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> generator) {
  return bernoulli_tensor(self, p, std::move(generator));
}

// bernoulli(self) and bernoulli.out: self holds the probabilities; the functional result has
// self's dtype and strides, out= is resized to self's shape and keeps its dtype.
at::Tensor& bernoulli_out(const at::Tensor& self, std::optional<at::Generator> generator, at::Tensor& out) {
  if (!out.defined()) {
    out = at::empty_like(self, at::MemoryFormat::Preserve);
  } else {
    out.resize_(self.sizes());
  }
  return bernoulli_tensor(out, self, std::move(generator));
}

// What F.dropout(x, p, training=True) runs on foo (ATen's dropout takes the fused path for
// PrivateUse1 tensors). As the CPU: the mask keeps each element with probability 1 - p, the
// output is x * mask * (1 / (1 - p)) (0 when p == 1); outputs take x's strides.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0) return std::make_tuple(input, at::empty_like(input));
  if (train.has_value() && !*train) {
    return std::make_tuple(input.clone(), at::ones_like(input, input.options().dtype(at::kBool)));
  }
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), "result type Float can't be cast to the desired output type ",
              input.scalar_type());
  const double keep = 1.0 - p;
  check_p(keep);
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  auto out = at::empty_like(input);
  auto mask = at::empty_like(input, input.options().dtype(at::kBool));
  const auto [x, x_layout] = readable_layout(input);
  auto out_layout = layout_of(out);
  auto out_target = out, mask_target = mask;
  if (!out_layout || out.strides() != mask.strides()) {
    out_target = at::empty(input.sizes(), input.options());
    mask_target = at::empty(input.sizes(), input.options().dtype(at::kBool));
    out_layout = Layout{};
  }
  const auto state = reserve_philox(input.device().index(), std::nullopt, input.numel());
  FOO_CALL_KERNEL(dropout_fill, current_kernel_stream(input), kernel_dtype(input.scalar_type()), x.const_data_ptr(),
                  x_layout, out_target.mutable_data_ptr(), mask_target.mutable_data_ptr<bool>(), *out_layout,
                  input.numel(), state.seed, state.offset, keep, scale);
  if (!out_target.is_same(out)) {
    out.copy_(out_target);
    mask.copy_(mask_target);
  }
  return std::make_tuple(out, mask);
}

}  // namespace foo::native
