// F.embedding_bag / nn.EmbeddingBag: _embedding_bag (and _embedding_bag_forward_only, what a weight
// without requires_grad reaches), _embedding_bag_backward (CPU/CUDA/MPS-only upstream, so foo
// needs its own), _embedding_bag_dense_backward and _embedding_bag_per_sample_weights_backward
// (kernels/ops/embedding_bag.h).
//
// No op reads device data back: every result's size follows from the arguments' sizes. The CPU's
// checks that need no data are repeated with its messages; those that read offsets or indices
// (offsets[0] == 0, offsets[-1] <= len(indices), an index out of range) would each cost a
// synchronisation and are not made: an index out of range makes its bag's output NaN, offsets
// outside the indices are clamped to them. The index-like results are the CPU's:
// offset2bag is empty where the CPU's sum fast path skips it, bag_size and max_indices are zeros in
// sum mode (bag_size as long as offsets in the forward-only overload), max_indices is a copy of
// bag_size in mean mode, and everything is of the indices' and offsets' promoted dtype.
#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <ATen/TensorUtils.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/embedding_bag.h"
#include "native/embedding_bag.h"
#include "native/embedding_bag_backward.h"
#include "native/embedding_bag_dense_backward.h"
#include "native/embedding_bag_forward_only.h"
#include "native/embedding_bag_per_sample_weights_backward.h"

namespace foo::native {
namespace {

using foo::kernels::BagMode;
using foo::kernels::EmbeddingBagArgs;

// The CPU's promotion of indices and offsets to one index dtype (int32 only when both are).
std::pair<at::Tensor, at::Tensor> promote_indices(const at::Tensor& indices, const at::Tensor& offsets) {
  const at::ScalarType t = at::promoteTypes(offsets.scalar_type(), indices.scalar_type());
  return {indices.to(t), offsets.to(t)};
}

void check_index(const char* name, const at::Tensor& t, bool contiguous) {
  const at::TensorArg arg(t, name, 1);
  at::checkScalarTypes("embedding_bag", arg, {at::kLong, at::kInt});
  if (contiguous) at::checkContiguous("embedding_bag", arg);
}

// The position -> bag map of `offsets` (kernels/ops/embedding_bag.h), of the offsets' dtype.
at::Tensor make_offset2bag(const at::Tensor& offsets, int64_t num_offsets, int64_t num_indices) {
  at::Tensor offset2bag = at::empty({num_indices}, offsets.options());
  const at::Tensor off = offsets.contiguous();
  FOO_CALL_KERNEL(embedding_bag_offset2bag, stream_of(offsets), kernel_dtype(off.scalar_type()), off.const_data_ptr(),
                  num_offsets, num_indices, offset2bag.mutable_data_ptr());
  return offset2bag;
}

// The backward ops' offset2bag: the forward's, or rebuilt where the forward's sum fast path left
// it empty (from every offset: a last one equal to len(indices), include_last_offset's, marks no
// position).
at::Tensor offset2bag_for_backward(const at::Tensor& offset2bag, const at::Tensor& indices, const at::Tensor& offsets) {
  if (indices.numel() != 0 && offset2bag.numel() == 0) return make_offset2bag(offsets, offsets.size(0), indices.size(0));
  check_index("offset2bag", offset2bag, true);
  TORCH_CHECK(offset2bag.numel() == indices.numel(), "embedding_bag: expected offset2bag of ", indices.numel(),
              " elements, got ", offset2bag.numel());
  return offset2bag.to(indices.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_impl(
    const at::Tensor& weight, const at::Tensor& indices_, const at::Tensor& offsets_, int64_t mode,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset, int64_t padding_idx,
    bool requires_grad) {
  // The CPU's checks (_embedding_bag_cpu_impl, check_arguments) without those that read data.
  TORCH_CHECK(indices_.dim() == 1 || indices_.dim() == 2, "input has to be a 1D or 2D Tensor, but got Tensor of dimension ",
              indices_.dim());
  if (indices_.dim() == 1) {
    TORCH_CHECK(offsets_.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets_.dim());
  }
  // F.embedding_bag flattens a 2-D input and makes its offsets; only ATen's op itself sees one.
  TORCH_CHECK(indices_.dim() == 1 && offsets_.dim() == 1,
              "embedding_bag: foo takes 1-D indices and offsets (F.embedding_bag flattens a 2-D input), got ",
              indices_.dim(), "-D indices and ", offsets_.dim(), "-D offsets");
  const auto [indices, offsets] = promote_indices(indices_, offsets_);
  check_index("indices", indices, false);
  check_index("offsets", offsets, false);
  const at::TensorArg weight_arg(weight, "weight", 1);
  at::checkScalarTypes("embedding_bag", weight_arg, {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  TORCH_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got ", mode);
  const bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  if (has_psw) {
    TORCH_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    at::checkSameType("embedding_bag", weight_arg, at::TensorArg(*per_sample_weights, "per_sample_weights", 1));
    TORCH_CHECK(per_sample_weights->dim() == 1);
    TORCH_CHECK(per_sample_weights->numel() == indices.numel());
  }
  if (include_last_offset) {
    TORCH_CHECK(offsets.size(0) >= 1, "include_last_offset: number of offset should be at least 1");
  }

  const int64_t num_bags = offsets.size(0) - (include_last_offset ? 1 : 0);
  const int64_t width = weight.size(1), n = indices.size(0);
  const at::Tensor idx = indices.contiguous(), off = offsets.contiguous();
  const at::TensorOptions index_options = off.options();
  at::Tensor output = at::empty({num_bags, width}, weight.options());
  // The CPU's sum fast path (float, half and bfloat16 tables with dense rows, no padding_idx)
  // returns no offset2bag; every other case returns the map.
  const at::ScalarType dt = weight.scalar_type();
  const bool fast_sum = mode == 0 && padding_idx < 0 && dt != at::kDouble && weight.stride(1) == 1 &&
                        (!has_psw || per_sample_weights->stride(0) == 1);
  const at::Tensor offset2bag = fast_sum ? at::empty({0}, index_options) : make_offset2bag(off, num_bags, n);
  at::Tensor bag_size, max_indices;
  if (mode == 0) {
    bag_size = requires_grad ? at::zeros({num_bags}, index_options) : at::zeros(offsets.sizes(), index_options);
    max_indices = at::zeros_like(bag_size);
  } else {
    bag_size = at::empty({num_bags}, index_options);
    max_indices = mode == 2 ? at::empty({num_bags, width}, index_options) : at::empty({num_bags}, index_options);
  }

  EmbeddingBagArgs a{};
  a.dtype = kernel_dtype(dt);
  a.index_dtype = kernel_dtype(off.scalar_type());
  a.mode = static_cast<BagMode>(mode);
  a.num_weights = weight.size(0);
  a.width = width;
  a.num_indices = n;
  a.num_bags = num_bags;
  a.padding_idx = padding_idx;
  a.weight = weight.const_data_ptr();
  a.weight_stride0 = weight.stride(0);
  a.weight_stride1 = weight.stride(1);
  a.indices = idx.const_data_ptr();
  a.offsets = off.const_data_ptr();
  if (has_psw) {
    a.per_sample_weights = per_sample_weights->const_data_ptr();
    a.psw_stride = per_sample_weights->stride(0);
  }
  a.output = output.mutable_data_ptr();
  a.bag_size = bag_size.mutable_data_ptr();
  a.max_indices = max_indices.mutable_data_ptr();
  FOO_CALL_KERNEL(embedding_bag_forward, stream_of(weight), a);
  return {output, offset2bag, bag_size, max_indices};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, bool /*scale_grad_by_freq*/,
    int64_t mode, bool /*sparse*/, const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  return embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, true);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_forward_only(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, bool /*scale_grad_by_freq*/,
    int64_t mode, bool /*sparse*/, const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  return embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, false);
}

at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices_, const at::Tensor& offsets_,
                                  const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                  const at::Tensor& maximum_indices, int64_t num_weights, bool scale_grad_by_freq,
                                  int64_t mode, bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                                  int64_t padding_idx) {
  // The CPU's checks, then its choice between the sparse and the dense gradient.
  const auto [indices, offsets] = promote_indices(indices_, offsets_);
  check_index("indices", indices, true);
  check_index("offsets", offsets, true);
  at::checkSameType("embedding_bag", at::TensorArg(indices, "indices", 1), at::TensorArg(offsets, "offsets", 1));
  const at::Tensor o2b = offset2bag_for_backward(offset2bag, indices, offsets);
  if (sparse) {
    return at::_embedding_bag_sparse_backward(grad, indices, offsets, o2b, bag_size, num_weights, scale_grad_by_freq,
                                              mode, per_sample_weights, padding_idx);
  }
  return at::_embedding_bag_dense_backward(grad, indices, o2b, bag_size, maximum_indices, num_weights,
                                           scale_grad_by_freq, mode, per_sample_weights, padding_idx);
}

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad_, const at::Tensor& indices,
                                        const at::Tensor& offset2bag, const at::Tensor& bag_size_,
                                        const at::Tensor& maximum_indices, int64_t num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights, int64_t padding_idx) {
  const at::Tensor grad = grad_.contiguous();
  at::checkScalarTypes("embedding_bag", at::TensorArg(grad, "grad_", 1),
                       {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  // What the kernels read must be there (the CPU trusts _embedding_bag_backward's arguments).
  TORCH_CHECK(grad.dim() == 2, "embedding_bag_backward: expected a 2-D grad, got ", grad.dim(), "-D");
  TORCH_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got ", mode);
  check_index("indices", indices, false);
  TORCH_CHECK(indices.dim() == 1, "embedding_bag_backward: expected 1-D indices, got ", indices.dim(), "-D");
  const int64_t num_bags = grad.size(0), width = grad.size(1);
  const at::ScalarType it = indices.scalar_type();
  const at::Tensor idx = indices.contiguous();
  const at::Tensor bag_size = bag_size_.to(it).contiguous();
  at::Tensor o2b, max_indices;
  const bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  if (mode == 2) {
    max_indices = maximum_indices.to(it).contiguous();
    TORCH_CHECK(max_indices.numel() == num_bags * width && bag_size.numel() >= num_bags,
                "embedding_bag_backward: max mode expects max_indices of ", num_bags, "x", width, " and ", num_bags,
                " bag sizes, got ", maximum_indices.sizes(), " and ", bag_size_.sizes());
  } else {
    check_index("offset2bag", offset2bag, false);
    TORCH_CHECK(offset2bag.numel() == idx.numel(), "embedding_bag_backward: expected offset2bag of ", idx.numel(),
                " elements, got ", offset2bag.numel());
    TORCH_CHECK(mode == 0 || bag_size.numel() >= num_bags, "embedding_bag_backward: expected ", num_bags,
                " bag sizes, got ", bag_size_.numel());
    o2b = offset2bag.to(it).contiguous();
    if (has_psw) {
      TORCH_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
      TORCH_CHECK(per_sample_weights->scalar_type() == grad.scalar_type() && per_sample_weights->dim() == 1 &&
                      per_sample_weights->numel() == idx.numel(),
                  "embedding_bag_backward: expected per_sample_weights of dtype ", grad.scalar_type(), " and ",
                  idx.numel(), " elements");
    }
  }
  // 16-bit gradients accumulate in float and round once (as embedding_dense_backward).
  const at::ScalarType acc = at::toOpMathType(grad.scalar_type());
  at::Tensor grad_weight = at::zeros({num_weights, width}, grad.options().dtype(acc));

  EmbeddingBagArgs a{};
  a.dtype = kernel_dtype(grad.scalar_type());
  a.index_dtype = kernel_dtype(it);
  a.mode = static_cast<BagMode>(mode);
  a.num_weights = num_weights;
  a.width = width;
  a.num_indices = idx.numel();
  a.num_bags = num_bags;
  a.padding_idx = padding_idx;
  a.indices = idx.const_data_ptr();
  a.grad = grad.const_data_ptr();
  a.bag_size = const_cast<void*>(bag_size.const_data_ptr());  // read only
  if (mode == 2) {
    a.max_indices = const_cast<void*>(max_indices.const_data_ptr());  // read only
  } else {
    a.offset2bag = o2b.const_data_ptr();
    if (has_psw) {
      a.per_sample_weights = per_sample_weights->const_data_ptr();
      a.psw_stride = per_sample_weights->stride(0);
    }
  }
  a.grad_weight = grad_weight.mutable_data_ptr();
  at::Tensor counts;
  if (mode != 2 && scale_grad_by_freq) {
    // Each row's gradient divided by how often its index occurs, as CUDA's and embedding's
    // backward (the CPU divides by the count of another row: tests/test_embedding_bag.py).
    counts = at::zeros({num_weights}, grad.options().dtype(at::kLong));
    FOO_CALL_KERNEL(embedding_bag_count, stream_of(grad), a, counts.mutable_data_ptr<int64_t>());
    a.counts = counts.const_data_ptr<int64_t>();
  }
  FOO_CALL_KERNEL(embedding_bag_backward, stream_of(grad), a);
  return acc == grad.scalar_type() ? grad_weight : grad_weight.to(grad.scalar_type());
}

at::Tensor embedding_bag_per_sample_weights_backward(const at::Tensor& grad_, const at::Tensor& weight,
                                                     const at::Tensor& indices_, const at::Tensor& offsets_,
                                                     const at::Tensor& offset2bag, int64_t mode, int64_t padding_idx) {
  // The CPU's checks (_embedding_bag_per_sample_weights_backward_cpu_template).
  TORCH_CHECK(mode == 0, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  const at::Tensor grad = grad_.contiguous();
  check_kernel_dtype("embedding_bag_backward", grad.scalar_type(), foo::kernels::kFloatingTypes);
  TORCH_CHECK(grad.dim() == 2, "embedding_bag_backward: expected a 2-D grad, got ", grad.dim(), "-D");
  const auto [indices, offsets] = promote_indices(indices_, offsets_);
  TORCH_CHECK(indices.dim() == 1, "embedding_bag_backward: expected 1-D indices, got ", indices.dim(), "-D");
  TORCH_CHECK(weight.dim() == 2 && weight.size(1) == grad.size(1) && weight.scalar_type() == grad.scalar_type(),
              "embedding_bag_backward: expected a ", grad.scalar_type(), " weight of ", grad.size(1), " columns, got ",
              weight.scalar_type(), " ", weight.sizes());
  check_index("indices", indices, true);
  const at::Tensor o2b = offset2bag_for_backward(offset2bag, indices, offsets);
  at::Tensor out = at::empty({indices.size(0)}, grad.options());

  EmbeddingBagArgs a{};
  a.dtype = kernel_dtype(grad.scalar_type());
  a.index_dtype = kernel_dtype(indices.scalar_type());
  a.mode = BagMode::Sum;
  a.num_weights = weight.size(0);
  a.width = grad.size(1);
  a.num_indices = indices.size(0);
  a.num_bags = grad.size(0);
  a.padding_idx = padding_idx;
  a.weight = weight.const_data_ptr();
  a.weight_stride0 = weight.stride(0);
  a.weight_stride1 = weight.stride(1);
  a.indices = indices.const_data_ptr();
  a.grad = grad.const_data_ptr();
  a.offset2bag = o2b.const_data_ptr();
  a.grad_psw = out.mutable_data_ptr();
  FOO_CALL_KERNEL(embedding_bag_psw_backward, stream_of(grad), a);
  return out;
}

}  // namespace foo::native
