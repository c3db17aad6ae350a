// Operators that talk to the runtime and run no kernel.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "native/record_stream.h"
#include "runtime/allocator.h"

namespace foo::native {

// tensor.record_stream(s): the caching allocator keeps the tensor's block from reuse until the
// work queued on `s` so far is done (allocator.cpp).
void record_stream(at::Tensor& self, at::Stream s) {
  foo::runtime::allocator().recordStream(self.storage().data_ptr(), s);
}

namespace {

// torch._has_compatible_shallow_copy_type for foo. nn.Module.to("foo") keeps each Parameter
// object (and so tied weights and optimizer references) only when this says a CPU tensor may take
// a foo tensor's impl by `param.data = moved`; torch 2.13's TensorImpl answer knows only in-tree
// backends and says False, and its comment asks PrivateUse1 backends to register this operator
// (OpenReg does the same). Registered here, not from the manifest: it is a type query, and must
// not get the generated same-device check (its two tensors are on different devices).
//
// A dense strided tensor of the CPU or of foo: both use the plain TensorImpl, so either may
// become the other by a shallow copy.
bool dense_cpu_or_foo(const at::Tensor& t) {
  return t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested() &&
         (t.device().is_cpu() || t.device().is_privateuseone());
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) ||
         (dense_cpu_or_foo(self) && dense_cpu_or_foo(from));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", &has_compatible_shallow_copy_type);
}

}  // namespace
}  // namespace foo::native
