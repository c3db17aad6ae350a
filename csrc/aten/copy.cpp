// Copies between the CPU and foo and between foo tensors. A contiguous same-dtype copy is one
// driver memcpy; strides and dtype conversion run on the device (copy.cu), so the host only
// ever moves dense bytes.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>

#include "aten/device_memory.h"
#include "aten/elementwise.h"
#include "kernels/copy.h"
#include "native/copy_from.h"
#include "native/copy_from_and_resize.h"
#include "native/fill_scalar.h"
#include "native/fill_tensor.h"
#include "native/local_scalar_dense.h"
#include "native/zero_.h"
#include "runtime/event.h"
#include "runtime/host_allocator.h"
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

// dst = src (broadcast, strided, cast) on dst's device; both on that device.
void copy_on_device(const at::Tensor& src, const at::Tensor& dst) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  const auto to = kernel_dtype(dst.scalar_type()), from = kernel_dtype(src.scalar_type());
  run_elementwise(iter, dst.scalar_type(), {src.scalar_type()},
                  [&](foo::kernels::Stream s, const foo::kernels::ElementwiseGeometry& g) {
                    FOO_CALL_KERNEL(copy_cast, s, to, from, g);
                  });
}

// Moves dst.nbytes() dense bytes between the host and `device`, on its current stream. As
// cudaMemcpyAsync in torch.cuda's copy: a pageable host-to-device source is staged by the driver,
// so nothing waits; a pinned host buffer copied with non_blocking stays in flight, the host
// allocator keeping it from reuse until the stream passes the copy (the caller synchronises
// before reading a device-to-host result); every other copy waits for its stream.
void memcpy_host(const at::Tensor& src, const at::Tensor& dst, CopyKind kind, c10::DeviceIndex device,
                 bool non_blocking = false) {
  const auto stream = foo::runtime::current_stream(device);
  const auto handle = foo::runtime::native_stream(stream);
  driver().memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(), kind, handle);
  const at::Tensor& host = kind == CopyKind::HostToDevice ? src : dst;
  const bool pinned = driver().is_pinned(host.data_ptr());
  if (kind == CopyKind::HostToDevice && !pinned) return;
  if (pinned && non_blocking && foo::runtime::record_host_use(host.storage().data_ptr(), stream)) return;
  driver().synchronize_stream(handle);
}

void copy_device_to_device(const at::Tensor& src, const at::Tensor& dst) {
  const auto src_device = src.device().index(), dst_device = dst.device().index();
  if (src_device == dst_device) {
    if (plain_bytes_copy(src, dst)) {
      driver().memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(), CopyKind::DeviceToDevice,
                            current_native_stream(dst_device));
    } else {
      copy_on_device(src, dst);
    }
    return;
  }
  // Across devices only dense bytes move: densify on the source device, memcpy, then lay out on
  // the destination device. As torch.cuda, no host wait: a two-way barrier between the two
  // devices' current streams, the copy queued on the source's.
  const auto src_stream = foo::runtime::current_stream(src_device);
  const auto dst_stream = foo::runtime::current_stream(dst_device);
  const at::Tensor dense_src = src.expand(dst.sizes()).contiguous();
  const bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type();
  const at::Tensor landing = direct ? dst : at::empty(dst.sizes(), dst.options().dtype(src.scalar_type()));
  foo::runtime::Event(dst_stream).block(src_stream);  // nothing on dst still uses landing
  driver().memcpy_async(landing.data_ptr(), dense_src.data_ptr(), landing.nbytes(), CopyKind::DeviceToDevice,
                        foo::runtime::native_stream(src_stream));
  foo::runtime::Event(src_stream).block(dst_stream);  // dst's later work sees the bytes
  if (!direct) copy_on_device(landing, dst);
}

void copy_device_to_host(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (plain_bytes_copy(src, dst)) {
    memcpy_host(src, dst, CopyKind::DeviceToHost, src.device().index(), non_blocking);
    return;
  }
  // Lay the data out densely in dst's dtype on the device, then move bytes.
  at::Tensor dense = at::empty(dst.sizes(), src.options().dtype(dst.scalar_type()));
  copy_on_device(src, dense);
  if (dst.is_contiguous()) {
    memcpy_host(dense, dst, CopyKind::DeviceToHost, src.device().index());
  } else {
    at::Tensor landing = at::empty(dst.sizes(), dst.options().memory_format(at::MemoryFormat::Contiguous));
    memcpy_host(dense, landing, CopyKind::DeviceToHost, src.device().index());
    dst.copy_(landing);
  }
}

void copy_host_to_device(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  const at::Tensor host = src.resolve_conj().resolve_neg();
  if (plain_bytes_copy(host, dst)) {
    memcpy_host(host, dst, CopyKind::HostToDevice, dst.device().index(), non_blocking);
    return;
  }
  // Move src's bytes densely (in its own dtype), then broadcast, cast and lay out on the device.
  const at::Tensor dense_host = host.contiguous();
  at::Tensor landing = at::empty(dense_host.sizes(), dst.options().dtype(dense_host.scalar_type()));
  memcpy_host(dense_host, landing, CopyKind::HostToDevice, dst.device().index());
  copy_on_device(landing, dst);
  // The pageable host buffer must outlive the asynchronous copy.
  driver().synchronize_stream(current_native_stream(dst.device().index()));
}

}  // namespace

// non_blocking is honoured where CUDA honours it: plain byte copies whose host side is pinned.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(on_foo(self) || on_foo(dst), "_copy_from: neither tensor is on foo");
  TORCH_CHECK(self.device().is_cpu() || on_foo(self), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  TORCH_CHECK(dst.device().is_cpu() || on_foo(dst), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  if (dst.numel() == 0) return dst;
  if (on_foo(self) && on_foo(dst)) {
    copy_device_to_device(self, dst);
  } else if (on_foo(self)) {
    copy_device_to_host(self, dst, non_blocking);
  } else {
    copy_host_to_device(self, dst, non_blocking);
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

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  // The CPU's checked conversion: a value the dtype cannot hold is an error, not inf or a wrap.
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, self.scalar_type(), "fill_",
                             [&] { (void)value.to<scalar_t>(); });
  if (self.numel() == 0) return self;
  // A fill is a copy from a host scalar: the value travels to the kernel by value.
  const at::Tensor host_value = at::scalar_tensor(value, at::TensorOptions().dtype(self.scalar_type()));
  auto iter = at::TensorIteratorConfig()
                  .add_output(self)
                  .add_const_input(host_value)
                  .resize_outputs(false)
                  .allow_cpu_scalars(true)
                  .set_check_mem_overlap(false)  // as the CPU: filling an expanded tensor is fine
                  .build();
  const auto dtype = kernel_dtype(self.scalar_type());
  run_elementwise(iter, [&](foo::kernels::Stream s, const foo::kernels::ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(copy_cast, s, dtype, dtype, g);
  });
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  if (value.device().is_cpu()) return foo::native::fill_scalar(self, value.item());
  if (self.numel() == 0) return self;
  copy_on_device(value, self);
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return foo::native::fill_scalar(self, 0); }

}  // namespace foo::native
