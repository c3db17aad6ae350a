#pragma once
// Warp-level primitives with CUDA's semantics. A warp is 32 consecutive linear thread ids of the
// block (the last warp may be partial: lanes past the block's end simply do not exist). A
// collective waits until every existing lane named in `mask` has called it, then hands each its
// result; the lanes named in the mask must call the same collective with the same mask.
// Values travel bit-copied in 64 bits, so any trivially copyable T of up to 8 bytes works.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/builtins.h"

namespace foo::sim::detail {

enum WarpOp : uint8_t { kSyncwarp, kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll };

// Out of line on purpose (see emulation.h): the calling fiber may be suspended inside.
uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t bits, int arg, int width);

template <class T>
uint64_t to_bits(const T& v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp shuffles move trivially copyable values of at most 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace foo::sim::detail

void __syncwarp(unsigned mask = 0xffffffffu);

template <class T>
T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  using namespace foo::sim::detail;
  return from_bits<T>(warp_collective(kShflIdx, mask, to_bits(var), srcLane, width));
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned int delta, int width = warpSize) {
  using namespace foo::sim::detail;
  return from_bits<T>(warp_collective(kShflUp, mask, to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned int delta, int width = warpSize) {
  using namespace foo::sim::detail;
  return from_bits<T>(warp_collective(kShflDown, mask, to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  using namespace foo::sim::detail;
  return from_bits<T>(warp_collective(kShflXor, mask, to_bits(var), laneMask, width));
}

unsigned __ballot_sync(unsigned mask, int predicate);
int __any_sync(unsigned mask, int predicate);
int __all_sync(unsigned mask, int predicate);
// The lanes of the caller's warp that call it together. The emulator lets every lane of the warp
// run until it waits or exits, and groups the lanes that reached this call site: lanes that
// returned early are excluded, lanes of a converged warp all included, as on a GPU.
unsigned __activemask();
