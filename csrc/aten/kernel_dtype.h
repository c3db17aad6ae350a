#pragma once
// ATen dtypes as the kernels' DType (kernels/dtype.h). DType numbers dtypes as c10::ScalarType
// does, so the conversion is a cast; this is the one place that checks the numbering.
#include <c10/core/ScalarType.h>

#include "kernels/dtype.h"

namespace foo::native {

namespace dtype_detail {
constexpr bool same_number(foo::kernels::DType d, c10::ScalarType t) {
  return static_cast<int>(d) == static_cast<int>(t);
}
using D = foo::kernels::DType;
static_assert(same_number(D::UInt8, c10::kByte) && same_number(D::Int8, c10::kChar) &&
                  same_number(D::Int16, c10::kShort) && same_number(D::Int32, c10::kInt) &&
                  same_number(D::Int64, c10::kLong) && same_number(D::Float16, c10::kHalf) &&
                  same_number(D::Float32, c10::kFloat) && same_number(D::Float64, c10::kDouble) &&
                  same_number(D::Bool, c10::kBool) && same_number(D::BFloat16, c10::kBFloat16),
              "kernels::DType must number dtypes as c10::ScalarType does");
}  // namespace dtype_detail

inline foo::kernels::DType kernel_dtype(c10::ScalarType t) { return static_cast<foo::kernels::DType>(t); }

// Whether the kernels have a DType for t (complex, 8-bit floats, quantized and unsigned types
// beyond uint8 have none).
inline bool has_kernel_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::kByte: case c10::kChar: case c10::kShort: case c10::kInt: case c10::kLong:
    case c10::kHalf: case c10::kFloat: case c10::kDouble: case c10::kBool: case c10::kBFloat16:
      return true;
    default:
      return false;
  }
}

}  // namespace foo::native
