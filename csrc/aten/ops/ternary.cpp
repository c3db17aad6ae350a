// where and masked_fill_: argument checks, deprecation warnings and iterators as the CPU's
// implementations build them; the kernels are the manifest's formulas (run_where_self_out,
// run_masked_fill_scalar_, generated/pointwise/).
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "aten/core/pointwise.h"
#include "native/masked_fill_scalar_.h"
#include "native/masked_fill_tensor_.h"
#include "native/where_self_out.h"

namespace foo::native {
namespace {

// The device of the first operand that is not a CPU scalar: where a functional result lives.
c10::Device result_device(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors) {
    if (!t->is_cpu()) return t->device();
  }
  return tensors.begin()[0]->device();
}

}  // namespace

// The functional overload passes an undefined `out`.
at::Tensor& where_self_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other,
                           at::Tensor& out) {
  const auto result_type = at::result_type(self, other);
  if (out.defined()) {
    TORCH_CHECK(out.scalar_type() == result_type, "Expected out type to be ", result_type, " but got ",
                out.scalar_type());
  } else {
    out = at::empty({0}, self.options().dtype(result_type).device(result_device({&self, &other, &condition})));
  }
  at::Tensor condition_ = condition;
  if (condition_.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE(
        "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future "
        "version of PyTorch. Use a boolean condition instead.");
    condition_ = condition_.to(at::kBool);
  }
  TORCH_CHECK(condition_.scalar_type() == at::kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              condition_.scalar_type());
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .allow_cpu_scalars(true)
                  .add_output(out)
                  .add_const_input(condition_)
                  .add_const_input(self)
                  .add_const_input(other)
                  .build();
  run_where_self_out(iter, result_type);
  return out;
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN(
        "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing this "
        "operation. This also applies to advanced indexing e.g. tensor[mask] = scalar");
  }
  at::assert_no_partial_overlap(self, mask);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)  // deprecated, not an error (see the warning)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .add_output(self)
                  .add_const_input(self)
                  .add_const_input(mask)
                  .build();
  // The CPU converts the value with value.to<scalar_t>() (checked: int8 with 300 is an error).
  run_masked_fill_scalar_(iter, self.scalar_type(), value);
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
  return foo::native::masked_fill_scalar_(self, mask, value.item());
}

}  // namespace foo::native
