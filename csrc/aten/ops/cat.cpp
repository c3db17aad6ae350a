// torch.cat (stack, hstack, ... reach it). ATen's meta function checks the inputs and decides the
// result's shape, dtype and memory format. Inputs of the result's dtype that are dense in its
// memory format are copied by one batched kernel launch (kernels/ops/cat.cu) per 64 inputs; any
// other input (another dtype, other strides) is copied into its slice by copy_ (strided,
// casting), as the CPU does.
#include <ATen/ATen.h>
#include <ATen/ops/cat_meta.h>

#include "kernels/ops/cat.h"
#include "native/cat_out.h"
#include "runtime/stream.h"
#include "aten/core/launch_args.h"

namespace foo::native {
namespace {

// The order of `t`'s dims in memory for a memory format, outermost first.
std::vector<int64_t> memory_order(int64_t ndim, at::MemoryFormat format) {
  std::vector<int64_t> order(static_cast<size_t>(ndim));
  for (int64_t d = 0; d < ndim; ++d) order[d] = d;
  if ((format == at::MemoryFormat::ChannelsLast && ndim == 4) ||
      (format == at::MemoryFormat::ChannelsLast3d && ndim == 5)) {
    order.erase(order.begin() + 1);
    order.push_back(1);  // channels innermost
  }
  return order;
}

// ATen's cat_should_skip_tensor: legacy empty 1-D inputs take no part.
bool skipped(const at::Tensor& t) { return t.numel() == 0 && t.dim() == 1; }

void cat_impl(const at::ITensorListRef& tensors, int64_t dim, at::MemoryFormat memory_format,
              const at::Tensor& result) {
  if (result.numel() == 0) return;
  const bool batched_out = result.is_contiguous(memory_format);
  foo::kernels::CatBatch batch;
  batch.out = result.mutable_data_ptr();
  batch.out_dim_size = result.size(dim);
  batch.element_size = static_cast<int32_t>(result.element_size());
  const std::vector<int64_t> order = memory_order(result.dim(), memory_format);
  for (size_t p = std::find(order.begin(), order.end(), dim) - order.begin() + 1; p < order.size(); ++p) {
    batch.inner *= result.size(order[p]);
  }
  auto stream = stream_of(result);
  auto flush = [&] {
    FOO_CALL_KERNEL(cat_batch, stream, batch);
    batch.count = 0;
  };
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    if (skipped(t)) continue;
    const int64_t size = t.size(dim);
    if (t.numel() > 0) {
      if (batched_out && t.scalar_type() == result.scalar_type() && t.is_contiguous(memory_format)) {
        batch.inputs[batch.count++] = {t.const_data_ptr(), size, offset, t.numel()};
        if (batch.count == foo::kernels::kCatBatch) flush();
      } else {
        result.narrow(dim, offset, size).copy_(t);
      }
    }
    offset += size;
  }
  if (batch.count > 0) flush();
}

}  // namespace

TORCH_IMPL_FUNC(cat_out)(const at::ITensorListRef& tensors, int64_t dim, int64_t /*valid*/, bool /*all_contiguous*/,
                         bool /*all_same_dtype*/, bool /*all_same_sizes_and_stride*/, at::MemoryFormat memory_format,
                         const at::Tensor& out) {
  cat_impl(tensors, dim, memory_format, out);
}

}  // namespace foo::native
