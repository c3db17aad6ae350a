// torch.randperm on foo (kernels/randperm.h): ATen's checks (n and the dtype's exact range), a
// permutation drawn from the foo generator.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>

#include "FooNativeFunctions.h"
#include "aten/random_common.h"
#include "kernels/randperm.h"

namespace foo::native {

at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!generator.has_value() || generator->device() == out.device(), "Expected a '", out.device(),
              "' generator device but found '", generator.has_value() ? generator->device() : out.device(), "'");
  at::native::check_supported_max_int_with_precision(n, out);
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  int64_t padded = 1;
  while (padded < n) padded *= 2;
  auto keys = at::empty({padded}, out.options().dtype(at::kLong));  // uint64 bits
  auto indices = at::empty({padded}, out.options().dtype(at::kLong));
  auto target = out.is_contiguous() ? out : at::empty({n}, out.options());
  const auto state = reserve_philox(out.device().index(), std::move(generator), static_cast<uint64_t>(n));
  FOO_CALL_KERNEL(randperm, current_kernel_stream(out), kernel_dtype(out.scalar_type()), n, state.seed, state.offset,
                  static_cast<uint64_t*>(keys.mutable_data_ptr()), indices.mutable_data_ptr<int64_t>(),
                  target.mutable_data_ptr());
  if (!target.is_same(out)) out.copy_(target);
  return out;
}

}  // namespace foo::native
