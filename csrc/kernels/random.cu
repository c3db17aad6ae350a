#include "kernels/random.h"

#include "kernels/exact_math.h"
#include "kernels/kernel.h"
#include "kernels/philox.h"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 256;
// Grid-stride loops past this many blocks. Values never depend on it (element i always takes
// counter i / 2); tests/test_random_ops.py fills more elements than one grid covers.
constexpr int64_t kMaxBlocks = 1024;

__device__ inline Philox4 draw(int64_t g, uint64_t seed, uint64_t offset) {
  return philox4x32_10(static_cast<uint32_t>(g), static_cast<uint32_t>(static_cast<uint64_t>(g) >> 32),
                       static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// log(w) for w in (0, 1], from IEEE-exact steps only: w = m * 2^e with m in [sqrt(1/2), sqrt(2)),
// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), as a series in s^2 (|s| < 0.172: 13 terms reach
// double precision). Not correctly rounded (a few ulp), but the same bits on every target.
__device__ inline double det_log(double w) {
  int e;
  double m = frexp(w, &e);  // exact; m in [0.5, 1)
  if (m < 0.7071067811865476) {
    m = m * 2.0;  // exact
    e -= 1;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = div_rn(f, add_rn(2.0, f));
  const double z = mul_rn(s, s);
  double p = 0.04;  // 1/(2k+1), k = 12 .. 1, then 1
  p = add_rn(mul_rn(p, z), 0.043478260869565216);
  p = add_rn(mul_rn(p, z), 0.047619047619047616);
  p = add_rn(mul_rn(p, z), 0.05263157894736842);
  p = add_rn(mul_rn(p, z), 0.058823529411764705);
  p = add_rn(mul_rn(p, z), 0.06666666666666667);
  p = add_rn(mul_rn(p, z), 0.07692307692307693);
  p = add_rn(mul_rn(p, z), 0.09090909090909091);
  p = add_rn(mul_rn(p, z), 0.1111111111111111);
  p = add_rn(mul_rn(p, z), 0.14285714285714285);
  p = add_rn(mul_rn(p, z), 0.2);
  p = add_rn(mul_rn(p, z), 0.3333333333333333);
  p = add_rn(mul_rn(p, z), 1.0);
  const double log_m = mul_rn(s, p) * 2.0;  // exact scaling
  return add_rn(mul_rn(static_cast<double>(e), 0.6931471805599453), log_m);
}

// sin and cos of 2*pi*u for u in [0, 1), from IEEE-exact steps only: 8u splits exactly into an
// octant o and a fraction f; phi = f * pi/4 (or (1 - f) * pi/4 in odd octants) is in [0, pi/4],
// where Taylor series to phi^19 / phi^20 reach double precision; quarter turns are exact swaps.
__device__ inline void det_sincos_2pi(double u, double* sin_out, double* cos_out) {
  const double t = u * 8.0;  // exact
  const int o = static_cast<int>(t);
  const double f = t - static_cast<double>(o);  // exact
  const bool odd = (o & 1) != 0;
  const double phi = mul_rn(odd ? 1.0 - f : f, 0.7853981633974483);  // 1 - f is exact
  const double z = mul_rn(phi, phi);
  double q = -8.22063524662433e-18;  // (-1)^k / (2k+1)!, k = 9 .. 1
  q = add_rn(mul_rn(q, z), 2.8114572543455206e-15);
  q = add_rn(mul_rn(q, z), -7.647163731819816e-13);
  q = add_rn(mul_rn(q, z), 1.6059043836821613e-10);
  q = add_rn(mul_rn(q, z), -2.505210838544172e-08);
  q = add_rn(mul_rn(q, z), 2.7557319223985893e-06);
  q = add_rn(mul_rn(q, z), -0.0001984126984126984);
  q = add_rn(mul_rn(q, z), 0.008333333333333333);
  q = add_rn(mul_rn(q, z), -0.16666666666666666);
  double r = 4.110317623312165e-19;  // (-1)^k / (2k)!, k = 10 .. 1
  r = add_rn(mul_rn(r, z), -1.5619206968586225e-16);
  r = add_rn(mul_rn(r, z), 4.779477332387385e-14);
  r = add_rn(mul_rn(r, z), -1.1470745597729725e-11);
  r = add_rn(mul_rn(r, z), 2.08767569878681e-09);
  r = add_rn(mul_rn(r, z), -2.755731922398589e-07);
  r = add_rn(mul_rn(r, z), 2.48015873015873e-05);
  r = add_rn(mul_rn(r, z), -0.001388888888888889);
  r = add_rn(mul_rn(r, z), 0.041666666666666664);
  r = add_rn(mul_rn(r, z), -0.5);
  double s = add_rn(phi, mul_rn(mul_rn(phi, z), q));
  const double c = add_rn(1.0, mul_rn(z, r));
  // angle = quarter * pi/2 + phi (even octant) or quarter * pi/2 - phi (odd octant)
  const int quarter = (odd ? o + 1 : o) / 2;
  if (odd) s = -s;
  switch (quarter & 3) {
    case 0: *sin_out = s; *cos_out = c; break;
    case 1: *sin_out = c; *cos_out = -s; break;
    case 2: *sin_out = -s; *cos_out = -c; break;
    default: *sin_out = -c; *cos_out = s; break;
  }
}

// A double value into T: 16-bit floats round through float, as a double -> float -> T cast.
template <typename T>
__device__ inline T from_double(double v) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

__device__ inline double load_double(const void* data, DType dtype, int64_t offset) {
  switch (dtype) {
    case DType::Float16: return static_cast<float>(static_cast<const half_t*>(data)[offset]);
    case DType::BFloat16: return static_cast<float>(static_cast<const bfloat16_t*>(data)[offset]);
    case DType::Float32: return static_cast<const float*>(data)[offset];
    default: return static_cast<const double*>(data)[offset];
  }
}

enum class Kind { Uniform, Normal, Bernoulli };

template <typename T, Kind K>
__global__ void random_kernel(T* out, Layout layout, int64_t n, uint64_t seed, uint64_t offset, double a, double b,
                              const void* p_data, DType p_dtype, Layout p_layout, int* p_error) {
  const int64_t pairs = (n + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < pairs; g += stride) {
    const Philox4 r = draw(g, seed, offset);
    const double u[2] = {unit_double(r.v[0], r.v[1]), unit_double(r.v[2], r.v[3])};
    T v[2];
    if constexpr (K == Kind::Normal) {
      // 1 - u0 is exact and in (0, 1]: the log is finite.
      const double radius = mul_rn(b, sqrt_rn(-2.0 * det_log(1.0 - u[0])));
      double s, c;
      det_sincos_2pi(u[1], &s, &c);
      v[0] = from_double<T>(add_rn(a, mul_rn(radius, c)));
      v[1] = from_double<T>(add_rn(a, mul_rn(radius, s)));
    } else if constexpr (K == Kind::Uniform) {
      const double width = sub_rn(b, a);
      for (int k = 0; k < 2; ++k) {
        // Rounding to T may reach b; the interval is half-open, so such values fold back to a.
        v[k] = from_double<T>(add_rn(a, mul_rn(width, u[k])));
        if (!(static_cast<double>(static_cast<opmath_t<T>>(v[k])) < b)) v[k] = from_double<T>(a);
      }
    }
    for (int k = 0; k < 2; ++k) {
      const int64_t i = 2 * g + k;
      if (i >= n) break;
      if constexpr (K == Kind::Bernoulli) {
        const double p = p_data ? load_double(p_data, p_dtype, offset_of(p_layout, i)) : a;
        if (p_data && !(p >= 0.0 && p <= 1.0)) *p_error = 1;  // a benign race: every writer stores 1
        v[k] = cast<T>(u[k] < p);
      }
      out[offset_of(layout, i)] = v[k];
    }
  }
}

template <typename T>
__global__ void dropout_kernel(const T* x, Layout x_layout, T* out, bool* mask, Layout out_layout, int64_t n,
                               uint64_t seed, uint64_t offset, double keep, opmath_t<T> scale) {
  using acc_t = opmath_t<T>;
  const int64_t pairs = (n + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < pairs; g += stride) {
    const Philox4 r = draw(g, seed, offset);
    const double u[2] = {unit_double(r.v[0], r.v[1]), unit_double(r.v[2], r.v[3])};
    for (int k = 0; k < 2; ++k) {
      const int64_t i = 2 * g + k;
      if (i >= n) break;
      const bool kept = u[k] < keep;
      // x * mask, then * scale: a dropped inf or nan stays nan, as the CPU's input.mul(mask).
      const acc_t xm = mul_rn(static_cast<acc_t>(x[offset_of(x_layout, i)]), kept ? acc_t(1) : acc_t(0));
      const int64_t o = offset_of(out_layout, i);
      out[o] = static_cast<T>(mul_rn(xm, scale));
      mask[o] = kept;
    }
  }
}

template <typename T, Kind K>
void launch_random(const char* name, Stream stream, void* out, const Layout& layout, int64_t n, uint64_t seed,
                   uint64_t offset, double a, double b, const void* p_data = nullptr,
                   DType p_dtype = DType::Float64, const Layout& p_layout = Layout{}, int* p_error = nullptr) {
  if (n <= 0) return;
  const dim3 grid = blocks_for((n + 1) / 2, kThreads, kMaxBlocks);  // a thread per pair of elements
  launch_independent(name, random_kernel<T, K>, grid, dim3(kThreads), stream, static_cast<T*>(out), layout, n, seed,
                     offset, a, b, p_data, p_dtype, p_layout, p_error);
}

}  // namespace

void uniform_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                  uint64_t offset, double from, double to) {
  dispatch<kFloatingTypes>(dtype, "uniform_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_random<T, Kind::Uniform>("uniform_", stream, out, layout, n, seed, offset, from, to);
  });
}

void normal_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                 uint64_t offset, double mean, double std) {
  dispatch<kFloatingTypes>(dtype, "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_random<T, Kind::Normal>("normal_", stream, out, layout, n, seed, offset, mean, std);
  });
}

void bernoulli_fill(Stream stream, DType dtype, void* out, const Layout& layout, int64_t n, uint64_t seed,
                    uint64_t offset, double p, const void* p_data, DType p_dtype, const Layout& p_layout,
                    int* p_error) {
  if (p_data) dispatch<kFloatingTypes>(p_dtype, "bernoulli_ (p)", [](auto) {});
  dispatch<kAllTypes>(dtype, "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_random<T, Kind::Bernoulli>("bernoulli_", stream, out, layout, n, seed, offset, p, 0.0, p_data, p_dtype,
                                      p_layout, p_error);
  });
}

void dropout_fill(Stream stream, DType dtype, const void* x, const Layout& x_layout, void* out, bool* mask,
                  const Layout& out_layout, int64_t n, uint64_t seed, uint64_t offset, double keep, double scale) {
  dispatch<kFloatingTypes>(dtype, "native_dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= 0) return;
    const dim3 grid = blocks_for((n + 1) / 2, kThreads, kMaxBlocks);  // a thread per pair of elements
    launch_independent("native_dropout", dropout_kernel<T>, grid, dim3(kThreads), stream, static_cast<const T*>(x),
                       x_layout, static_cast<T*>(out), mask, out_layout, n, seed, offset, keep,
                       static_cast<opmath_t<T>>(scale));
  });
}

}  // namespace foo::kernels::FOO_TARGET
