// resize_ and the set_ family: change which storage bytes a tensor describes. ATen's own logic,
// as CUDA registers it (aten/native/cuda/Resize.{h,cpp}, TensorShape.cpp): its checks
// (checkSetStorage: sizes vs strides, offset, bounds, same device), its set_(Storage) and
// set_(Tensor), and resize_impl_'s rules (same sizes and strides: nothing changes, strides kept;
// a memory format restrides). Only the storage growth is foo's: its allocator and a
// device-to-device copy of the bytes kept (runtime/allocator.h resize_storage_bytes).
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/set_native.h>

#include "native/resize_.h"
#include "native/set_empty.h"
#include "native/set_source_storage.h"
#include "native/set_source_storage_offset.h"
#include "native/set_source_tensor.h"
#include "runtime/allocator.h"

namespace foo::native {
namespace {

// resize_impl_cuda_ with foo's storage growth: sizes (and strides, if given) set, then the
// storage grown to what they reach from the tensor's offset.
void resize_impl(c10::TensorImpl* self, at::IntArrayRef size, at::OptionalIntArrayRef stride) {
  if (self->sizes() == size && (!stride || self->strides() == stride.value())) return;
  const auto itemsize = self->dtype().itemsize();
  const auto offset = static_cast<size_t>(self->storage_offset());
  size_t needed = 0;
  if (stride) {
    self->set_sizes_and_strides(size, *stride);
    needed = at::detail::computeStorageNbytes(size, *stride, itemsize, offset);
  } else {
    self->set_sizes_contiguous(size);
    needed = at::detail::computeStorageNbytesContiguous(size, itemsize, offset);
  }
  // No storage for no elements (a positive offset would otherwise ask for some: ATen's rule).
  if (self->numel() == 0) return;
  const c10::Storage& storage = self->unsafe_storage();
  TORCH_CHECK(storage, "Tensor: invalid null storage");
  if (needed > storage.nbytes()) foo::runtime::resize_storage_bytes(storage, needed);
}

}  // namespace

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  resize_impl(impl, size, /*stride=*/std::nullopt);
  if (memory_format.has_value()) {
    TORCH_CHECK(*memory_format != at::MemoryFormat::Preserve, "Unsupported memory format", *memory_format);
    impl->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor& set_source_storage_offset(at::Tensor& self, at::Storage source, int64_t storage_offset,
                                      at::IntArrayRef size, at::IntArrayRef stride) {
  at::native::checkSetStorage(self, std::move(source), storage_offset, size, stride);
  self.unsafeGetTensorImpl()->set_storage_offset(storage_offset);
  const at::OptionalIntArrayRef strides = stride.data() != nullptr ? at::OptionalIntArrayRef(stride) : std::nullopt;
  resize_impl(self.unsafeGetTensorImpl(), size, strides);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  return at::native::set_(self, std::move(source));
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, &foo::runtime::allocator(), /*resizable=*/true);
  return self.set_(std::move(empty), 0, {0}, {});
}

}  // namespace foo::native
