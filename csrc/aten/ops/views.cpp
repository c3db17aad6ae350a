// View ops: new tensor metadata over the same storage; no data moves. ATen's device-generic
// implementations, which CUDA registers too (TensorShape.cpp): as_strided's argument and storage
// bounds checks (setStrided), view's size inference and stride computation, reshape's alias.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>

#include "native/as_strided.h"
#include "native/reshape_alias.h"
#include "native/view.h"

namespace foo::native {

at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) { return at::native::view(self, size); }

at::Tensor reshape_alias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

}  // namespace foo::native
