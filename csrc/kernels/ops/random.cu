#include "kernels/ops/random.h"

#include <limits>
#include <type_traits>

#include "kernels/core/det_math.h"
#include "kernels/core/device_error.cuh"
#include "kernels/core/exact_math.h"
#include "kernels/core/kernel.h"
#include "kernels/core/philox.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;
// Grid-stride loops past this many blocks. Values never depend on it (element i always takes
// counter i / 2); tests/test_random_ops.py fills more elements than one grid covers.
constexpr int64_t kMaxBlocks = 1024;

// A thread per Philox counter (element pair).
dim3 grid_for(int64_t n) { return blocks_for((n + 1) / 2, kThreads, kMaxBlocks); }

// Calls f(i, k, draw) for the elements i < n of this thread's counters (grid-stride): element
// i = 2g + k takes word pair k of counter g's draw; k == 0 comes first for each g.
template <typename F>
__device__ inline void for_each_element(int64_t n, uint64_t seed, uint64_t offset, F&& f) {
  const int64_t pairs = (n + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < pairs; g += stride) {
    const Philox4 r = philox_draw(g, seed, offset);
    for (int k = 0; k < 2 && 2 * g + k < n; ++k) f(2 * g + k, k, r);
  }
}

// The two uniforms of a draw: element 2g takes u[0], element 2g + 1 takes u[1].
struct Uniforms {
  double u[2];
  __device__ explicit Uniforms(const Philox4& r) : u{unit_double(r.v[0], r.v[1]), unit_double(r.v[2], r.v[3])} {}
};

// A double value into T: 16-bit floats round through float, as a double -> float -> T cast;
// integer types saturate (a geometric draw can exceed int8).
template <typename T>
__device__ inline T from_double(double v) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T>) {
    constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
    return v >= kMax ? std::numeric_limits<T>::max() : static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// eps(T) / 2: exponential_ caps log(1 - u) there, as CUDA does, so no value rounds to 0.
template <typename T>
__device__ constexpr double half_epsilon() {
  if constexpr (std::is_same_v<T, half_t>) return 0x1p-11;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return 0x1p-8;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-24;
  else return 0x1p-53;
}

// The standard-normal pair of (u0, u1) by Box-Muller, scaled: mean + std * (cos, sin) branch.
__device__ inline void box_muller(const Uniforms& d, double mean, double std, double out[2]) {
  // 1 - u0 is exact and in (0, 1]: the log is finite.
  const double radius = mul_rn(std, sqrt_rn(-2.0 * det_log(1.0 - d.u[0])));
  double s, c;
  det_sincos_2pi(d.u[1], &s, &c);
  out[0] = add_rn(mean, mul_rn(radius, c));
  out[1] = add_rn(mean, mul_rn(radius, s));
}

// One double per element of the pair (see random.h for each formula).
template <Distribution D>
__device__ inline void distribution_pair(const Uniforms& d, double a, double b, double half_eps, double v[2]) {
  if constexpr (D == Distribution::Normal || D == Distribution::LogNormal) {
    box_muller(d, a, b, v);
    if constexpr (D == Distribution::LogNormal) {
      v[0] = det_exp(v[0]);
      v[1] = det_exp(v[1]);
    }
  } else {  // an else, not a return: nvcc warns of an unreachable loop otherwise
    for (int k = 0; k < 2; ++k) {
      const double u = d.u[k];
      if constexpr (D == Distribution::Uniform) {
        v[k] = add_rn(a, mul_rn(sub_rn(b, a), u));
      } else if constexpr (D == Distribution::Exponential) {
        double lg = det_log(1.0 - u);
        if (lg > -half_eps) lg = -half_eps;
        v[k] = div_rn(-lg, a);
      } else if constexpr (D == Distribution::Cauchy) {
        // sin and cos of pi * u; u == 0 (cot = inf) takes the smallest half-step instead.
        double s, c;
        det_sincos_2pi(u == 0.0 ? 0x1p-55 : u * 0.5, &s, &c);
        v[k] = sub_rn(a, mul_rn(b, div_rn(c, s)));
      } else {  // Geometric; a = log1p(-p) < 0
        const double trials = ceil(div_rn(det_log(1.0 - u), a));
        v[k] = trials < 1.0 ? 1.0 : trials;
      }
    }
  }
}

template <typename T, Distribution D>
__global__ void distribution_kernel(T* out, Layout layout, int64_t n, uint64_t seed, uint64_t offset, double a,
                                    double b) {
  double v[2];  // the pair's values, computed at its first element
  for_each_element(n, seed, offset, [&](int64_t i, int k, const Philox4& r) {
    if (k == 0) distribution_pair<D>(Uniforms(r), a, b, half_epsilon<T>(), v);
    T t = from_double<T>(v[k]);
    if constexpr (D == Distribution::Uniform) {
      // Rounding to T may reach b; the interval is half-open, so such values fold back to a.
      if (!(static_cast<double>(static_cast<opmath_t<T>>(t)) < b)) t = from_double<T>(a);
    }
    out[offset_of(layout, i)] = t;
  });
}

template <typename T>
__global__ void random_int_kernel(T* out, Layout layout, int64_t n, uint64_t seed, uint64_t offset, uint64_t range,
                                  int64_t base) {
  const bool wide = range == 0 || range >= (uint64_t{1} << 32);
  for_each_element(n, seed, offset, [&](int64_t i, int k, const Philox4& r) {
    const uint32_t hi = r.v[2 * k], lo = r.v[2 * k + 1];
    const uint64_t bits = wide ? (static_cast<uint64_t>(hi) << 32 | lo) : hi;
    const uint64_t value = range == 0 ? bits : bits % range + static_cast<uint64_t>(base);
    out[offset_of(layout, i)] = cast<T>(static_cast<int64_t>(value));
  });
}

// The uniform of element pair word k.
__device__ inline double uniform_of(const Philox4& r, int k) { return unit_double(r.v[2 * k], r.v[2 * k + 1]); }

__device__ inline double load_double(const void* data, DType dtype, int64_t offset) {
  switch (dtype) {
    case DType::Float16: return static_cast<float>(static_cast<const half_t*>(data)[offset]);
    case DType::BFloat16: return static_cast<float>(static_cast<const bfloat16_t*>(data)[offset]);
    case DType::Float32: return static_cast<const float*>(data)[offset];
    default: return static_cast<const double*>(data)[offset];
  }
}

template <typename T>
__global__ void bernoulli_kernel(T* out, Layout layout, int64_t n, uint64_t seed, uint64_t offset, double p,
                                 const void* p_data, DType p_dtype, Layout p_layout, DeviceErrorSite p_error) {
  for_each_element(n, seed, offset, [&](int64_t i, int k, const Philox4& r) {
    const double pi = p_data ? load_double(p_data, p_dtype, offset_of(p_layout, i)) : p;
    if (p_data && !(pi >= 0.0 && pi <= 1.0)) report_device_error(p_error, p_error.kind, 0, 0, 0);
    out[offset_of(layout, i)] = cast<T>(uniform_of(r, k) < pi);
  });
}

template <typename T>
__global__ void dropout_kernel(const T* x, Layout x_layout, T* out, bool* mask, Layout out_layout, int64_t n,
                               uint64_t seed, uint64_t offset, double keep, opmath_t<T> scale) {
  using acc_t = opmath_t<T>;
  for_each_element(n, seed, offset, [&](int64_t i, int k, const Philox4& r) {
    const bool kept = uniform_of(r, k) < keep;
    // x * mask, then * scale: a dropped inf or nan stays nan, as the CPU's input.mul(mask).
    const acc_t xm = mul_rn(static_cast<acc_t>(x[offset_of(x_layout, i)]), kept ? acc_t(1) : acc_t(0));
    const int64_t o = offset_of(out_layout, i);
    out[o] = static_cast<T>(mul_rn(xm, scale));
    mask[o] = kept;
  });
}

template <typename T>
__global__ void rrelu_kernel(const T* x, Layout x_layout, T* out, Layout out_layout, T* noise, Layout noise_layout,
                             int64_t n, uint64_t seed, uint64_t offset, double lower, double upper, bool training) {
  using acc_t = opmath_t<T>;
  for_each_element(n, seed, offset, [&](int64_t i, int k, const Philox4& r) {
    const acc_t v = static_cast<acc_t>(x[offset_of(x_layout, i)]);  // read first: in place, out is x
    if (!training) {
      out[offset_of(out_layout, i)] = v > acc_t(0) ? static_cast<T>(v) : static_cast<T>(mul_rn(v, acc_t(lower)));
      return;
    }
    const acc_t slope = static_cast<acc_t>(add_rn(lower, mul_rn(sub_rn(upper, lower), uniform_of(r, k))));
    const bool negative = v <= acc_t(0);
    out[offset_of(out_layout, i)] = negative ? static_cast<T>(mul_rn(v, slope)) : static_cast<T>(v);
    noise[offset_of(noise_layout, i)] = negative ? static_cast<T>(slope) : T(1.0f);
  });
}

template <typename T, Distribution D>
void launch_distribution(Stream stream, void* out, const Layout& layout, int64_t n, uint64_t seed, uint64_t offset,
                         double a, double b) {
  launch_independent("distribution_fill", distribution_kernel<T, D>, grid_for(n), dim3(kThreads), stream,
                     static_cast<T*>(out), layout, n, seed, offset, a, b);
}

const char* distribution_name(Distribution dist) {
  switch (dist) {
    case Distribution::Uniform: return "uniform_";
    case Distribution::Normal: return "normal_";
    case Distribution::LogNormal: return "log_normal_";
    case Distribution::Exponential: return "exponential_";
    case Distribution::Cauchy: return "cauchy_";
    case Distribution::Geometric: return "geometric_";
  }
  return "random";
}

}  // namespace

void distribution_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                       uint64_t offset, Distribution dist, double a, double b) {
  // Geometric draws counts: every real dtype, as on the CPU; the others floating dtypes only.
  const uint32_t types = dist == Distribution::Geometric ? kNumericTypes : kFloatingTypes;
  if (!(types & dtype_bit(dtype))) unsupported_dtype(distribution_name(dist), dtype);
  dispatch<kNumericTypes>(dtype, distribution_name(dist), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    const auto run = [&](auto d) {
      launch_distribution<T, decltype(d)::value>(stream, out, layout, n, seed, offset, a, b);
    };
    if constexpr (std::is_integral_v<T>) {
      run(std::integral_constant<Distribution, Distribution::Geometric>{});
    } else {
      switch (dist) {
        case Distribution::Uniform: return run(std::integral_constant<Distribution, Distribution::Uniform>{});
        case Distribution::Normal: return run(std::integral_constant<Distribution, Distribution::Normal>{});
        case Distribution::LogNormal: return run(std::integral_constant<Distribution, Distribution::LogNormal>{});
        case Distribution::Exponential: return run(std::integral_constant<Distribution, Distribution::Exponential>{});
        case Distribution::Cauchy: return run(std::integral_constant<Distribution, Distribution::Cauchy>{});
        case Distribution::Geometric: return run(std::integral_constant<Distribution, Distribution::Geometric>{});
      }
    }
  });
}

void random_int_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                     uint64_t offset, uint64_t range, int64_t base) {
  dispatch<kAllTypes>(dtype, "random_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    launch_independent("random_", random_int_kernel<T>, grid_for(n), dim3(kThreads), stream,
                       static_cast<T*>(out), layout, n, seed, offset, range, base);
  });
}

void bernoulli_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                    uint64_t offset, double p, const void* p_data, DType p_dtype, const Layout& p_layout,
                    const DeviceErrorSite& p_error) {
  if (p_data) dispatch<kFloatingTypes>(p_dtype, "bernoulli_ (p)", [](auto) {});
  dispatch<kAllTypes>(dtype, "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    launch_independent("bernoulli_", bernoulli_kernel<T>, grid_for(n), dim3(kThreads), stream,
                       static_cast<T*>(out), layout, n, seed, offset, p, p_data, p_dtype, p_layout, p_error);
  });
}

void dropout_fill(Stream stream, DType dtype, const void* x, const Layout& x_layout, void* out, bool* mask,
                  const Layout& out_layout, int64_t n, uint64_t seed, uint64_t offset, double keep, double scale) {
  dispatch<kFloatingTypes>(dtype, "native_dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    launch_independent("native_dropout", dropout_kernel<T>, grid_for(n), dim3(kThreads), stream,
                       static_cast<const T*>(x), x_layout, static_cast<T*>(out), mask, out_layout, n, seed, offset,
                       keep, static_cast<opmath_t<T>>(scale));
  });
}

void rrelu_fill(Stream stream, DType dtype, const void* x, const Layout& x_layout, void* out, const Layout& out_layout,
                void* noise, const Layout& noise_layout, int64_t n, uint64_t seed, uint64_t offset, double lower,
                double upper, bool training) {
  dispatch<kFloatingTypes>(dtype, "rrelu_with_noise", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    launch_independent("rrelu_with_noise", rrelu_kernel<T>, grid_for(n), dim3(kThreads), stream,
                       static_cast<const T*>(x), x_layout, static_cast<T*>(out), out_layout, static_cast<T*>(noise),
                       noise_layout, n, seed, offset, lower, upper, training);
  });
}

}  // namespace foo::kernels::FOO_TARGET
