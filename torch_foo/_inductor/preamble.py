"""The C++ at the top of every library of generated foo kernels (kept here as text so it ships
with the Python package)."""

PREAMBLE = r'''
// The top of every library of Inductor-generated foo kernels (torch_foo/_inductor, docs/compile.md).
// Helpers the generated expressions call, for both targets: Python's integer division and modulo
// (Inductor's index arithmetic), reduction identities and combines, and the C entry points' error
// handling. Kernels include only the public kernel header, as any extension does.
#include <torch_foo/c_abi.h>
#include <torch_foo/kernel.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace foo_inductor::FOO_TARGET {

namespace math = torch_foo::math;

template <typename T>
FOO_HD T floordiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  } else {
    return math::floor(a / b);
  }
}

template <typename T>
FOO_HD T pymod(T a, T b) {  // the sign of the divisor, as Python's % and torch.remainder
  if constexpr (std::is_integral_v<T>) {
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    const T r = math::fmod(a, b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  }
}

template <typename T>
FOO_HD T cmod(T a, T b) {  // the sign of the dividend, as C's % and torch.fmod
  if constexpr (std::is_integral_v<T>) {
    return a % b;
  } else {
    return math::fmod(a, b);
  }
}

template <typename A, typename B>
FOO_HD auto truncdiv(A a, B b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    return a / b;
  } else {
    return math::trunc(a / b);
  }
}

template <typename T>
FOO_HD auto to_float(T x) {  // math:: takes float or double
  if constexpr (std::is_floating_point_v<T>) {
    return x;
  } else {
    return static_cast<float>(x);
  }
}

template <typename T>
FOO_HD T pow(T a, T b) {
  if constexpr (std::is_integral_v<T>) {  // exponentiation by squaring, as the CPU's integer pow
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    T result = 1;
    for (; b; b >>= 1, a *= a)
      if (b & 1) result *= a;
    return result;
  } else {
    return math::pow(a, b);
  }
}

template <typename T>
FOO_HD bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

template <typename T>
FOO_HD bool isinf(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x == std::numeric_limits<T>::infinity() || x == -std::numeric_limits<T>::infinity();
  } else {
    return false;
  }
}

template <typename T>
FOO_HD bool signbit(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return math::copysign(T(1), x) < T(0);
  } else if constexpr (std::is_signed_v<T>) {
    return x < 0;
  } else {
    return false;
  }
}

template <typename T>
FOO_HD auto rsqrt(T x) { return decltype(to_float(x))(1) / math::sqrt(to_float(x)); }

template <typename T>
FOO_HD auto sigmoid(T x) {
  const auto v = to_float(x);
  return decltype(v)(1) / (decltype(v)(1) + math::exp(-v));
}

#define FOO_INDUCTOR_ROUNDING(name)             \
  template <typename T>                         \
  FOO_HD T name(T x) {                          \
    if constexpr (std::is_floating_point_v<T>) { \
      return math::name(x);                     \
    } else {                                    \
      return x;                                 \
    }                                           \
  }
FOO_INDUCTOR_ROUNDING(floor)
FOO_INDUCTOR_ROUNDING(ceil)
FOO_INDUCTOR_ROUNDING(trunc)
#undef FOO_INDUCTOR_ROUNDING

// The identities of max and min: -inf / +inf for floats, the type's extremes otherwise.
template <typename T>
FOO_HD T lowest() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
FOO_HD T highest() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

template <typename To, typename From>
FOO_HD To bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between types of one size");
  To out;
  memcpy(&out, &v, sizeof(To));
  return out;
}

// Welford's running mean and sum of squared deviations (layer norm, var, batch norm).
FOO_HD void welford_add(float& mean, float& m2, float& weight, float v) {
  weight += 1.0f;
  const float delta = v - mean;
  mean += delta / weight;
  m2 += delta * (v - mean);
}

FOO_HD void welford_merge(float& mean, float& m2, float& weight, float o_mean, float o_m2, float o_weight) {
  if (o_weight == 0.0f) return;
  const float total = weight + o_weight;
  const float delta = o_mean - mean;
  const float share = o_weight / total;
  mean += delta * share;
  m2 += o_m2 + delta * delta * weight * share;
  weight = total;
}

// One pass of softmax's max and sum of exp(v - max): the sum is rescaled when the max grows.
template <typename T>
FOO_HD void online_softmax_add(T& vmax, T& vsum, T v) {
  if (v > vmax) {
    vsum = vsum * math::exp(vmax - v) + T(1);
    vmax = v;
  } else if (vmax != -std::numeric_limits<T>::infinity()) {
    vsum += math::exp(v - vmax);
  }
}

// Inductor's random numbers (dropout, rand_like): a counter-based hash of (seed, offset), so a
// value depends only on them, on both targets and for any grid. The seeds come from foo's own
// generator (Inductor draws them with torch.randint); the stream differs from eager's Philox, as
// Inductor's Triton kernels differ from CUDA's eager kernels.
FOO_HD uint64_t mix64(uint64_t z) {  // splitmix64's finaliser
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

FOO_HD uint64_t random_bits(int64_t seed, int64_t offset, uint64_t lane = 0) {
  return mix64(mix64(static_cast<uint64_t>(seed) ^ (lane << 56)) ^ static_cast<uint64_t>(offset));
}

FOO_HD float rand(int64_t seed, int64_t offset) {  // [0, 1), 24 random bits
  return static_cast<float>(random_bits(seed, offset) >> 40) * 0x1p-24f;
}

FOO_HD float randn(int64_t seed, int64_t offset) {  // Box-Muller
  const float u1 = (static_cast<float>(random_bits(seed, offset) >> 40) + 1.0f) * 0x1p-24f;  // (0, 1]
  const float u2 = static_cast<float>(random_bits(seed, offset, 1) >> 40) * 0x1p-24f;
  return math::sqrt(-2.0f * math::log(u1)) * math::cos(6.28318530717958647692f * u2);
}

FOO_HD int64_t randint64(int64_t seed, int64_t offset, int64_t low, int64_t high) {
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + random_bits(seed, offset) % span);
}

}  // namespace foo_inductor::FOO_TARGET

namespace foo_inductor {
using namespace FOO_TARGET;  // foo_inductor::floordiv names the helper of the target compiled

#if !defined(__CUDACC__)
// Runs a launcher on the current stream of `device`; the error message (or null) for Python.
template <typename Launch>
const char* run(int32_t device, Launch&& launch) {
  thread_local std::string message;
  try {
    void* stream = nullptr;
    if (torch_foo_current_stream(device, &stream) != 0) {
      message = torch_foo_last_error();
      return message.c_str();
    }
    launch(stream);
    return nullptr;
  } catch (const std::exception& e) {
    message = e.what();
    return message.c_str();
  }
}
#endif
}  // namespace foo_inductor
'''
