#pragma once
// What a generated pointwise kernel (generated/pointwise/*.cu) is built from: its functors
// (one per manifest formula) are launched through the elementwise launcher for the dtype the
// host computed in, after dispatch<> checked the manifest's dtype set.
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/core/elementwise.cuh"
#include "kernels/core/formulas.cuh"
#include "kernels/core/pointwise.h"

namespace foo::kernels::FOO_TARGET {

// An operand's element type: Same is the computation dtype T; RealOf and ComplexOf its real and
// complex types (`output: real` of abs, `output: complex` of polar); any other type is fixed (a
// bool mask).
struct Same {};
struct RealOf {};
struct ComplexOf {};
template <typename Spec, typename T> struct OperandImpl { using type = Spec; };
template <typename T> struct OperandImpl<Same, T> { using type = T; };
template <typename T> struct OperandImpl<RealOf, T> { using type = real_of_t<T>; };
template <typename T> struct OperandImpl<ComplexOf, T> { using type = complex_of_t<T>; };
template <typename Spec, typename T>
using operand_t = typename OperandImpl<Spec, T>::type;

// out = Fn<T>(args)(in...) for the T `dtype` names, which must be in Types.
template <uint32_t Types, template <typename> class Fn, typename OutSpec, typename... InSpecs>
void launch_pointwise(const char* name, Stream stream, DType dtype, const ElementwiseGeometry& g,
                      const PointwiseArgs& args) {
  dispatch<Types>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<operand_t<OutSpec, T>, operand_t<InSpecs, T>...>(name, stream, g, Fn<T>(args));
  });
}

[[noreturn]] inline void unknown_formula(const char* name, int32_t formula) {
  throw std::invalid_argument(std::string(name) + ": no formula " + std::to_string(formula));
}

}  // namespace foo::kernels::FOO_TARGET
