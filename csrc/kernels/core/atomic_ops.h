#pragma once
// Atomic read-modify-write of every element type, for scatter-style kernels (index_put_ with
// accumulate, index_add, scatter_add/scatter_reduce, embedding backward) on both targets.
//
// atomic_combine<Op>(addr, v) makes *addr = Op(*addr, v) atomically. Where CUDA has a native
// atomic (add on float, double, int32, int64; max/min on int32, int64) it is used; every other
// case is a compare-and-swap loop on the word holding the element: 8, 4 or 2 bytes wide, and for
// 1-byte elements the aligned 4-byte word that contains them, as PyTorch's CUDA atomics do (the
// allocator hands out 512-byte aligned blocks, so that word is always inside the allocation).
// 16-bit floats combine in float and round once per update, as CUDA's atomicAdd on half does.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"

namespace foo::kernels {

enum class Combine : int8_t { Add, Mul, Max, Min };

template <typename T>
FOO_HD bool combine_is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    const auto x = static_cast<opmath_t<T>>(v);
    return x != x;
  }
}

// Op(a, b) in the element type: bool add/mul are or/and (as the CPU's `bool += bool`), integers
// wrap, max/min propagate NaN (as torch.amax and scatter_reduce's amax do).
template <Combine Op, typename T>
FOO_HD T combine_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (Op == Combine::Add || Op == Combine::Max) return a || b;
    else return a && b;
  } else {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    if constexpr (Op == Combine::Add) {
      if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) +
                                                                 static_cast<std::make_unsigned_t<T>>(y));
      else return cast<T>(x + y);
    } else if constexpr (Op == Combine::Mul) {
      if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) *
                                                                 static_cast<std::make_unsigned_t<T>>(y));
      else return cast<T>(x * y);
    } else {
      if (combine_is_nan(a)) return a;
      if (combine_is_nan(b)) return b;
      if constexpr (Op == Combine::Max) return x < y ? b : a;
      else return y < x ? b : a;
    }
  }
}

namespace atomic_detail {

template <typename W, typename T>
__device__ __forceinline__ T from_bits(W w) {
  T v;
  memcpy(&v, &w, sizeof(T));
  return v;
}
template <typename W, typename T>
__device__ __forceinline__ W to_bits(T v) {
  W w = 0;
  memcpy(&w, &v, sizeof(T));
  return w;
}

// Compare-and-swap loop on a word of W (unsigned short, unsigned int or unsigned long long) that
// is exactly the element.
template <Combine Op, typename T, typename W>
__device__ __forceinline__ void cas_whole(T* addr, T v) {
  W* word = reinterpret_cast<W*>(addr);
  W old = *word, assumed;
  do {
    assumed = old;
    const T next = combine_values<Op>(from_bits<W, T>(assumed), v);
    old = atomicCAS(word, assumed, to_bits<W>(next));
  } while (old != assumed);
}

// 1-byte elements: compare-and-swap on the aligned 4-byte word containing the byte.
template <Combine Op, typename T>
__device__ __forceinline__ void cas_byte(T* addr, T v) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(addr);
  unsigned int* word = reinterpret_cast<unsigned int*>(address & ~uintptr_t(3));
  const unsigned shift = static_cast<unsigned>(address & 3u) * 8u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const T current = from_bits<uint8_t, T>(static_cast<uint8_t>((assumed >> shift) & 0xffu));
    const unsigned int next_byte = to_bits<uint8_t>(combine_values<Op>(current, v));
    const unsigned int next = (assumed & ~(0xffu << shift)) | (next_byte << shift);
    old = atomicCAS(word, assumed, next);
  } while (old != assumed);
}

}  // namespace atomic_detail

template <Combine Op, typename T>
__device__ __forceinline__ void atomic_combine(T* addr, T v) {
  using namespace atomic_detail;
  if constexpr (Op == Combine::Add && (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                       std::is_same_v<T, int32_t>)) {
    atomicAdd(addr, v);
  } else if constexpr (Op == Combine::Add && std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
  } else if constexpr ((Op == Combine::Max || Op == Combine::Min) && std::is_same_v<T, int32_t>) {
    if constexpr (Op == Combine::Max) atomicMax(addr, v);
    else atomicMin(addr, v);
  } else if constexpr ((Op == Combine::Max || Op == Combine::Min) && std::is_same_v<T, int64_t>) {
    if constexpr (Op == Combine::Max) atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
    else atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  } else if constexpr (sizeof(T) == 8) {
    cas_whole<Op, T, unsigned long long>(addr, v);
  } else if constexpr (sizeof(T) == 4) {
    cas_whole<Op, T, unsigned int>(addr, v);
  } else if constexpr (sizeof(T) == 2) {
    cas_whole<Op, T, unsigned short>(addr, v);
  } else {
    static_assert(sizeof(T) == 1, "element types are 1, 2, 4 or 8 bytes");
    cas_byte<Op, T>(addr, v);
  }
}

}  // namespace foo::kernels
