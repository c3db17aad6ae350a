#include "aten/ops/index_launch.h"

#include <ATen/native/TensorIterator.h>

#include <vector>

#include "aten/core/elementwise.h"
#include "aten/core/pointwise.h"
#include "runtime/device_error.h"
#include "runtime/stream.h"

namespace foo::native {

using foo::kernels::IndexGeometry;

void run_index_move(const at::TensorIteratorBase& iter, const IndexMove& move) {
  if (iter.numel() == 0) return;
  const int first_index = move.value.has_value() ? 1 : 2;
  const int nindex = iter.ntensors() - first_index;
  TORCH_CHECK_NOT_IMPLEMENTED(nindex <= foo::kernels::kMaxIndexTensors, "foo indexes with at most ",
                              foo::kernels::kMaxIndexTensors, " index tensors at once, got ", nindex);
  TORCH_CHECK_NOT_IMPLEMENTED(iter.ndim() <= foo::kernels::kMaxDims, "foo's index kernels take at most ",
                              foo::kernels::kMaxDims, " dims after coalescing, got ", iter.ndim());
  TORCH_INTERNAL_ASSERT(static_cast<int>(move.indexed_sizes.size()) == nindex &&
                        static_cast<int>(move.indexed_strides.size()) == nindex);
  IndexGeometry g;
  g.numel = iter.numel();
  g.ndim = static_cast<int32_t>(iter.ndim());
  g.nindex = nindex;
  g.wrap_negative = move.wrap_negative;
  for (int d = 0; d < g.ndim; ++d) g.sizes[d] = iter.shape()[d];
  auto take = [&](int operand, int slot) {
    g.data[slot] = static_cast<char*>(iter.data_ptr(operand));
    for (int d = 0; d < g.ndim; ++d) g.strides[slot][d] = iter.strides(operand)[d];
  };
  take(0, 0);
  if (!move.value.has_value()) take(1, 1);
  for (int k = 0; k < nindex; ++k) {
    const at::ScalarType t = iter.dtype(first_index + k);
    TORCH_INTERNAL_ASSERT(t == at::kLong || t == at::kInt);
    TORCH_INTERNAL_ASSERT(t == iter.dtype(first_index), "index tensors of one call share a dtype");
    take(first_index + k, 2 + k);
    g.indexed_sizes[k] = move.indexed_sizes[k];
    g.indexed_strides[k] = move.indexed_strides[k];
  }
  g.int32_indices = nindex > 0 && iter.dtype(first_index) == at::kInt;
  g.index32 = !force_64bit_indexing() && iter.can_use_32bit_indexing();
  if (move.value.has_value()) {
    const foo::kernels::ScalarArg v = scalar_arg(*move.value, move.dtype);
    static_assert(sizeof(v.bytes) >= sizeof(g.value));  // index moves have no complex dtype: 8 bytes hold theirs
    std::memcpy(g.value, v.bytes, sizeof(g.value));
  }
  const c10::DeviceIndex device = iter.tensor(0).device().index();
  const auto stream = foo::runtime::current_native_stream(device);
  foo::kernels::DeviceErrorSite site;  // no index tensor: nothing to check
  if (nindex > 0) {
    site = foo::runtime::device_error_site(device, stream, move.error.op, move.error.kind, move.error.dim);
  }
  FOO_CALL_KERNEL(index_move, stream, move.mode, kernel_dtype(move.dtype), g, site);
  if (nindex > 0) foo::runtime::raise_device_error_if_blocking(device);
}

at::Tensor index_along(const at::Tensor& index, int64_t dim, at::IntArrayRef shape) {
  // std::vector, not at::DimVector: GCC 12 reports a false -Wmaybe-uninitialized in SmallVector's
  // growth path here (an error under FOO_WERROR).
  std::vector<int64_t> strides(shape.size(), 0);
  strides[dim] = index.dim() == 0 ? 0 : index.stride(0);
  return index.as_strided(shape, strides);
}

at::TensorIterator index_iterator(const at::Tensor& written, const std::optional<at::Tensor>& read,
                                  at::TensorList indices) {
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).check_all_same_dtype(false).resize_outputs(false);
  config.add_output(written);
  if (read.has_value()) config.add_const_input(*read);
  for (const at::Tensor& index : indices) config.add_const_input(index);
  return config.build();
}

}  // namespace foo::native
