// Copies between the CPU and foo and between foo tensors. A contiguous same-dtype copy is one
// driver memcpy; strides and dtype conversion run on the device (copy.cu), so the host only
// ever moves dense bytes.
//
// Every dtype moves (docs/torch-foo-vs-cuda.md §6): a same-dtype copy of a dtype no kernel
// computes (complex, float8, uint16, bits...) reads its elements as same-sized integers (complex128
// as pairs of doubles); casts to, from and between complex dtypes are real casts on the real and
// imaginary parts; a host <-> device cast the device cannot do runs on the CPU. The conjugate
// and negative bits are resolved here (their boxed fallbacks would call _copy_from again).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>
#include <torch/library.h>

#include "aten/core/device_memory.h"
#include "aten/core/elementwise.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/copy.h"
#include "native/copy_from.h"
#include "native/copy_from_and_resize.h"
#include "native/fill_scalar.h"
#include "native/fill_tensor.h"
#include "native/local_scalar_dense.h"
#include "native/zero_.h"
#include "runtime/device_error.h"
#include "runtime/event.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"
#include "runtime/sync_debug.h"

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

bool complex_with_computed_parts(at::ScalarType t) {
  return at::isComplexType(t) && has_kernel_dtype(c10::toRealValueType(t));
}

// Whether copy_on_device can turn `from` into `to`.
bool device_converts(at::ScalarType from, at::ScalarType to) {
  if (from == to) return true;
  const bool from_ok = has_kernel_dtype(from) || complex_with_computed_parts(from);
  const bool to_ok = has_kernel_dtype(to) || complex_with_computed_parts(to);
  return from_ok && to_ok;
}

// The same bytes as t, without its conjugate/negative bits, read as `dtype`: of t's element size,
// or of half of it, then with a trailing dim of 2 (as view_as_real). Any layout.
at::Tensor reinterpret(const at::Tensor& t, at::ScalarType dtype) {
  const auto from = static_cast<size_t>(t.element_size()), to = c10::elementSize(dtype);
  TORCH_INTERNAL_ASSERT(from == to || from == 2 * to);
  const auto keys = t.key_set().remove(c10::DispatchKey::Conjugate).remove(c10::DispatchKey::Negative);
  auto alias = at::detail::make_tensor<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(t.storage()), keys,
                                                        c10::scalarTypeToTypeMeta(dtype));
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  int64_t offset = t.storage_offset();
  if (from != to) {
    for (auto& stride : strides) stride *= 2;
    sizes.push_back(2);
    strides.push_back(1);
    offset *= 2;
  }
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, offset);
  return alias;
}

// t's bytes as they are in memory: the conjugate and negative bits dropped.
at::Tensor physical(const at::Tensor& t) {
  return t.is_conj() || t.is_neg() ? reinterpret(t, t.scalar_type()) : t;
}

// What a same-dtype copy moves the elements of a dtype no kernel computes as.
at::ScalarType bytes_dtype(at::ScalarType t) {
  switch (c10::elementSize(t)) {
    case 1: return at::kByte;
    case 2: return at::kShort;
    case 4: return at::kInt;
    case 8: return at::kLong;
    default: return at::kDouble;  // 16 bytes (complex128): pairs of doubles
  }
}

void copy_cast_on_device(const at::Tensor& src, const at::Tensor& dst) {
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

// dst = src (broadcast, strided, cast) on dst's device; both on that device, without
// conjugate/negative bits.
void copy_on_device(const at::Tensor& src, const at::Tensor& dst) {
  const auto from = src.scalar_type(), to = dst.scalar_type();
  // Same dtype: the bits move unchanged (a 16-bit float through the cast kernel would be widened
  // to float and back, which quiets a signalling NaN's payload; the CPU's copy keeps it).
  if (from == to && !at::isComplexType(from)) {
    const auto as = bytes_dtype(from);
    return copy_cast_on_device(reinterpret(src, as), reinterpret(dst, as));
  }
  const bool from_kernel = has_kernel_dtype(from) || has_complex_kernel_dtype(from);
  if (from_kernel && (has_kernel_dtype(to) || has_complex_kernel_dtype(to))) {
    // complex64/complex128 with each other and the real dtypes: one cast kernel (kernels/core/dtype.h
    // cast<>: the real part; imaginary 0), with the CPU's warning for complex to real
    if (at::isComplexType(from) && !at::isComplexType(to)) {
      TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
    }
    return copy_cast_on_device(src, dst);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(device_converts(from, to), "copy_: foo cannot convert ", from, " to ", to,
                              " on the device (no foo kernel computes ", has_kernel_dtype(from) ? to : from,
                              "); convert on the CPU instead, e.g. t.cpu().to(dtype)");
  if (at::isComplexType(to)) {  // from complex: both parts; from real: the real part, imaginary 0
    const auto parts = reinterpret(dst, c10::toRealValueType(to));
    if (at::isComplexType(from)) return copy_on_device(reinterpret(src, c10::toRealValueType(from)), parts);
    copy_on_device(src, parts.select(-1, 0));
    parts.select(-1, 1).zero_();
    return;
  }
  // complex to real: the real part, with the CPU's warning
  TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
  copy_on_device(reinterpret(src, c10::toRealValueType(from)).select(-1, 0), dst);
}

// Applies what the conjugate/negative bits of a copy's two sides differ by to dst's bytes.
void apply_sign_bits(const at::Tensor& dst, bool conj, bool neg) {
  if (neg) {
    at::Tensor values = dst.is_complex() ? reinterpret(dst, c10::toRealValueType(dst.scalar_type())) : dst;
    at::neg_out(values, values);
  }
  if (conj && dst.is_complex()) {
    auto imag = reinterpret(dst, c10::toRealValueType(dst.scalar_type())).select(-1, 1);
    at::neg_out(imag, imag);
  }
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
  const at::Tensor& host = kind == CopyKind::HostToDevice ? src : dst;
  const bool pinned = driver().is_pinned(host.data_ptr());
  // Reported before the copy (an error must leave nothing in flight); a pinned buffer the host
  // allocator does not know (record_host_use false) waits unreported.
  if ((kind != CopyKind::HostToDevice || pinned) && !(pinned && non_blocking)) {
    foo::runtime::check_sync(
        "a blocking copy between the host and foo (non_blocking=True with pinned host memory does not wait)");
  }
  driver().memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(), kind, handle);
  if (kind == CopyKind::HostToDevice && !pinned) return;
  if (pinned && non_blocking && foo::runtime::record_host_use(host.storage().data_ptr(), stream)) return;
  driver().synchronize_stream(handle);
  foo::runtime::raise_device_error_after_wait(device, handle);  // a kernel's bad-input report
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
  // Lay the data out densely on the device (in dst's dtype when the device converts it), move
  // bytes, then cast and lay out on the CPU what is left to do.
  const auto dtype = device_converts(src.scalar_type(), dst.scalar_type()) ? dst.scalar_type() : src.scalar_type();
  at::Tensor dense = at::empty(dst.sizes(), src.options().dtype(dtype));
  copy_on_device(src, dense);
  if (dst.is_contiguous() && dtype == dst.scalar_type()) {
    memcpy_host(dense, dst, CopyKind::DeviceToHost, src.device().index());
    return;
  }
  at::Tensor landing = at::empty(dst.sizes(), dst.options().dtype(dtype).memory_format(at::MemoryFormat::Contiguous));
  memcpy_host(dense, landing, CopyKind::DeviceToHost, src.device().index());
  if (dtype != dst.scalar_type()) {
    dst.copy_(landing);  // the CPU converts
  } else {  // moved as bytes: the CPU may have no copy kernel for the dtype (uint1..7, bits)
    const auto as = bytes_dtype(dtype);
    reinterpret(dst, as).copy_(reinterpret(landing, as));
  }
}

void copy_host_to_device(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (plain_bytes_copy(src, dst)) {
    memcpy_host(src, dst, CopyKind::HostToDevice, dst.device().index(), non_blocking);
    return;
  }
  // Move src's bytes densely (cast on the CPU first if the device cannot; laid out as bytes, as
  // the CPU may have no copy kernel for the dtype), then broadcast, cast and lay out on the device.
  // It waits at the end; reported before anything is queued.
  foo::runtime::check_sync("a copy to foo that converts on the device waits for its host buffer");
  const at::Tensor host = device_converts(src.scalar_type(), dst.scalar_type()) ? src : src.to(dst.scalar_type());
  const at::Tensor dense_host =
      host.is_contiguous() ? host : reinterpret(host, bytes_dtype(host.scalar_type())).contiguous();
  at::Tensor landing = at::empty(host.sizes(), dst.options().dtype(host.scalar_type()));
  memcpy_host(dense_host, landing, CopyKind::HostToDevice, dst.device().index());
  copy_on_device(landing, dst);
  // The pageable host buffer must outlive the asynchronous copy.
  const auto handle = stream_of(dst);
  driver().synchronize_stream(handle);
  foo::runtime::raise_device_error_after_wait(dst.device().index(), handle);
}

}  // namespace

// non_blocking is honoured where CUDA honours it: plain byte copies whose host side is pinned.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(on_foo(self) || on_foo(dst), "_copy_from: neither tensor is on foo");
  TORCH_CHECK(self.device().is_cpu() || on_foo(self), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  TORCH_CHECK(dst.device().is_cpu() || on_foo(dst), "_copy_from: cannot copy from ", self.device(), " to ", dst.device());
  if (dst.numel() == 0) return dst;
  // Copy the bytes as they are, then apply what the two sides' conjugate/negative bits differ by
  // (on the host only once the bytes are there: such a copy does not stay in flight).
  const bool conj = self.is_conj() != dst.is_conj(), neg = self.is_neg() != dst.is_neg();
  const bool async = non_blocking && !conj && !neg;
  const at::Tensor src_bytes = physical(self), dst_bytes = physical(dst);
  if (on_foo(self) && on_foo(dst)) {
    copy_device_to_device(src_bytes, dst_bytes);
  } else if (on_foo(self)) {
    copy_device_to_host(src_bytes, dst_bytes, async);
  } else {
    copy_host_to_device(src_bytes, dst_bytes, async);
  }
  apply_sign_bits(dst_bytes, conj, neg);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, /*non_blocking=*/false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "_local_scalar_dense: expected a tensor with one element, got ", self.numel());
  return stage_to_cpu(self, "a foo scalar read on the host (item(), a Python number or bool)").item();
}

namespace {

// A fill of a dtype no kernel computes: the CPU's fill_ makes the one element (with its conversion
// and errors: a dtype the CPU cannot fill, such as torch 2.14's bcomplex32, raises its error), the
// device copies its bytes everywhere.
at::Tensor& fill_from_host_element(at::Tensor& self, const at::Scalar& value) {
  // Two elements: the CPU fills a one-element tensor of any dtype by another path (scalar_fill).
  const at::Tensor host = at::empty({2}, at::TensorOptions().dtype(self.scalar_type())).fill_(value)[0];
  if (self.numel() == 0) return self;
  const at::Tensor element = at::empty({}, self.options());
  copy_host_to_device(host, element, /*non_blocking=*/false);
  const at::Tensor self_bytes = physical(self);
  copy_on_device(element, self_bytes);
  apply_sign_bits(self_bytes, self.is_conj(), self.is_neg());
  return self;
}

}  // namespace

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (!has_kernel_dtype(self.scalar_type())) return fill_from_host_element(self, value);
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

// _copy_from resolves the conjugate and negative bits itself (copy_from above): ATen's boxed
// fallbacks for those bits would materialise the source with clone(), whose copy_ calls
// _copy_from again with the bit still set, recursing until the stack overflows.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace foo::native
