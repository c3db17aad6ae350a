// torch_foo's C ABI (torch_foo/c_abi.h): the torch-version-independent entry points for stable-ABI
// extensions, over the runtime's C++ API. No exception crosses the boundary: each becomes a
// nonzero return and a per-thread message.
#include "torch_foo/c_abi.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>

#include <exception>
#include <string>

#include "kernels/core/dispatch.h"
#include "runtime/allocator.h"
#include "runtime/stream.h"

#define FOO_C_API extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string t_last_error;

template <class F>
int32_t guarded(const char* what, F&& f) {
  try {
    f();
    t_last_error.clear();
    return 0;
  } catch (const std::exception& e) {
    t_last_error = std::string(what) + ": " + e.what();
  } catch (...) {
    t_last_error = std::string(what) + ": unknown error";
  }
  return 1;
}

c10::Device foo_device(int32_t device) {
  return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
}

}  // namespace

FOO_C_API uint32_t torch_foo_c_abi_version(void) { return TORCH_FOO_C_ABI_VERSION; }

FOO_C_API const char* torch_foo_last_error(void) { return t_last_error.c_str(); }

FOO_C_API int32_t torch_foo_on_cuda(void) {
  int32_t cuda = 0;
  guarded("torch_foo_on_cuda", [&] { cuda = foo::kernels::on_cuda() ? 1 : 0; });
  return cuda;
}

FOO_C_API int32_t torch_foo_native_stream(int32_t device, int64_t stream_id, void** stream) {
  return guarded("torch_foo_native_stream", [&] {
    *stream = foo::runtime::native_stream(c10::Stream(c10::Stream::UNSAFE, foo_device(device), stream_id));
  });
}

FOO_C_API int32_t torch_foo_current_stream(int32_t device, void** stream) {
  return guarded("torch_foo_current_stream", [&] {
    *stream = foo::runtime::current_native_stream(static_cast<c10::DeviceIndex>(device));
  });
}

FOO_C_API int32_t torch_foo_malloc(int32_t device, size_t bytes, void** ptr) {
  return guarded("torch_foo_malloc", [&] {
    const c10::DeviceGuard guard(foo_device(device));
    *ptr = foo::runtime::allocator().raw_allocate(bytes);
  });
}

FOO_C_API int32_t torch_foo_free(void* ptr) {
  return guarded("torch_foo_free", [&] { foo::runtime::allocator().raw_deallocate(ptr); });
}
