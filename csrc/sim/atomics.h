#pragma once
// CUDA's atomic functions for the sim target. Blocks run concurrently on several host threads,
// so these are real atomic read-modify-writes: GCC's __atomic builtins on plain memory
// (std::atomic_ref would need C++20). Relaxed ordering, as CUDA's atomics; __threadfence orders.
// Only the overloads CUDA has are declared, so code that compiles here compiles with nvcc.
#include <cstddef>
#include <cstdint>

// Checked kernels (FOO_SIM_CHECKED, sim/checked.h): an atomic is not instrumented as a plain load
// and store (two threads' atomics on one word would look like a race); it is bounds-checked by
// one call instead.
#if defined(FOO_SIM_CHECKED)
extern "C" void foo_sim_check_atomic(const void* p, size_t bytes);
#define FOO_SIM_ATOMIC inline __attribute__((no_sanitize_address))
#define FOO_SIM_ATOMIC_CHECK(addr) foo_sim_check_atomic(addr, sizeof(*(addr)))
#else
#define FOO_SIM_ATOMIC inline
#define FOO_SIM_ATOMIC_CHECK(addr) ((void)0)
#endif

namespace foo::sim::detail {

using u32_alias = uint32_t __attribute__((may_alias));
using u64_alias = uint64_t __attribute__((may_alias));

// Compare-and-swap loop applying `f` to the current value; returns the old value.
template <class T, class F>
FOO_SIM_ATOMIC T atomic_update(T* addr, F f) {
  FOO_SIM_ATOMIC_CHECK(addr);
  T old = __atomic_load_n(addr, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(addr, &old, f(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}

// The same for float/double, through their bit patterns.
template <class F>
FOO_SIM_ATOMIC float atomic_update_f32(float* addr, F f) {
  FOO_SIM_ATOMIC_CHECK(addr);
  auto* bits = reinterpret_cast<u32_alias*>(addr);
  uint32_t old = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
  float oldf;
  do {
    __builtin_memcpy(&oldf, &old, 4);
    const float nf = f(oldf);
    __builtin_memcpy(&next, &nf, 4);
  } while (!__atomic_compare_exchange_n(bits, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return oldf;
}
template <class F>
FOO_SIM_ATOMIC double atomic_update_f64(double* addr, F f) {
  FOO_SIM_ATOMIC_CHECK(addr);
  auto* bits = reinterpret_cast<u64_alias*>(addr);
  uint64_t old = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
  double oldd;
  do {
    __builtin_memcpy(&oldd, &old, 8);
    const double nd = f(oldd);
    __builtin_memcpy(&next, &nd, 8);
  } while (!__atomic_compare_exchange_n(bits, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return oldd;
}

template <class T>
FOO_SIM_ATOMIC T atomic_cas(T* addr, T compare, T val) {
  FOO_SIM_ATOMIC_CHECK(addr);
  __atomic_compare_exchange_n(addr, &compare, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;  // the old value either way
}

}  // namespace foo::sim::detail

#define FOO_SIM_ATOMIC_RMW(name, builtin, T) \
  FOO_SIM_ATOMIC T name(T* addr, T val) {             \
    FOO_SIM_ATOMIC_CHECK(addr);                        \
    return builtin(addr, val, __ATOMIC_RELAXED);       \
  }
FOO_SIM_ATOMIC_RMW(atomicAdd, __atomic_fetch_add, int)
FOO_SIM_ATOMIC_RMW(atomicAdd, __atomic_fetch_add, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicAdd, __atomic_fetch_add, unsigned long long)
FOO_SIM_ATOMIC_RMW(atomicSub, __atomic_fetch_sub, int)
FOO_SIM_ATOMIC_RMW(atomicSub, __atomic_fetch_sub, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicExch, __atomic_exchange_n, int)
FOO_SIM_ATOMIC_RMW(atomicExch, __atomic_exchange_n, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicExch, __atomic_exchange_n, unsigned long long)
FOO_SIM_ATOMIC_RMW(atomicAnd, __atomic_fetch_and, int)
FOO_SIM_ATOMIC_RMW(atomicAnd, __atomic_fetch_and, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicAnd, __atomic_fetch_and, unsigned long long)
FOO_SIM_ATOMIC_RMW(atomicOr, __atomic_fetch_or, int)
FOO_SIM_ATOMIC_RMW(atomicOr, __atomic_fetch_or, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicOr, __atomic_fetch_or, unsigned long long)
FOO_SIM_ATOMIC_RMW(atomicXor, __atomic_fetch_xor, int)
FOO_SIM_ATOMIC_RMW(atomicXor, __atomic_fetch_xor, unsigned int)
FOO_SIM_ATOMIC_RMW(atomicXor, __atomic_fetch_xor, unsigned long long)
#undef FOO_SIM_ATOMIC_RMW

#define FOO_SIM_ATOMIC_MINMAX(T)                                                                  \
  inline T atomicMax(T* addr, T val) {                                                            \
    return foo::sim::detail::atomic_update(addr, [val](T old) { return old < val ? val : old; }); \
  }                                                                                               \
  inline T atomicMin(T* addr, T val) {                                                            \
    return foo::sim::detail::atomic_update(addr, [val](T old) { return val < old ? val : old; }); \
  }
FOO_SIM_ATOMIC_MINMAX(int)
FOO_SIM_ATOMIC_MINMAX(unsigned int)
FOO_SIM_ATOMIC_MINMAX(long long)
FOO_SIM_ATOMIC_MINMAX(unsigned long long)
#undef FOO_SIM_ATOMIC_MINMAX

inline float atomicAdd(float* addr, float val) {
  return foo::sim::detail::atomic_update_f32(addr, [val](float old) { return old + val; });
}
inline double atomicAdd(double* addr, double val) {
  return foo::sim::detail::atomic_update_f64(addr, [val](double old) { return old + val; });
}
inline float atomicExch(float* addr, float val) {
  return foo::sim::detail::atomic_update_f32(addr, [val](float) { return val; });
}

inline int atomicCAS(int* addr, int compare, int val) { return foo::sim::detail::atomic_cas(addr, compare, val); }
inline unsigned int atomicCAS(unsigned int* addr, unsigned int compare, unsigned int val) {
  return foo::sim::detail::atomic_cas(addr, compare, val);
}
inline unsigned long long atomicCAS(unsigned long long* addr, unsigned long long compare, unsigned long long val) {
  return foo::sim::detail::atomic_cas(addr, compare, val);
}
inline unsigned short atomicCAS(unsigned short* addr, unsigned short compare, unsigned short val) {
  return foo::sim::detail::atomic_cas(addr, compare, val);
}

// CUDA's wrapping counters: inc wraps to 0 past val, dec wraps to val below 0 (or above val).
inline unsigned int atomicInc(unsigned int* addr, unsigned int val) {
  return foo::sim::detail::atomic_update(addr, [val](unsigned old) { return old >= val ? 0u : old + 1; });
}
inline unsigned int atomicDec(unsigned int* addr, unsigned int val) {
  return foo::sim::detail::atomic_update(addr, [val](unsigned old) { return old == 0 || old > val ? val : old - 1; });
}
