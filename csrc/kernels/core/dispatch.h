#pragma once
// Host side (csrc/aten): declares a kernel launcher for both targets and calls the one that
// matches the running driver.
#include <stdexcept>
#include <string>

namespace foo::kernels {
using Stream = void*;
// True when the cuda driver backs the device (decided once, at first use). Defined by the driver
// layer (runtime/driver/driver_select.cpp); a mismatch fails libtorch_foo's link
// (-Wl,--no-undefined).
bool on_cuda();
}  // namespace foo::kernels

// FOO_DECLARE_KERNEL(void, histc, (Stream, DType, const void*, ...)) declares the launcher in both
// target namespaces; the .cu file defines it once, for whichever target compiles it.
// The _IN forms do the same in another namespace `ns` (ns::sim / ns::cuda): an extension's
// kernels live in the extension's own namespace (docs/extensions.md).
#define FOO_DECLARE_KERNEL_IN(ns, ret, name, params) \
  namespace ns {                                     \
  namespace sim { ret name params; }                 \
  namespace cuda { ret name params; }                \
  }
#define FOO_DECLARE_KERNEL(ret, name, params) FOO_DECLARE_KERNEL_IN(foo::kernels, ret, name, params)

#ifdef FOO_WITH_CUDA
#define FOO_CALL_KERNEL_IN(ns, name, ...) \
  (::foo::kernels::on_cuda() ? ::ns::cuda::name(__VA_ARGS__) : ::ns::sim::name(__VA_ARGS__))
#elif defined(FOO_SIM_EXTENSION)
// An extension built without the cuda target (no nvcc): the sim launcher, unless the cuda driver
// runs (torch_foo itself was built with nvcc), which gets a clear error instead.
#define FOO_CALL_KERNEL_IN(ns, name, ...) \
  (::foo::kernels::require_sim_target(#ns "::" #name), ::ns::sim::name(__VA_ARGS__))
#else
#define FOO_CALL_KERNEL_IN(ns, name, ...) ::ns::sim::name(__VA_ARGS__)
#endif
#define FOO_CALL_KERNEL(name, ...) FOO_CALL_KERNEL_IN(foo::kernels, name, __VA_ARGS__)

#ifdef FOO_SIM_EXTENSION
namespace foo::kernels {
inline void require_sim_target(const char* kernel) {
  if (on_cuda()) {
    throw std::runtime_error(std::string(kernel) +
                             ": built without the cuda target (no nvcc at build time) but the cuda driver is "
                             "running; rebuild with nvcc or set TORCH_FOO_DRIVER=sim");
  }
}
}  // namespace foo::kernels
#endif
