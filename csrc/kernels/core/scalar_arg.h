#pragma once
// A scalar argument of an op (alpha, value, weight, min/max, exponent) converted on the host to
// the element type the kernel reads, as ATen's `scalar.to<T>()` does, and passed by value.
#include <cstring>

#include "kernels/core/dtype.h"

namespace foo::kernels {

struct ScalarArg {
  alignas(16) unsigned char bytes[16] = {};  // a complex128 is the largest

  template <typename T>
  FOO_HD T as() const {
    static_assert(sizeof(T) <= sizeof(bytes), "ScalarArg holds at most 16 bytes");
    T value;
    memcpy(&value, bytes, sizeof(T));
    return value;
  }
};

}  // namespace foo::kernels
