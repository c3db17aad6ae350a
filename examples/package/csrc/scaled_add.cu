// out = a + alpha * b with broadcasting and type promotion: the elementwise launcher does the
// indexing (the host side turns an at::TensorIterator into the geometry this kernel receives).
#include <torch_foo/kernel.h>

namespace foo_scaled_add::FOO_TARGET {

// Written as torch_foo's generated pointwise functors are (generated/pointwise/*.cu): compute in
// M = opmath_t<T> (float for 16-bit floats), convert back with cast<T>.
template <typename T>
struct ScaledAdd {
  using M = torch_foo::opmath_t<T>;
  M alpha;
  __device__ T operator()(T a, T b) const { return torch_foo::cast<T>(static_cast<M>(a) + alpha * static_cast<M>(b)); }
};

void scaled_add(torch_foo::Stream stream, torch_foo::DType dtype, const torch_foo::ElementwiseGeometry& g,
                double alpha) {
  torch_foo::dispatch<torch_foo::kNumericTypes>(dtype, "foo_pkg::scaled_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ScaledAdd<T> f{static_cast<typename ScaledAdd<T>::M>(alpha)};
    torch_foo::launch_elementwise<T, T, T>("foo_pkg::scaled_add", stream, g, f);
  });
}

}  // namespace foo_scaled_add::FOO_TARGET
