// native_dropout_backward (what F.dropout's gradient reaches on foo): grad * mask * scale.
#include <ATen/ATen.h>

#include "native/native_dropout_backward.h"
#include "aten/elementwise.h"
#include "aten/pointwise.h"
#include "kernels/masked_scale.h"

namespace foo::native {

at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  const auto dtype = grad_output.scalar_type();
  FOO_CHECK_DTYPE(at::isFloatingType(dtype), "native_dropout_backward", dtype);
  at::Tensor out = at::empty_like(grad_output, c10::MemoryFormat::Contiguous);
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .add_output(out)
                  .add_const_input(grad_output)
                  .add_const_input(mask)
                  .build();
  const auto kdtype = kernel_dtype(dtype);
  run_elementwise(iter, dtype, {dtype, at::kBool}, [&](foo::kernels::Stream s, const foo::kernels::ElementwiseGeometry& g) {
    FOO_CALL_KERNEL(masked_scale, s, kdtype, g, scale);
  });
  return out;
}

}  // namespace foo::native
