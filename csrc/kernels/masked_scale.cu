// native_dropout_backward: grad * mask * scale in opmath_t, as CUDA's masked_scale_kernel.
#include "kernels/elementwise.cuh"
#include "kernels/masked_scale.h"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
struct MaskedScaleFn {
  opmath_t<T> scale;
  __device__ T operator()(T grad, bool mask) const {
    using M = opmath_t<T>;
    return cast<T>(static_cast<M>(grad) * static_cast<M>(mask ? 1 : 0) * scale);
  }
};

}  // namespace

void masked_scale(Stream stream, DType dtype, const ElementwiseGeometry& g, double scale) {
  dispatch<kFloatingTypes>(dtype, "native_dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, bool>("masked_scale", stream, g, MaskedScaleFn<T>{static_cast<opmath_t<T>>(scale)});
  });
}

}  // namespace foo::kernels::FOO_TARGET
