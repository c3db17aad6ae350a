// View ops: new tensor metadata over the same storage; no data moves.
#include <ATen/InferSize.h>
#include <ATen/TensorUtils.h>
#include <ATen/core/Tensor.h>

#include "native/as_strided.h"
#include "native/reshape_alias.h"
#include "native/view.h"

namespace foo::native {

at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  TORCH_CHECK(size.size() == stride.size(), "as_strided: got ", size.size(), " sizes but ", stride.size(), " strides");
  TORCH_CHECK(offset >= 0, "as_strided: negative storage offset ", offset);
  int64_t last = offset;
  for (size_t d = 0; d < size.size(); ++d) {
    TORCH_CHECK(size[d] >= 0 && stride[d] >= 0, "as_strided: negative size or stride in ", size, " / ", stride);
    if (size[d] == 0) { last = -1; break; }
    last += (size[d] - 1) * stride[d];
  }
  const auto needed = (last + 1) * static_cast<int64_t>(self.element_size());
  TORCH_CHECK(last < 0 || needed <= static_cast<int64_t>(self.storage().nbytes()),
              "as_strided: size ", size, ", stride ", stride, " and offset ", offset, " need ", needed,
              " bytes but the storage has ", self.storage().nbytes());
  auto result = at::detail::make_tensor<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(self.storage()),
                                                         self.key_set(), self.dtype());
  result.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride, offset);
  return result;
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) {
  const auto shape = at::infer_size_dv(size, self.numel());
  const auto stride = at::detail::computeStride(self.sizes(), self.strides(), shape);
  TORCH_CHECK(stride.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension "
              "spans across two contiguous subspaces). Use .reshape(...) instead.");
  return foo::native::as_strided(self, shape, *stride, self.storage_offset());
}

at::Tensor reshape_alias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  return foo::native::as_strided(self, size, stride, self.storage_offset());
}

}  // namespace foo::native
