#pragma once
// Division by a divisor fixed for a whole launch, without a divide instruction: the elementwise
// kernel's 32-bit index path splits every element's linear index into one index per dimension,
// a `/` and a `%` per dimension per element, the slowest integer instructions on a GPU (emulated
// in tens of instructions) and on a CPU alike. The host computes a magic multiplier once per
// launch; a division is then a high multiply, an add and a shift (Granlund and Montgomery,
// "Division by invariant integers using multiplication", PLDI 1994; ATen's IntDivider uses the
// same method). tests/test_int_divider.py checks it against `/` and `%`.
#include <cstdint>

#include "kernels/core/dtype.h"  // FOO_HD

namespace foo::kernels {

struct IntDivider32 {
  uint32_t divisor = 1;
  uint32_t magic = 1;  // floor(2^32 * (2^shift - divisor) / divisor) + 1
  uint32_t shift = 0;  // the smallest s with 2^s >= divisor

  IntDivider32() = default;
  // Host only, once per launch: 1 <= d < 2^31.
  explicit IntDivider32(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    magic = static_cast<uint32_t>((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d) / d + 1);
  }

  // n / divisor for n < 2^31 (what 32-bit indexing guarantees): then the high product is at
  // most n and the sum cannot overflow 32 bits.
  FOO_HD uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, magic);
#else
    const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace foo::kernels
