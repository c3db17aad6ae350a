#include "aten/core/device_memory.h"

#include <ATen/ATen.h>

#include "runtime/device_error.h"
#include "runtime/stream.h"
#include "runtime/sync_debug.h"

namespace foo::native {
namespace {

using foo::runtime::CopyKind;
using foo::runtime::driver;

// [first, last) element range of the storage that `t` reaches, strides of any sign.
std::pair<int64_t, int64_t> storage_span(const at::Tensor& t) {
  int64_t first = t.storage_offset(), last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.size(d) - 1) * t.stride(d);
    if (reach < 0) first += reach; else last += reach;
  }
  return {first, last + 1};
}

char* storage_bytes(const at::Tensor& t) {
  return static_cast<char*>(t.storage().mutable_data());
}

}  // namespace

at::Tensor stage_to_cpu(const at::Tensor& src, const char* why) {
  auto options = src.options().device(at::kCPU);
  if (src.numel() == 0) return at::empty(src.sizes(), options);
  const auto [first, last] = storage_span(src);
  const auto itemsize = static_cast<int64_t>(src.element_size());
  auto buffer = at::empty({(last - first) * itemsize}, options.dtype(at::kByte));
  auto stream = foo::runtime::current_native_stream(src.device().index());
  foo::runtime::check_sync(why);  // before the copy: an error must leave nothing in flight
  driver().memcpy_async(buffer.data_ptr(), storage_bytes(src) + first * itemsize,
                        buffer.numel(), CopyKind::DeviceToHost, stream);
  driver().synchronize_stream(stream);
  foo::runtime::raise_device_error_after_wait(src.device().index(), stream);  // a kernel's bad-input report
  return at::empty({0}, options).set_(buffer.storage(), src.storage_offset() - first, src.sizes(),
                                      src.strides());
}

}  // namespace foo::native
