// Random fills drawn from the foo generator (Philox), so torch.foo.manual_seed reproduces them
// and the sim and cuda drivers give the same numbers for the same seed.
#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>

#include "FooNativeFunctions.h"
#include "kernels/random.h"
#include "runtime/generator.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

enum class Distribution { Uniform, Normal };

template <typename T>
void launch_fill(foo::kernels::Stream stream, T* out, int64_t n, foo::runtime::PhiloxState state,
                 Distribution dist, double a, double b) {
  if (dist == Distribution::Normal) FOO_CALL_KERNEL(normal_fill, stream, out, n, state.seed, state.offset, a, b);
  else FOO_CALL_KERNEL(uniform_fill, stream, out, n, state.seed, state.offset, a, b);
}

at::Tensor& fill_random(at::Tensor& self, std::optional<at::Generator> generator, Distribution dist,
                        double a, double b, const char* op) {
  if (self.numel() == 0) return self;
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, op,
              ": foo supports float32 and float64 here, got ", self.scalar_type());
  auto target = self.is_contiguous() ? self : at::empty(self.sizes(), self.options());
  auto* gen = at::get_generator_or_default<foo::runtime::FooGeneratorImpl>(
      generator, foo::runtime::default_generator(self.device().index()));
  foo::runtime::PhiloxState state;
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    state = gen->reserve(static_cast<uint64_t>(target.numel()));
  }
  auto stream = foo::runtime::current_native_stream(self.device().index());
  if (target.scalar_type() == at::kFloat) {
    launch_fill(stream, target.mutable_data_ptr<float>(), target.numel(), state, dist, a, b);
  } else {
    launch_fill(stream, target.mutable_data_ptr<double>(), target.numel(), state, dist, a, b);
  }
  if (!target.is_same(self)) self.copy_(target);
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

}  // namespace foo::native
