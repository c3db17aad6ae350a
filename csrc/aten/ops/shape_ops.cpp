// Data movement by coordinates (kernels/ops/shape_copy.cu): flip, roll, repeat, tril/triu (one
// coordinate-mapped copy each), unfold (a view) and its backward, tril_indices/triu_indices.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>
#include <ATen/ops/unfold_native.h>

#include "aten/core/layout.h"
#include "aten/core/pointwise.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/shape_copy.h"
#include "native/flip.h"
#include "native/repeat.h"
#include "native/roll.h"
#include "native/tril_indices.h"
#include "native/tril_out.h"
#include "native/triu_indices.h"
#include "native/triu_out.h"
#include "native/unfold.h"
#include "native/unfold_backward.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::CoordMap;
using foo::kernels::MapCopy;
using foo::kernels::Triangle;

// A copy of `in` into `out` (same number of dims, `out`'s sizes), dim d mapped by maps[d];
// `in_sizes` are the input's sizes (Wrap). Size-1 output dims are dropped (they move nothing)
// unless the copy keeps a triangle of the last two dims.
MapCopy map_of(const at::Tensor& out, at::IntArrayRef in_sizes, at::IntArrayRef in_strides,
               const std::vector<CoordMap>& maps, const std::vector<int64_t>& shifts, Triangle triangle = Triangle::None,
               int64_t diagonal = 0) {
  MapCopy m;
  m.numel = out.numel();
  m.element_size = static_cast<int32_t>(out.element_size());
  m.triangle = triangle;
  m.diagonal = diagonal;
  for (int64_t d = 0; d < out.dim(); ++d) {
    const bool kept_for_triangle = triangle != Triangle::None && d >= out.dim() - 2;
    if (out.size(d) == 1 && !kept_for_triangle) continue;
    TORCH_CHECK_NOT_IMPLEMENTED(m.ndim < foo::kernels::kMaxDims, "foo's coordinate copies take at most ",
                                foo::kernels::kMaxDims, " dims of size > 1");
    foo::kernels::MapDim& md = m.dims[m.ndim++];
    md.size = out.size(d);
    md.in_size = in_sizes[d];
    md.out_stride = out.stride(d);
    md.in_stride = in_strides[d];
    md.map = maps[d];
    md.shift = shifts[d];
  }
  return m;
}

void launch_map(const MapCopy& m, const at::Tensor& in, const at::Tensor& out) {
  FOO_CALL_KERNEL(map_copy, stream_of(out), m, in.const_data_ptr(),
                  out.mutable_data_ptr());
}

// The result of a shape op that moves every element: the input's memory format, as at::cat
// (the CPU's roll) and empty_like(Preserve) (the CPU's flip) give for dense inputs.
at::Tensor empty_result(const at::Tensor& self) {
  return at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
}

void triangle_impl(const at::Tensor& self, int64_t diagonal, const at::Tensor& result, Triangle triangle) {
  if (self.numel() == 0) return;
  const std::vector<CoordMap> maps(static_cast<size_t>(self.dim()), CoordMap::Same);
  const std::vector<int64_t> shifts(static_cast<size_t>(self.dim()), 0);
  launch_map(map_of(result, self.sizes(), self.strides(), maps, shifts, triangle, diagonal), self, result);
}

at::Tensor triangle_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                            std::optional<at::Layout> layout, std::optional<at::Device> device, bool upper) {
  const char* name = upper ? "triu_indices" : "tril_indices";
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "only support layout=torch.strided, got", *layout);
  const at::ScalarType type = dtype.value_or(at::kLong);
  check_kernel_dtype(name, type, foo::kernels::dtype_bit(foo::kernels::DType::Int64) | foo::kernels::dtype_bit(foo::kernels::DType::Int32));
  const int64_t count = foo::kernels::triangle_elements_before(row, col, offset, upper);
  at::Tensor out = at::empty({2, count}, at::TensorOptions().dtype(type).device(device));
  FOO_CALL_KERNEL(triangle_indices, stream_of(out), kernel_dtype(type),
                  out.mutable_data_ptr(), count, row, col, offset, upper);
  return out;
}

}  // namespace

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  const auto flipped = at::dim_list_to_bitset(dims, self.dim());  // wraps, refuses repeats
  at::Tensor out = empty_result(self);
  if (self.numel() == 0) return out;
  std::vector<CoordMap> maps(static_cast<size_t>(self.dim()), CoordMap::Same);
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (flipped[d]) maps[d] = CoordMap::Flip;
  }
  const std::vector<int64_t> shifts(static_cast<size_t>(self.dim()), 0);
  launch_map(map_of(out, self.sizes(), self.strides(), maps, shifts), self, out);
  return out;
}

at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  // ATen's roll_common checks.
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // roll the flattened tensor
    return foo::native::roll(self.contiguous().view(self.numel()), shifts, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  at::Tensor out = empty_result(self);
  if (self.numel() == 0) return out;
  std::vector<CoordMap> maps(static_cast<size_t>(self.dim()), CoordMap::Same);
  std::vector<int64_t> total(static_cast<size_t>(self.dim()), 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = at::maybe_wrap_dim(dims[k], self.dim());
    const int64_t size = self.size(d);
    total[d] = ((total[d] + shifts[k]) % size + size) % size;  // several shifts of one dim add up
    maps[d] = CoordMap::Roll;
  }
  launch_map(map_of(out, self.sizes(), self.strides(), maps, total), self, out);
  return out;
}

at::Tensor repeat(const at::Tensor& self, at::IntArrayRef repeats) {
  // ATen's repeat: leading dims added, each output dim tiles the input's.
  TORCH_CHECK(repeats.size() >= static_cast<size_t>(self.dim()),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const size_t added = repeats.size() - static_cast<size_t>(self.dim());
  at::DimVector in_sizes(added, 1), in_strides(added, 0), target(repeats.size());
  in_sizes.append(self.sizes().begin(), self.sizes().end());
  in_strides.append(self.strides().begin(), self.strides().end());
  for (size_t d = 0; d < repeats.size(); ++d) target[d] = in_sizes[d] * repeats[d];
  at::Tensor out = at::empty(target, self.options());
  if (out.numel() == 0) return out;
  const std::vector<CoordMap> maps(repeats.size(), CoordMap::Wrap);
  const std::vector<int64_t> shifts(repeats.size(), 0);
  launch_map(map_of(out, in_sizes, in_strides, maps, shifts), self, out);
  return out;
}

TORCH_IMPL_FUNC(tril_out)(const at::Tensor& self, int64_t diagonal, const at::Tensor& out) {
  triangle_impl(self, diagonal, out, Triangle::Lower);
}

TORCH_IMPL_FUNC(triu_out)(const at::Tensor& self, int64_t diagonal, const at::Tensor& out) {
  triangle_impl(self, diagonal, out, Triangle::Upper);
}

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> /*pin_memory*/) {
  return triangle_indices(row, col, offset, dtype, layout, device, /*upper=*/false);
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> /*pin_memory*/) {
  return triangle_indices(row, col, offset, dtype, layout, device, /*upper=*/true);
}

at::Tensor unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  // A view: ATen's own size/stride arithmetic, over foo's as_strided.
  return at::native::unfold(self, dimension, size, step);
}

at::Tensor unfold_backward(const at::Tensor& grad_in, at::IntArrayRef input_sizes, int64_t dim, int64_t size,
                           int64_t step) {
  if (input_sizes.empty()) return grad_in.reshape({}).clone();  // a 0-d input: one window of one element
  const int64_t ndim = static_cast<int64_t>(input_sizes.size());
  TORCH_CHECK_NOT_IMPLEMENTED(ndim <= foo::kernels::kMaxDims, "unfold_backward on foo takes at most ",
                              foo::kernels::kMaxDims, " dims, got ", ndim);
  dim = at::maybe_wrap_dim(dim, ndim);
  at::Tensor grad_input = at::empty(input_sizes, grad_in.options());
  if (grad_input.numel() == 0) return grad_input;
  foo::kernels::UnfoldBackward u;
  u.ndim = static_cast<int32_t>(ndim);
  for (int64_t d = 0; d < ndim; ++d) u.sizes[d] = input_sizes[d];
  for (int64_t d = 0; d <= ndim; ++d) u.grad_strides[d] = grad_in.stride(d);
  u.dim = static_cast<int32_t>(dim);
  u.size = size;
  u.step = step;
  u.windows = grad_in.size(dim);
  FOO_CALL_KERNEL(unfold_backward_sum, stream_of(grad_in),
                  kernel_dtype(grad_in.scalar_type()), u, grad_in.const_data_ptr(), grad_input.mutable_data_ptr(),
                  grad_input.numel());
  return grad_input;
}

}  // namespace foo::native
