// Random fills drawn from the foo generator (Philox), so torch.foo.manual_seed reproduces them
// and the sim and cuda drivers give the same numbers for the same seed: normal_, uniform_,
// bernoulli_ (p a float or a tensor), bernoulli (functional and out=) and native_dropout (what
// F.dropout calls on a foo tensor). A strided self is filled in place, element i (row-major)
// taking the draw of counter i / 2 as a contiguous tensor would (kernels/random.h).
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/DistributionsHelper.h>

#include "aten/layout.h"
#include "kernels/random.h"
#include "native/bernoulli_float_.h"
#include "native/bernoulli_out.h"
#include "native/bernoulli_tensor_.h"
#include "native/native_dropout.h"
#include "native/normal_.h"
#include "native/uniform_.h"
#include "runtime/generator.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::Layout;

foo::runtime::PhiloxState reserve(const at::Tensor& self, std::optional<at::Generator> generator) {
  auto* gen = at::get_generator_or_default<foo::runtime::FooGeneratorImpl>(
      generator, foo::runtime::default_generator(self.device().index()));
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return gen->reserve(static_cast<uint64_t>(self.numel()));
}

void check_floating(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"", op,
                              "\" not implemented for foo tensors of dtype ", self.scalar_type());
}

enum class Distribution { Uniform, Normal };

at::Tensor& fill_random(at::Tensor& self, std::optional<at::Generator> generator, Distribution dist, double a,
                        double b, const char* op) {
  check_floating(self, op);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  const auto state = reserve(self, std::move(generator));
  auto stream = foo::runtime::current_native_stream(self.device().index());
  return write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    if (dist == Distribution::Normal) {
      FOO_CALL_KERNEL(normal_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                      state.seed, state.offset, a, b);
    } else {
      FOO_CALL_KERNEL(uniform_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                      state.seed, state.offset, a, b);
    }
  });
}

void check_p(double p) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}

at::Tensor& bernoulli_scalar(at::Tensor& self, double p, std::optional<at::Generator> generator) {
  check_p(p);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  const auto state = reserve(self, std::move(generator));
  auto stream = foo::runtime::current_native_stream(self.device().index());
  return write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(bernoulli_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, p, nullptr, foo::kernels::DType::Float64, Layout{}, nullptr);
  });
}

// self[i] = u_i < p[i], p broadcast to self's shape. Like the CPU, a p outside [0, 1] is an error:
// the kernel flags it on the device and the host reads the flag (one synchronisation).
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> generator) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(p.scalar_type()),
                              "\"bernoulli_\" not implemented for a probability tensor of dtype ", p.scalar_type());
  auto p_expanded = p.expand(self.sizes());
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  auto p_layout = layout_of(p_expanded);
  if (!p_layout) {
    p_expanded = p_expanded.contiguous();
    p_layout = Layout{};
  }
  const auto state = reserve(self, std::move(generator));
  auto stream = foo::runtime::current_native_stream(self.device().index());
  auto error = at::zeros({1}, self.options().dtype(at::kInt));
  write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(bernoulli_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, 0.0, p_expanded.const_data_ptr(), kernel_dtype(p.scalar_type()),
                    *p_layout, error.mutable_data_ptr<int>());
  });
  TORCH_CHECK(error.item<int>() == 0, "bernoulli_: expected every probability in p to be in [0, 1] (p_in >= 0 && p_in <= 1)");
  return self;
}

}  // namespace

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  TORCH_CHECK(std >= 0.0, "normal_: expects std >= 0.0, but found std ", std);
  return fill_random(self, std::move(generator), Distribution::Normal, mean, std, "normal_");
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  TORCH_CHECK(from <= to, "uniform_: expects from <= to, but found from=", from, " > to=", to);
  return fill_random(self, std::move(generator), Distribution::Uniform, from, to, "uniform_");
}

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
  auto x = input;
  auto x_layout = layout_of(x);
  if (!x_layout) {
    x = x.contiguous();
    x_layout = Layout{};
  }
  auto out_layout = layout_of(out);
  auto out_target = out, mask_target = mask;
  if (!out_layout || out.strides() != mask.strides()) {
    out_target = at::empty(input.sizes(), input.options());
    mask_target = at::empty(input.sizes(), input.options().dtype(at::kBool));
    out_layout = Layout{};
  }
  const auto state = reserve(input, std::nullopt);
  auto stream = foo::runtime::current_native_stream(input.device().index());
  FOO_CALL_KERNEL(dropout_fill, stream, kernel_dtype(input.scalar_type()), x.const_data_ptr(), *x_layout,
                  out_target.mutable_data_ptr(), mask_target.mutable_data_ptr<bool>(), *out_layout, input.numel(),
                  state.seed, state.offset, keep, scale);
  if (!out_target.is_same(out)) {
    out.copy_(out_target);
    mask.copy_(mask_target);
  }
  return std::make_tuple(out, mask);
}

}  // namespace foo::native
