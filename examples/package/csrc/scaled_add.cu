// out = a + alpha * b with broadcasting and type promotion: the elementwise launcher does the
// indexing (the host side turns an at::TensorIterator into the geometry this kernel receives).
#include <torch_foo/kernel.h>

namespace foo_scaled_add::FOO_TARGET {

template <typename T>
struct ScaledAdd {
  torch_foo::opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const {
    using acc_t = torch_foo::opmath_t<T>;
    return T(static_cast<acc_t>(a) + alpha * static_cast<acc_t>(b));
  }
};

void scaled_add(torch_foo::Stream stream, torch_foo::DType dtype, const torch_foo::ElementwiseGeometry& g,
                double alpha) {
  torch_foo::dispatch<torch_foo::kNumericTypes>(dtype, "foo_pkg::scaled_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ScaledAdd<T> f{static_cast<torch_foo::opmath_t<T>>(alpha)};
    torch_foo::launch_elementwise<T, T, T>("foo_pkg::scaled_add", stream, g, f);
  });
}

}  // namespace foo_scaled_add::FOO_TARGET
