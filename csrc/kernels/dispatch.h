#pragma once
// Host side (csrc/aten): declares a kernel launcher for both targets and calls the one that
// matches the running driver.

namespace foo::kernels {
using Stream = void*;
// True when the cuda driver backs the device (decided once, at first use). Defined by the driver
// layer (runtime/driver/driver_select.cpp); a mismatch fails libtorch_foo's link
// (-Wl,--no-undefined).
bool on_cuda();
}  // namespace foo::kernels

// FOO_DECLARE_KERNEL(void, axpby, (Stream, const float*, ...)) declares the launcher in both
// target namespaces; the .cu file defines it once, for whichever target compiles it.
#define FOO_DECLARE_KERNEL(ret, name, params) \
  namespace foo::kernels {                    \
  namespace sim { ret name params; }          \
  namespace cuda { ret name params; }         \
  }

#ifdef FOO_WITH_CUDA
#define FOO_CALL_KERNEL(name, ...)                                              \
  (::foo::kernels::on_cuda() ? ::foo::kernels::cuda::name(__VA_ARGS__)         \
                             : ::foo::kernels::sim::name(__VA_ARGS__))
#else
#define FOO_CALL_KERNEL(name, ...) ::foo::kernels::sim::name(__VA_ARGS__)
#endif
