// resize_ and the set_ family: change which storage bytes a tensor describes.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>

#include "native/resize_.h"
#include "native/set_empty.h"
#include "native/set_source_storage.h"
#include "native/set_source_storage_offset.h"
#include "native/set_source_tensor.h"
#include "runtime/allocator.h"

namespace foo::native {
namespace {

// Bytes a tensor with these sizes/strides/offset reaches in its storage.
size_t bytes_needed(at::IntArrayRef size, at::IntArrayRef stride, int64_t offset, size_t itemsize) {
  return at::detail::computeStorageNbytes(size, stride, itemsize, static_cast<size_t>(offset));
}

void check_storage_on_foo(const char* op, const at::Storage& storage) {
  TORCH_CHECK(storage.device().type() == c10::DeviceType::PrivateUse1 || storage.nbytes() == 0, op,
              ": expected a storage on the foo device, got one on ", storage.device());
}

}  // namespace

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  const auto needed = at::detail::computeStorageNbytesContiguous(size, self.element_size(),
                                                                 static_cast<size_t>(self.storage_offset()));
  if (needed > self.storage().nbytes()) foo::runtime::resize_storage_bytes(self.storage(), needed);
  if (memory_format.has_value()) impl->empty_tensor_restride(*memory_format);
  return self;
}

at::Tensor& set_source_storage_offset(at::Tensor& self, at::Storage source, int64_t storage_offset,
                                      at::IntArrayRef size, at::IntArrayRef stride) {
  check_storage_on_foo("set_", source);
  TORCH_CHECK(storage_offset >= 0, "set_: negative storage offset ", storage_offset);
  c10::DimVector contiguous;
  if (stride.empty()) {  // aten's convention: no strides means contiguous
    contiguous = c10::contiguous_strides(size);
    stride = contiguous;
  }
  TORCH_CHECK(size.size() == stride.size(), "set_: got ", size.size(), " sizes but ", stride.size(), " strides");
  const auto needed = bytes_needed(size, stride, storage_offset, self.element_size());
  TORCH_CHECK(needed <= source.nbytes(), "set_: a tensor of size ", size, ", stride ", stride, " and offset ",
              storage_offset, " needs ", needed, " bytes but the storage has ", source.nbytes());
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  impl->set_sizes_and_strides(size, stride, storage_offset);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  const int64_t numel = static_cast<int64_t>(source.nbytes() / self.element_size());
  return set_source_storage_offset(self, std::move(source), 0, {numel}, {1});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_source_storage_offset(self, source.storage(), source.storage_offset(), source.sizes(),
                                   source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, &foo::runtime::allocator(), /*resizable=*/true);
  return set_source_storage_offset(self, std::move(empty), 0, {0}, {1});
}

}  // namespace foo::native
