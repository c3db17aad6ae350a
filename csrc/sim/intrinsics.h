#pragma once
// CUDA's device math and bit intrinsics for the sim target, under CUDA's names. The standard
// functions (expf, sqrt, fmaxf, ...) come from <math.h>, whose C++ form also brings the float
// overloads of sqrt, exp, ... into the global namespace, as CUDA's headers do for device code.
// The fast-math variants (__expf, ...) are the accurate functions here: the sim target computes
// at least as precisely as the GPU, never bit-identically for transcendentals.
#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <time.h>

using std::isfinite;
using std::isinf;
using std::isnan;

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }

namespace foo::sim::detail {
template <class To, class From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
}  // namespace foo::sim::detail

inline int __float_as_int(float x) { return foo::sim::detail::bit_cast<int>(x); }
inline unsigned int __float_as_uint(float x) { return foo::sim::detail::bit_cast<unsigned int>(x); }
inline float __int_as_float(int x) { return foo::sim::detail::bit_cast<float>(x); }
inline float __uint_as_float(unsigned int x) { return foo::sim::detail::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return foo::sim::detail::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return foo::sim::detail::bit_cast<double>(x); }

inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}

// Read-only cache loads: plain loads on the host.
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// CUDA's integer and mixed min/max overloads (float ones: fminf/fmaxf semantics).
#define FOO_SIM_MINMAX(T)                                \
  inline T min(T a, T b) { return b < a ? b : a; }       \
  inline T max(T a, T b) { return a < b ? b : a; }
FOO_SIM_MINMAX(int)
FOO_SIM_MINMAX(unsigned int)
FOO_SIM_MINMAX(long)
FOO_SIM_MINMAX(unsigned long)
FOO_SIM_MINMAX(long long)
FOO_SIM_MINMAX(unsigned long long)
#undef FOO_SIM_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// Cycle counters: nanoseconds of a monotonic clock on the host (a busy-wait on clock64() waits
// about as many nanoseconds as a GPU waits cycles).
inline long long clock64() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
