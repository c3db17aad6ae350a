// torch.multinomial on foo (kernels/ops/multinomial.h): checks and messages as ATen's
// multinomial_out (CPU and CUDA share it), draws from the foo generator.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include "aten/core/random_common.h"
#include "kernels/ops/multinomial.h"
#include "native/multinomial_out.h"

namespace foo::native {
namespace {

// The core: out is an int64 tensor of the result's shape.
void multinomial_into(const at::Tensor& self, int64_t n_sample, bool replacement,
                      std::optional<at::Generator> generator, at::Tensor& out) {
  if (out.numel() == 0) return;
  const auto probs = self.contiguous();
  const int64_t n_cat = self.size(-1);
  const int64_t n_rows = self.dim() == 1 ? 1 : self.size(0);
  const auto count = static_cast<uint64_t>(n_rows) * static_cast<uint64_t>(replacement ? n_sample : n_cat);
  const auto state = reserve_philox(self.device().index(), std::move(generator), count);
  auto scratch = at::empty({n_rows * n_cat}, self.options().dtype(at::kDouble));
  auto error = at::zeros({1}, self.options().dtype(at::kInt));
  auto target = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  FOO_CALL_KERNEL(multinomial, current_kernel_stream(self), kernel_dtype(self.scalar_type()), probs.const_data_ptr(),
                  n_rows, n_cat, n_sample, replacement, state.seed, state.offset,
                  scratch.mutable_data_ptr<double>(), target.mutable_data_ptr<int64_t>(),
                  error.mutable_data_ptr<int>());
  const int flags = error.item<int>();
  TORCH_CHECK(!(flags & 1), "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(!(flags & 2), "invalid multinomial distribution (sum of probabilities <= 0)");
  if (!target.is_same(out)) out.copy_(target);
}

}  // namespace

at::Tensor& multinomial_out(const at::Tensor& self, int64_t n_sample, bool replacement,
                            std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  if (!out.defined()) out = at::empty({0}, self.options().dtype(at::kLong));
  TORCH_CHECK(out.scalar_type() == at::kLong, "multinomial expects Long tensor out, got: ", out.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t n_categories = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= n_categories,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(n_categories <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  if (self.dim() == 1) {
    at::native::resize_output(out, {n_sample});
  } else {
    at::native::resize_output(out, {self.size(0), n_sample});
  }
  multinomial_into(self, n_sample, replacement, std::move(generator), out);
  return out;
}

}  // namespace foo::native
