// view_as_real and view_as_complex: metadata over the same storage, device-independent, so
// ATen's own implementations (the ones CPU and CUDA register) serve foo tensors too.
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>

#include "native/view_as_complex.h"
#include "native/view_as_real.h"

namespace foo::native {

at::Tensor view_as_real(const at::Tensor& self) { return at::native::view_as_real(self); }

at::Tensor view_as_complex(const at::Tensor& self) { return at::native::view_as_complex(self); }

}  // namespace foo::native
