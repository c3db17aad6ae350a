// Host code of the complex pointwise ops whose iterator no builder makes: polar(abs, angle) reads
// two real tensors and writes a complex one. The kernel is the manifest's formula
// (run_polar_out, generated/pointwise/polar_out.cu); the checks are the CPU's (TensorFactories.cpp).
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include "aten/core/pointwise.h"
#include "native/polar_out.h"

namespace foo::native {
namespace {

void check_floating(const at::Tensor& a, const at::Tensor& b) {
  const auto ok = [](at::ScalarType t) { return t == at::kFloat || t == at::kDouble || t == at::kHalf; };
  TORCH_CHECK(ok(a.scalar_type()) && ok(b.scalar_type()), "Expected both inputs to be Half, Float or Double tensors but got ",
              a.scalar_type(), " and ", b.scalar_type());
}

}  // namespace

// The functional overload (CompositeExplicitAutograd upstream, registered here by the manifest's
// out-as-primary entry) passes an undefined `out`.
at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  check_floating(abs, angle);
  if (!out.defined()) out = at::empty({0}, abs.options().dtype(c10::toComplexType(abs.scalar_type())));
  TORCH_CHECK(abs.scalar_type() == angle.scalar_type(), "Expected object of scalar type ", abs.scalar_type(),
              " but got scalar type ", angle.scalar_type(), " for second argument");
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(abs.scalar_type()), "Expected object of scalar type ",
              c10::toComplexType(abs.scalar_type()), " but got scalar type ", out.scalar_type(), " for argument 'out'");
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(abs)
                  .add_const_input(angle)
                  .check_all_same_dtype(false)
                  .build();
  run_polar_out(iter, abs.scalar_type());
  return out;
}

}  // namespace foo::native
