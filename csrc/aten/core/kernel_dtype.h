#pragma once
// ATen dtypes as kernel dtypes, and the one "not implemented for dtype" error of csrc/aten.
// kernels/core/dtype.h numbers its DType as c10::ScalarType does, so the mapping is a cast.
#include <c10/core/ScalarType.h>
#include <string>
#include <c10/util/Exception.h>

#include "kernels/core/dtype.h"

namespace foo::native {

static_assert(static_cast<int>(foo::kernels::DType::UInt8) == static_cast<int>(c10::kByte) &&
                  static_cast<int>(foo::kernels::DType::Int8) == static_cast<int>(c10::kChar) &&
                  static_cast<int>(foo::kernels::DType::Int16) == static_cast<int>(c10::kShort) &&
                  static_cast<int>(foo::kernels::DType::Int32) == static_cast<int>(c10::kInt) &&
                  static_cast<int>(foo::kernels::DType::Int64) == static_cast<int>(c10::kLong) &&
                  static_cast<int>(foo::kernels::DType::Float16) == static_cast<int>(c10::kHalf) &&
                  static_cast<int>(foo::kernels::DType::Float32) == static_cast<int>(c10::kFloat) &&
                  static_cast<int>(foo::kernels::DType::Float64) == static_cast<int>(c10::kDouble) &&
                  static_cast<int>(foo::kernels::DType::Complex64) == static_cast<int>(c10::kComplexFloat) &&
                  static_cast<int>(foo::kernels::DType::Complex128) == static_cast<int>(c10::kComplexDouble) &&
                  static_cast<int>(foo::kernels::DType::Bool) == static_cast<int>(c10::kBool) &&
                  static_cast<int>(foo::kernels::DType::BFloat16) == static_cast<int>(c10::kBFloat16),
              "kernels::DType must number dtypes as c10::ScalarType does");

// Whether kernels have an element type for t (complex, quantized and 8-bit floats have none).
inline bool has_kernel_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::kByte: case c10::kChar: case c10::kShort: case c10::kInt: case c10::kLong:
    case c10::kHalf: case c10::kFloat: case c10::kDouble: case c10::kBool: case c10::kBFloat16:
      return true;
    default:
      return false;
  }
}

// Whether kernels have a complex element type for t (complex64, complex128: kernels/core/dtype.h
// complex_t). Kernels claim them explicitly (kComplexTypes), outside kAllTypes; has_kernel_dtype
// stays the real dtypes, whose copies and fills other paths take.
inline bool has_complex_kernel_dtype(c10::ScalarType t) { return t == c10::kComplexFloat || t == c10::kComplexDouble; }

inline foo::kernels::DType kernel_dtype(c10::ScalarType t) { return static_cast<foo::kernels::DType>(t); }

// NotImplementedError, worded as the CPU's and naming the torch dtype too:
// "\"op\" not implemented for 'Long' (int64) on foo", unless `types` (a set of kernels/core/dtype.h
// bits, e.g. kFloatingTypes) holds t.
inline void check_kernel_dtype(const char* op, c10::ScalarType t, uint32_t types = foo::kernels::kAllTypes) {
  const bool known = has_kernel_dtype(t) || has_complex_kernel_dtype(t);
  TORCH_CHECK_NOT_IMPLEMENTED(known && (types & foo::kernels::dtype_bit(kernel_dtype(t))) != 0, "\"", op,
                              "\" not implemented for '", c10::toString(t), "'",
                              known ? std::string(" (") + foo::kernels::dtype_name(kernel_dtype(t)) + ")" : std::string(),
                              " on foo");
}

}  // namespace foo::native
