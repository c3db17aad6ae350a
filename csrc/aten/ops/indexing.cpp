// Indexing through index tensors: index.Tensor (x[idx]: several index tensors, broadcasting, bool
// masks), index_put_ (with accumulate), index_select, embedding and its backward, index_add,
// gather, scatter, scatter_add and scatter_reduce.
//
// Each op builds the iterator ATen's own index kernels build — the written tensor, the read
// tensor, the index tensors, the indexed one restrided with stride 0 along its indexed dims — and
// runs kernels/ops/indexing.cu through run_index_move, which never waits: an index out of range is
// reported on the device and raised at the next synchronisation (runtime/device_error.h).
// Structured ops take their checks and output shapes from ATen's meta functions, run by the
// generated wrappers; their TORCH_IMPL_FUNCs only launch.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorUtils.h>
#include <ATen/native/IndexingUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/ReductionType.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorAdvancedIndexingUtils.h>
#include <ATen/ops/gather_meta.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_meta.h>
#include <ATen/ops/scatter_add_meta.h>
#include <ATen/ops/scatter_meta.h>
#include <ATen/ops/scatter_reduce_meta.h>

#include <limits>

#include "aten/core/elementwise.h"
#include "aten/ops/index_launch.h"
#include "aten/core/pointwise.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/embedding.h"
#include "native/embedding.h"
#include "native/embedding_dense_backward.h"
#include "native/embedding_renorm_.h"
#include "native/gather_out.h"
#include "native/index_add_out.h"
#include "native/index_out.h"
#include "native/index_put_impl_.h"
#include "native/index_select_out.h"
#include "native/scatter_add_out.h"
#include "native/scatter_reduce_out.h"
#include "native/scatter_reduce_two_out.h"
#include "native/scatter_src_out.h"
#include "native/scatter_value_out.h"
#include "native/scatter_value_reduce_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using at::native::ReductionType;
using foo::kernels::IndexMode;

int64_t byte_stride(const at::Tensor& t, int64_t dim) {
  return at::native::ensure_nonempty_stride(t, dim) * static_cast<int64_t>(t.element_size());
}

using foo::kernels::DeviceErrorKind;

// The error of the CPU's index_select, index_add and embedding: IndexError "index out of range in self".
IndexReport out_of_range_in_self(const char* op) { return {op, DeviceErrorKind::IndexOutOfRangeInSelf}; }

// The error of the CPU's gather/scatter kernels: RuntimeError "index 5 is out of bounds for dimension 1 with size 4".
IndexReport out_of_bounds_for_dim(const char* op, int64_t dim) { return {op, DeviceErrorKind::IndexOutOfBoundsDim, dim}; }

// The error of the CPU's index.Tensor/index_put_ kernels: IndexError, the dimension numbering the
// index tensors.
IndexReport out_of_bounds_for_index(const char* op) { return {op, DeviceErrorKind::IndexOutOfBoundsIndex}; }

// `t` seen with `shape` through its own strides (ATen's scatter kernels read src that way: the
// index may cover only the leading part of each of src's dims).
at::Tensor view_as_index(const at::Tensor& t, at::IntArrayRef shape) {
  return t.as_strided(shape, at::native::ensure_nonempty_vec(t.strides().vec()));
}

// ---- gather / scatter -----------------------------------------------------------------------

void gather_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& result) {
  if (index.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor src = at::atleast_1d(self), idx = at::atleast_1d(index);
  auto iter = index_iterator(at::atleast_1d(result), at::native::restride_dim(src, dim, idx.sizes()), {idx});
  const int64_t size = src.size(dim);
  run_index_move(iter, {IndexMode::Gather, self.scalar_type(), {size}, {byte_stride(src, dim)}, false, std::nullopt,
                        out_of_bounds_for_dim("gather", dim)});
}

// out[index] (op)= src (or value) along dim, out already holding self.
void scatter_into(const char* op, const at::Tensor& out, int64_t dim, const at::Tensor& index,
                  const std::optional<at::Tensor>& src, const std::optional<at::Scalar>& value, IndexMode mode) {
  const at::Tensor dst = at::atleast_1d(out), idx = at::atleast_1d(index);
  std::optional<at::Tensor> read;
  if (src.has_value()) read = view_as_index(at::atleast_1d(*src), idx.sizes());
  auto iter = index_iterator(at::native::restride_dim(dst, dim, idx.sizes()), read, {idx});
  const int64_t size = dst.size(dim);
  run_index_move(iter, {mode, out.scalar_type(), {size}, {byte_stride(dst, dim)}, false, value,
                        out_of_bounds_for_dim(op, dim)});
}

IndexMode mode_of(ReductionType op) {
  switch (op) {
    case ReductionType::SUM:
    case ReductionType::MEAN:
      return IndexMode::ScatterAdd;
    case ReductionType::PROD:
      return IndexMode::ScatterMul;
    case ReductionType::MAX:
      return IndexMode::ScatterMax;
    case ReductionType::MIN:
      return IndexMode::ScatterMin;
  }
  TORCH_INTERNAL_ASSERT(false);
}

// The value scatter_reduce(include_self=False) starts each scattered position from (ATen's
// scatter_reduce_exclude_self_helper).
at::Scalar reduction_identity(ReductionType op, at::ScalarType dtype) {
  at::Scalar value;
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "scatter_reduce", [&] {
    using limits = std::numeric_limits<scalar_t>;
    switch (op) {
      case ReductionType::SUM:
      case ReductionType::MEAN:
        value = scalar_t(0);
        break;
      case ReductionType::PROD:
        value = scalar_t(1);
        break;
      case ReductionType::MAX:
        value = limits::has_infinity ? -limits::infinity() : limits::lowest();
        break;
      case ReductionType::MIN:
        value = limits::has_infinity ? limits::infinity() : limits::max();
        break;
    }
  });
  return value;
}

// ATen's scatter_impl: out = self, then the scatter.
void scatter_impl(const char* op, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const std::optional<at::Tensor>& src, const std::optional<at::Scalar>& value, IndexMode mode,
                  const at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (!self.is_same(out)) out.copy_(self);
  if (index.numel() == 0) return;
  scatter_into(op, out, dim, index, src, value, mode);
}

void scatter_reduce_two_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                             c10::string_view reduce, bool include_self, const at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (!self.is_same(out)) out.copy_(self);
  const ReductionType op = at::native::get_operator_enum(reduce, /*use_new_options=*/true);
  if (index.numel() == 0) return;
  const char* name = "scatter_reduce";
  if (!include_self) {
    scatter_into(name, out, dim, index, std::nullopt, reduction_identity(op, out.scalar_type()), IndexMode::Scatter);
  }
  scatter_into(name, out, dim, index, src, std::nullopt, mode_of(op));
  if (op == ReductionType::MEAN) {  // as the CPU: the sum divided by how many values met there
    at::Tensor count = include_self ? at::ones_like(out) : at::zeros_like(out);
    scatter_into(name, count, dim, index, std::nullopt, 1, IndexMode::ScatterAdd);
    count.masked_fill_(count == 0, 1);
    if (out.is_floating_point()) out.div_(count);
    else out.div_(count, "floor");
  }
}

// ---- index_add / index_select / embedding -----------------------------------------------------

void index_add_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                    const at::Scalar& alpha, const at::Tensor& result) {
  if (!result.is_same(self)) result.copy_(self);
  if (index.numel() == 0 || result.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor dst = at::atleast_1d(result);
  at::Tensor src = at::atleast_1d(source);
  if (!alpha.equal(1)) {
    // The CPU multiplies by alpha converted to the element type, then adds.
    AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, src.scalar_type(), "index_add", [&] {
      src = src.mul(at::Scalar(alpha.to<scalar_t>()));
    });
  }
  auto iter = index_iterator(at::native::restride_dim(dst, dim, src.sizes()), src,
                             {index_along(index, dim, src.sizes())});
  // The CPU's error depends on its path: scatter_add's for a tensor of several dims and alpha 1.
  const IndexReport report = result.dim() > 1 && alpha.equal(1) ? out_of_bounds_for_dim("index_add", dim)
                                                                : out_of_range_in_self("index_add");
  run_index_move(iter, {IndexMode::ScatterAdd, result.scalar_type(), {dst.size(dim)}, {byte_stride(dst, dim)}, false,
                        std::nullopt, report});
}

void index_select_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& result,
                       const char* op) {
  if (result.numel() == 0) return;
  const at::Tensor src = at::atleast_1d(self), dst = at::atleast_1d(result);
  auto iter = index_iterator(dst, at::native::restride_dim(src, dim, dst.sizes()),
                             {index_along(index, dim, dst.sizes())});
  run_index_move(iter, {IndexMode::Gather, self.scalar_type(), {src.size(dim)}, {byte_stride(src, dim)}, false,
                        std::nullopt, out_of_range_in_self(op)});
}

// `indices` [..] viewed as [.., width] (stride 0 along the new last dim), to walk a [.., width]
// embedding row by row.
at::Tensor indices_by_row(const at::Tensor& indices, at::IntArrayRef shape) {
  at::DimVector strides(indices.strides().begin(), indices.strides().end());
  strides.push_back(0);
  return indices.as_strided(shape, strides);
}

// `table` [rows, width] seen as `shape` [.., width]: stride 0 everywhere but along width.
at::Tensor table_by_row(const at::Tensor& table, at::IntArrayRef shape) {
  at::DimVector strides(shape.size(), 0);
  strides.back() = table.stride(1);
  return table.as_strided(shape, strides);
}

// ---- index.Tensor / index_put_ ----------------------------------------------------------------

// What at::native::make_info and AdvancedIndex's constructor compute (libtorch does not export
// the constructor), from the header helpers it uses: masks become long indices (nonzero: one
// synchronisation), index tensors broadcast together, non-adjacent indexed dims move to the
// front, and `src` is `self` with the indexed dims replaced by the index shape at stride 0.
struct AdvancedIndexInfo {
  at::Tensor src;
  std::vector<at::Tensor> indices;
  at::DimVector indexed_sizes, indexed_strides;  // strides in bytes
};

AdvancedIndexInfo advanced_index(at::Tensor self, const c10::List<std::optional<at::Tensor>>& orig) {
  at::native::checkIndexTensorTypes(orig, /*allow_int=*/true);
  std::vector<at::Tensor> indices = at::native::expandTensors(self, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
                      at::native::shapes_as_str(indices));
  }
  while (indices.size() < static_cast<size_t>(self.dim())) indices.emplace_back();
  if (!at::native::hasContiguousSubspace(indices)) std::tie(self, indices) = at::native::transposeToFront(self, indices);
  for (auto& index : indices) {
    if (index.defined() && index.scalar_type() == at::kInt) index = index.to(at::kLong);
    // A CPU index tensor (accepted as on CUDA, aten/core/device_check.h) moves to the device, as ATen's
    // AdvancedIndex does; expandTensors already moved CPU boolean masks before taking nonzero().
    if (index.defined() && index.device() != self.device()) index = index.to(self.device());
  }

  AdvancedIndexInfo info;
  int64_t dims_before = 0, dims_after = 0, dims_indexed = 0;
  at::IntArrayRef replacement_shape;
  for (size_t dim = 0; dim < indices.size(); ++dim) {
    if (!indices[dim].defined()) {
      (dims_indexed == 0 ? dims_before : dims_after)++;
    } else {
      dims_indexed++;
      replacement_shape = indices[dim].sizes();
      info.indexed_sizes.push_back(self.size(static_cast<int64_t>(dim)));
      info.indexed_strides.push_back(self.stride(static_cast<int64_t>(dim)) * static_cast<int64_t>(self.element_size()));
    }
  }
  const bool empty_indexed = std::find(info.indexed_sizes.begin(), info.indexed_sizes.end(), 0) != info.indexed_sizes.end();
  const bool empty_replacement =
      std::find(replacement_shape.begin(), replacement_shape.end(), 0) != replacement_shape.end();
  TORCH_CHECK_INDEX(!empty_indexed || empty_replacement, "index is out of bounds for dimension with size 0");

  at::DimVector shape(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  const int64_t end = dims_before + dims_indexed;
  shape.erase(shape.begin() + dims_before, shape.begin() + end);
  strides.erase(strides.begin() + dims_before, strides.begin() + end);
  shape.insert(shape.begin() + dims_before, replacement_shape.begin(), replacement_shape.end());
  strides.insert(strides.begin() + dims_before, replacement_shape.size(), 0);
  info.src = self.as_strided(shape, strides);
  for (const at::Tensor& index : indices) {
    if (!index.defined()) continue;
    at::DimVector index_shape(static_cast<size_t>(dims_before), 1);
    index_shape.append(index.sizes().begin(), index.sizes().end());
    index_shape.append(static_cast<size_t>(dims_after), 1);
    info.indices.push_back(index.reshape(index_shape));
  }
  return info;
}

void index_impl(const at::TensorIteratorBase& iter, const at::DimVector& sizes, const at::DimVector& strides) {
  run_index_move(iter, {IndexMode::Gather, iter.dtype(0), sizes, strides, /*wrap_negative=*/true, std::nullopt,
                        out_of_bounds_for_index("index")});
}

}  // namespace

TORCH_IMPL_FUNC(index_out)(const at::Tensor& /*self*/, at::DimVector sizes, at::DimVector strides,
                           const at::Tensor& /*out*/) {
  index_impl(*this, sizes, strides);
}

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool /*unsafe*/) {
  // ATen's _index_put_impl_, minus the CPU/CUDA-specific paths.
  TORCH_CHECK_INDEX(indices.size() <= static_cast<size_t>(self.dim()), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", indices.size(), ")");
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing "
               "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor");
  }
  if (!accumulate) {
    auto [to_masked_fill, mask] = at::native::canDispatchToMaskedFill(self, indices, values);
    if (to_masked_fill) return self.masked_fill_(mask, values.item());
  }
  at::Tensor value = values;
  if (value.device() != self.device() && value.numel() == 1 && value.dim() == 0) value = value.to(self.device());
  at::assert_no_overlap(self, value);
  for (const std::optional<at::Tensor>& index : indices) {
    if (index.has_value()) at::assert_no_overlap(self, *index);
  }
  const AdvancedIndexInfo info = advanced_index(self, indices);
  TORCH_CHECK(at::is_expandable_to(value.sizes(), info.src.sizes()), "shape mismatch: value tensor of shape ",
              value.sizes(), " cannot be broadcast to indexing result of shape ", info.src.sizes());
  TORCH_CHECK(value.scalar_type() == info.src.scalar_type(),
              "Index put requires the source and destination dtypes match, got ", info.src.scalar_type(),
              " for the destination and ", value.scalar_type(), " for the source.");
  auto iter = index_iterator(info.src, value, info.indices);
  run_index_move(iter, {accumulate ? IndexMode::ScatterAdd : IndexMode::Scatter, self.scalar_type(),
                        info.indexed_sizes, info.indexed_strides, /*wrap_negative=*/true, std::nullopt,
                        out_of_bounds_for_index("index_put_")});
  return self;
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  // The CPU's checks (index_select_out_cpu_).
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t numel = index.numel();
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(!(self.dim() == 0 && numel != 1), "index_select(): Index to scalar can have only 1 value, got ", numel,
              " value(s)");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[dim] = numel;
  if (!out.defined()) {
    out = at::empty(shape, self.options());
  } else {
    TORCH_CHECK(self.scalar_type() == out.scalar_type(), "index_select(): self and result must have the same scalar type");
    at::assert_no_internal_overlap(out);
    at::assert_no_overlap(out, self);
    at::assert_no_overlap(out, index);
    at::native::resize_output(out, shape);
  }
  index_select_impl(self, dim, index, out, "index_select");
  return out;
}

at::Tensor embedding(const at::Tensor& weight, const at::Tensor& indices, int64_t /*padding_idx*/,
                     bool /*scale_grad_by_freq*/, bool /*sparse*/) {
  // ATen's embedding is weight.index_select(0, indices.reshape(-1)).view(...): here one gather
  // straight into the [*indices.shape, width] result.
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  at::checkScalarTypes("embedding", at::TensorArg(indices, "indices", 1), {at::kLong, at::kInt});
  std::vector<int64_t> shape = indices.sizes().vec();
  shape.push_back(weight.size(1));
  at::Tensor out = at::empty(shape, weight.options());
  if (out.numel() == 0) return out;
  auto iter = index_iterator(out, table_by_row(weight, shape), {indices_by_row(indices, shape)});
  run_index_move(iter, {IndexMode::Gather, weight.scalar_type(), {weight.size(0)}, {byte_stride(weight, 0)}, false,
                        std::nullopt, out_of_range_in_self("embedding")});
  return out;
}

at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  check_kernel_dtype("embedding_dense_backward", grad_output.scalar_type(), foo::kernels::kFloatingTypes);
  at::checkScalarTypes("embedding_backward", at::TensorArg(indices, "indices", 2), {at::kLong, at::kInt});
  const int64_t width = grad_output.size(-1);
  // Rows are summed in float for 16-bit gradients (as CUDA does), then rounded once.
  const at::ScalarType acc = opmath_dtype(grad_output.scalar_type());
  at::Tensor grad_weight = at::zeros({num_weights, width}, grad_output.options().dtype(acc));
  const at::Tensor flat_indices = indices.reshape(-1);
  at::Tensor grad = grad_output.reshape({flat_indices.numel(), width});
  if (grad.scalar_type() != acc) grad = grad.to(acc);
  const IndexReport out_of_range{"embedding_dense_backward", DeviceErrorKind::EmbeddingBackwardIndex};
  if (flat_indices.numel() == 0) return grad_weight.to(grad_output.scalar_type());
  if (scale_grad_by_freq) {
    // Each row's gradient divided by how often its index occurs.
    at::Tensor counts = at::zeros({num_weights}, grad_output.options().dtype(at::kLong));
    auto count_iter = index_iterator(counts.as_strided(flat_indices.sizes(), {0}), std::nullopt, {flat_indices});
    run_index_move(count_iter, {IndexMode::ScatterAdd, at::kLong, {num_weights}, {byte_stride(counts, 0)}, false,
                                1, out_of_range});
    grad = grad / counts.index_select(0, flat_indices).unsqueeze(1);
  }
  auto iter = index_iterator(table_by_row(grad_weight, grad.sizes()), grad, {indices_by_row(flat_indices, grad.sizes())});
  run_index_move(iter, {IndexMode::ScatterAdd, acc, {num_weights}, {byte_stride(grad_weight, 0)}, false, std::nullopt,
                        out_of_range});
  // The padding row receives no gradient (the CPU skips its indices).
  if (padding_idx >= 0 && padding_idx < num_weights) grad_weight.select(0, padding_idx).zero_();
  return grad_weight.scalar_type() == grad_output.scalar_type() ? grad_weight : grad_weight.to(grad_output.scalar_type());
}

at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm, double norm_type) {
  // The CPU's checks (embedding_renorm_cpu_); every distinct indexed row is renormalised once.
  at::checkDim("embedding_renorm_", at::TensorArg(self, "self", 1), 2);
  at::checkScalarTypes("embedding_renorm_", at::TensorArg(indices, "indices", 2), {at::kLong, at::kInt});
  check_kernel_dtype("embedding_renorm_", self.scalar_type(), foo::kernels::kFloatingTypes);
  if (indices.numel() == 0) return self;
  // The distinct rows: a flag scattered at every index, then the flags' positions (nonzero
  // synchronises once to size its result).
  at::Tensor used = at::zeros({self.size(0)}, self.options().dtype(at::kBool));
  const at::Tensor flat = indices.reshape(-1);
  auto iter = index_iterator(used.as_strided(flat.sizes(), {0}), std::nullopt, {flat});
  run_index_move(iter, {IndexMode::Scatter, at::kBool, {self.size(0)}, {byte_stride(used, 0)}, false, true,
                        out_of_range_in_self("embedding_renorm_")});
  const at::Tensor rows = at::nonzero(used);  // [n, 1], contiguous
  FOO_CALL_KERNEL(renorm_rows, stream_of(self),
                  kernel_dtype(self.scalar_type()), self.mutable_data_ptr(), self.stride(0), self.stride(1),
                  self.size(1), rows.const_data_ptr<int64_t>(), rows.size(0), max_norm, norm_type);
  return self;
}

TORCH_IMPL_FUNC(index_add_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                               const at::Scalar& alpha, const at::Tensor& out) {
  index_add_impl(self, dim, index, source, alpha, out);
}

TORCH_IMPL_FUNC(gather_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool /*sparse_grad*/,
                            const at::Tensor& out) {
  gather_impl(self, dim, index, out);
}

TORCH_IMPL_FUNC(scatter_src_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                 const at::Tensor& out) {
  scatter_impl("scatter", self, dim, index, src, std::nullopt, IndexMode::Scatter, out);
}

TORCH_IMPL_FUNC(scatter_value_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Scalar& value, const at::Tensor& out) {
  scatter_impl("scatter", self, dim, index, std::nullopt, value, IndexMode::Scatter, out);
}

TORCH_IMPL_FUNC(scatter_reduce_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                    c10::string_view reduce, const at::Tensor& out) {
  const IndexMode mode = mode_of(at::native::get_operator_enum(reduce, /*use_new_options=*/false));
  scatter_impl("scatter", self, dim, index, src, std::nullopt, mode, out);
}

TORCH_IMPL_FUNC(scatter_value_reduce_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                          const at::Scalar& value, c10::string_view reduce, const at::Tensor& out) {
  const IndexMode mode = mode_of(at::native::get_operator_enum(reduce, /*use_new_options=*/false));
  scatter_impl("scatter", self, dim, index, std::nullopt, value, mode, out);
}

TORCH_IMPL_FUNC(scatter_add_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                 const at::Tensor& out) {
  scatter_impl("scatter_add", self, dim, index, src, std::nullopt, IndexMode::ScatterAdd, out);
}

TORCH_IMPL_FUNC(scatter_reduce_two_out)(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                        const at::Tensor& src, c10::string_view reduce, bool include_self,
                                        const at::Tensor& out) {
  scatter_reduce_two_impl(self, dim, index, src, reduce, include_self, out);
}

}  // namespace foo::native
