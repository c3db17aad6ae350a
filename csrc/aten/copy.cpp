// Copies between the CPU and foo, and between foo tensors (also across devices).
// Contiguous same-dtype copies are one driver memcpy; everything else stages through the host
// for now (a strided device-to-device copy kernel replaces that staging later).
#include <ATen/ATen.h>

#include "FooNativeFunctions.h"
#include "aten/device_memory.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::runtime::CopyKind;
using foo::runtime::current_native_stream;
using foo::runtime::driver;

bool on_foo(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

bool plain_bytes_copy(const at::Tensor& src, const at::Tensor& dst) {
  return src.scalar_type() == dst.scalar_type() && src.sizes() == dst.sizes() &&
         src.is_contiguous() && dst.is_contiguous() && !src.is_conj() && !src.is_neg();
}

void copy_device_to_device(const at::Tensor& src, const at::Tensor& dst) {
  if (!plain_bytes_copy(src, dst)) {
    write_from_cpu(dst, stage_to_cpu(src));
    return;
  }
  const auto src_device = src.device().index(), dst_device = dst.device().index();
  if (src_device != dst_device) {
    // The source's producing work lives on its own device's stream: finish it first, and the
    // copy itself before the source can be freed and reused there.
    driver().synchronize_stream(current_native_stream(src_device));
  }
  auto stream = current_native_stream(dst_device);
  driver().memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(), CopyKind::DeviceToDevice, stream);
  if (src_device != dst_device) driver().synchronize_stream(stream);
}

void copy_device_to_host(const at::Tensor& src, const at::Tensor& dst) {
  if (plain_bytes_copy(src, dst)) {
    auto stream = current_native_stream(src.device().index());
    driver().memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(), CopyKind::DeviceToHost, stream);
    driver().synchronize_stream(stream);  // the host reads dst next
    return;
  }
  dst.copy_(stage_to_cpu(src));
}

}  // namespace

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK(on_foo(self) || on_foo(dst), "_copy_from: neither tensor is on foo");
  TORCH_CHECK(self.device().is_cpu() || on_foo(self), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  TORCH_CHECK(dst.device().is_cpu() || on_foo(dst), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  if (dst.numel() == 0) return dst;
  if (on_foo(self) && on_foo(dst)) {
    copy_device_to_device(self, dst);
  } else if (on_foo(self)) {
    copy_device_to_host(self, dst);
  } else {
    write_from_cpu(dst, self.resolve_conj().resolve_neg());
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, /*non_blocking=*/false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "_local_scalar_dense: expected a tensor with one element, got ", self.numel());
  return stage_to_cpu(self).item();
}

}  // namespace foo::native
