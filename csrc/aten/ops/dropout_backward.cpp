// native_dropout_backward (what F.dropout's gradient reaches on foo): the manifest's formula
// (grad * mask * scale) over an iterator of the gradient's dtype and the bool mask.
#include <ATen/ATen.h>

#include "native/native_dropout_backward.h"

namespace foo::native {

at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  at::Tensor out = at::empty_like(grad_output, c10::MemoryFormat::Contiguous);
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .add_output(out)
                  .add_const_input(grad_output)
                  .add_const_input(mask)
                  .build();
  run_native_dropout_backward(iter, grad_output.scalar_type(), scale);
  return out;
}

}  // namespace foo::native
