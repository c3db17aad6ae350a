// nonzero, masked_select and masked_scatter_: stream compaction in row-major order
// (kernels/ops/compact.cu). The number of selected elements decides nonzero's and masked_select's
// result shape and whether masked_scatter_'s source is long enough, so the host reads it back
// after the counting pass: the one synchronisation of these ops, as on CUDA.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>

#include "aten/core/device_memory.h"
#include "aten/core/layout.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/compact.h"
#include "native/masked_scatter_.h"
#include "native/masked_select_out.h"
#include "native/nonzero_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::CompactOp;
using foo::kernels::CompactWrite;
using foo::kernels::FlagTensor;

// How a kernel walks `t` in row-major order (a dense copy when its layout has too many dims).
struct Walk {
  at::Tensor tensor;  // `t`, or its contiguous copy
  foo::kernels::Layout layout;
};

Walk walk_of(const at::Tensor& t) {
  if (auto layout = layout_of(t)) return {t, *layout};
  return {t.contiguous(), foo::kernels::Layout{}};
}

// The counting pass over the elements of `flags` (any dtype: nonzero), and the number selected.
struct Count {
  FlagTensor flags;
  Walk walk;
  at::Tensor offsets;
  int64_t selected = 0;
};

Count count_selected(const at::Tensor& flags_tensor) {
  Count c;
  c.walk = walk_of(flags_tensor);
  c.flags.data = c.walk.tensor.const_data_ptr();
  c.flags.dtype = kernel_dtype(flags_tensor.scalar_type());
  c.flags.layout = c.walk.layout;
  c.flags.numel = flags_tensor.numel();
  c.offsets = at::empty({foo::kernels::compact_tiles(c.flags.numel) + 1}, flags_tensor.options().dtype(at::kLong));
  auto stream = stream_of(flags_tensor);
  FOO_CALL_KERNEL(compact_count, stream, c.flags, c.offsets.mutable_data_ptr<int64_t>());
  // The synchronisation: the total decides the result's size.
  c.selected = stage_to_cpu(c.offsets.select(0, c.offsets.numel() - 1),
                            "the count of selected elements sizes the result").item<int64_t>();
  return c;
}

void write_selected(const Count& c, const CompactWrite& w, c10::DeviceIndex device) {
  if (c.selected == 0) return;
  FOO_CALL_KERNEL(compact_write, foo::runtime::current_native_stream(device), c.flags,
                  c.offsets.const_data_ptr<int64_t>(), w);
}

// The tensor a kernel writes densely for `out`: out itself when contiguous, else a temporary.
at::Tensor dense_target(const at::Tensor& out) {
  return out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
}

void finish(const at::Tensor& out, const at::Tensor& written) {
  if (!written.is_same(out)) out.copy_(written);
}

}  // namespace

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() <= foo::kernels::kLayoutMaxDims, "nonzero on foo takes at most ",
                              foo::kernels::kLayoutMaxDims, " dims, got ", self.dim());
  if (out.defined()) {
    TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type",
                out.scalar_type());
    at::assert_no_internal_overlap(out);
    at::assert_no_overlap(out, self);
  }
  const Count c = count_selected(self);
  const std::vector<int64_t> shape{c.selected, self.dim()};
  if (!out.defined()) out = at::empty(shape, self.options().dtype(at::kLong));
  else at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  const at::Tensor target = dense_target(out);
  CompactWrite w;
  w.op = CompactOp::Nonzero;
  w.ndim = static_cast<int32_t>(self.dim());
  for (int64_t d = 0; d < self.dim(); ++d) w.sizes[d] = self.size(d);
  w.out = target.mutable_data_ptr();
  write_selected(c, w, self.device().index());
  finish(out, target);
  return out;
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  // The CPU's checks (masked_select_out_impl_cpu).
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  if (out.defined()) {
    TORCH_CHECK(self.scalar_type() == out.scalar_type(), "masked_select(): self and result must have the same scalar type");
    at::assert_no_internal_overlap(out);
    at::assert_no_overlap(out, self);
    at::assert_no_overlap(out, mask);
  }
  auto [b_mask, b_self] = at::expand_outplace(mask, self);
  const Count c = count_selected(*b_mask);
  if (!out.defined()) out = at::empty({c.selected}, self.options());
  else at::native::resize_output(out, {c.selected});
  if (c.selected == 0) return out;
  const at::Tensor target = dense_target(out);
  const Walk data = walk_of(*b_self);
  CompactWrite w;
  w.op = CompactOp::Select;
  w.data = const_cast<void*>(data.tensor.const_data_ptr());  // read only (Select)
  w.data_layout = data.layout;
  w.element_size = static_cast<int32_t>(self.element_size());
  w.out = target.mutable_data_ptr();
  write_selected(c, w, self.device().index());
  finish(out, target);
  return out;
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  // The CPU's checks (masked_scatter__cpu).
  at::assert_no_internal_overlap(self);
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  TORCH_CHECK(mask.dtype() == at::ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  auto b_mask = at::expand_inplace(self, mask, "masked_scatter_");
  if (self.numel() == 0) return self;
  const Count c = count_selected(*b_mask);
  TORCH_CHECK(c.selected <= source.numel(), "Number of elements of source < number of ones in mask");
  if (c.selected == 0) return self;
  const at::Tensor target = layout_of(self).has_value() ? self : at::empty(self.sizes(), self.options());
  if (!target.is_same(self)) target.copy_(self);
  const at::Tensor src = source.contiguous();
  CompactWrite w;
  w.op = CompactOp::Scatter;
  w.data = target.mutable_data_ptr();
  w.data_layout = *layout_of(target);
  w.element_size = static_cast<int32_t>(self.element_size());
  w.out = const_cast<void*>(src.const_data_ptr());  // read only (Scatter)
  write_selected(c, w, self.device().index());
  finish(self, target);
  return self;
}

}  // namespace foo::native
