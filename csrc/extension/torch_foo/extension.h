#pragma once
// torch_foo/extension.h — include it from an extension's host code (.cpp, next to
// <torch/extension.h>). docs/extensions.md.
//
// What the host side of a foo kernel needs: the stream to launch on, the device allocator, the
// dtype mapping of the kernels, and the macros that declare a launcher for both targets and call
// the one matching the running driver:
//   FOO_DECLARE_KERNEL_IN(my_ext, void, add_one, (torch_foo::Stream, const float*, float*, int64_t))
//   FOO_CALL_KERNEL_IN(my_ext, add_one, torch_foo::current_stream(x), ...)
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>

#include "aten/core/elementwise.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/ops/reduce.h"
#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace torch_foo {

using ::foo::kernels::DType;
using ::foo::kernels::ElementwiseGeometry;
using ::foo::kernels::Stream;
// Dtype sets for check_kernel_dtype below (and dispatch<> on the kernel side).
using ::foo::kernels::kAllTypes;
using ::foo::kernels::kFloatingTypes;
using ::foo::kernels::kIntegralTypes;
using ::foo::kernels::kNumericTypes;

// True when the cuda driver backs the foo device (a kernel then runs its cuda build).
inline bool on_cuda() { return ::foo::kernels::on_cuda(); }

// The driver stream of the current foo stream of `device` (what torch.foo.current_stream() is):
// launch on it so the kernel orders with torch's own work on that stream.
inline Stream current_stream(c10::DeviceIndex device) { return ::foo::runtime::current_native_stream(device); }
inline Stream current_stream(const at::Tensor& on) {
  TORCH_CHECK(on.device().type() == c10::DeviceType::PrivateUse1, "torch_foo::current_stream: tensor is on ",
              on.device(), ", not on a foo device");
  return current_stream(on.device().index());
}

// The foo device's caching allocator (what at::empty(..., device="foo") uses).
inline c10::Allocator& allocator() { return ::foo::runtime::allocator(); }

// The kernels' element type of a tensor's dtype, for torch_foo::dispatch<Types>(dtype, op, f)
// (which throws naming the op for a dtype outside Types).
inline DType kernel_dtype(c10::ScalarType t) { return ::foo::native::kernel_dtype(t); }
inline DType kernel_dtype(const at::Tensor& t) { return kernel_dtype(t.scalar_type()); }

// NotImplementedError naming the op and dtype unless `types` (torch_foo::kFloatingTypes, ...)
// holds t: the check torch_foo's generated ops make before they launch (aten/core/kernel_dtype.h).
using ::foo::native::check_kernel_dtype;

// The elementwise launcher's host half, at::TensorIterator -> kernel geometry (aten/core/elementwise.h).
using ::foo::native::run_elementwise;

}  // namespace torch_foo
