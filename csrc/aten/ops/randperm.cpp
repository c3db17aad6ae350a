// torch.randperm on foo (kernels/ops/randperm.h): ATen's checks (n and the dtype's exact range), then
// random keys from the foo generator sorted by foo's sort; the positions are the permutation.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>

#include "aten/core/random_common.h"
#include "kernels/ops/randperm.h"
#include "native/randperm_out.h"

namespace foo::native {

at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!generator.has_value() || generator->device() == out.device(), "Expected a '", out.device(),
              "' generator device but found '", generator.has_value() ? generator->device() : out.device(), "'");
  at::native::check_supported_max_int_with_precision(n, out);
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  auto keys = at::empty({n}, out.options().dtype(at::kLong));
  const auto state = reserve_philox(out.device().index(), std::move(generator), static_cast<uint64_t>(n));
  FOO_CALL_KERNEL(randperm_keys, current_kernel_stream(out), n, state.seed, state.offset,
                  keys.mutable_data_ptr<int64_t>());
  // foo's sort orders (key, position) pairs totally, so equal keys keep index order.
  out.copy_(std::get<1>(at::sort(keys, /*stable=*/std::optional<bool>(true), /*dim=*/0)));
  return out;
}

}  // namespace foo::native
