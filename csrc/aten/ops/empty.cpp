// Allocating factories: the only ops that create foo storage.
#include <ATen/EmptyTensor.h>

#include "native/empty_memory_format.h"
#include "native/empty_strided.h"
#include "runtime/allocator.h"

namespace foo::native {
namespace {

constexpr auto kFooKeys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);

void check_factory_options(const char* op, std::optional<at::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, op, ": foo supports only strided tensors, got ", *layout);
  TORCH_CHECK(!pin_memory.value_or(false), op, ": pin_memory applies to CPU tensors, not foo tensors");
}

}  // namespace

// The generated wrapper has already made the requested device current.
at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> /*device*/,
                               std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  check_factory_options("empty.memory_format", layout, pin_memory);
  return at::detail::empty_generic(size, &foo::runtime::allocator(), kFooKeys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> /*device*/,
                         std::optional<bool> pin_memory) {
  check_factory_options("empty_strided", layout, pin_memory);
  return at::detail::empty_strided_generic(size, stride, &foo::runtime::allocator(), kFooKeys,
                                           c10::dtype_or_default(dtype));
}

}  // namespace foo::native
