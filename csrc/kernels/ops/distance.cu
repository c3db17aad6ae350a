// cdist forward: a thread per distance folds the m coordinates; backward: a thread per x1
// element sums over the rows of x2. In opmath_t, with ATen's CPU formulas per order
// (DistanceOpsKernel.cpp): 0, 1, 2, infinity and general p (pow per coordinate).
#include <limits>
#include <type_traits>

#include "kernels/ops/distance.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr unsigned kThreads = 128;

enum class Order : int8_t { Zero, One, Two, Inf, P };

Order order_of(double p) {
  if (p == 0) return Order::Zero;
  if (p == 1) return Order::One;
  if (p == 2) return Order::Two;
  if (p == std::numeric_limits<double>::infinity()) return Order::Inf;
  return Order::P;
}

template <typename M>
__device__ __forceinline__ M sign_of(M x) {
  return static_cast<M>((x > M(0)) - (x < M(0)));
}

template <typename T, Order O>
__global__ void cdist_forward_kernel(CdistArgs a, T* dist) {
  using M = opmath_t<T>;
  const T* x1 = static_cast<const T*>(a.x1);
  const T* x2 = static_cast<const T*>(a.x2);
  const M p = static_cast<M>(a.p);
  const int64_t total = a.batch * a.r1 * a.r2;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = o % a.r2, bi = o / a.r2, b = bi / a.r1;
    const T* u = x1 + bi * a.m;
    const T* v = x2 + (b * a.r2 + j) * a.m;
    M agg = M(0);
    for (int64_t k = 0; k < a.m; ++k) {
      const M d = math::fabs(static_cast<M>(u[k]) - static_cast<M>(v[k]));
      if constexpr (O == Order::Zero) agg += d != M(0) ? M(1) : M(0);
      else if constexpr (O == Order::One) agg += d;
      else if constexpr (O == Order::Two) agg += d * d;
      else if constexpr (O == Order::Inf) agg = (d != d || agg != agg) ? d + agg : (d > agg ? d : agg);
      else agg += math::pow(d, p);
    }
    if constexpr (O == Order::Two) agg = math::sqrt(agg);
    else if constexpr (O == Order::P) agg = math::pow(agg, M(1) / p);
    dist[o] = cast<T>(agg);
  }
}

template <typename T, Order O>
__global__ void cdist_backward_kernel(CdistArgs a, const T* grad, const T* dist, T* grad_x1) {
  using M = opmath_t<T>;
  const T* x1 = static_cast<const T*>(a.x1);
  const T* x2 = static_cast<const T*>(a.x2);
  const M p = static_cast<M>(a.p);
  const int64_t total = a.batch * a.r1 * a.m;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = o % a.m, bi = o / a.m, b = bi / a.r1;
    const M u = static_cast<M>(x1[o]);
    M sum = M(0);
    for (int64_t j = 0; j < a.r2; ++j) {
      const M diff = u - static_cast<M>(x2[(b * a.r2 + j) * a.m + k]);
      const M g = static_cast<M>(grad[bi * a.r2 + j]), d = static_cast<M>(dist[bi * a.r2 + j]);
      if constexpr (O == Order::One) {
        sum += sign_of(diff) * g;
      } else if constexpr (O == Order::Two) {
        sum += d == M(0) ? M(0) : g * diff / d;
      } else if constexpr (O == Order::Inf) {
        sum += math::fabs(diff) == d ? sign_of(diff) * g : M(0);
      } else if constexpr (O == Order::P) {
        if (p < M(2)) {
          sum += (d == M(0) || (diff == M(0) && p < M(1)))
                     ? M(0)
                     : sign_of(diff) * math::pow(math::fabs(diff), p - M(1)) * g / math::pow(d, p - M(1));
        } else {
          sum += d == M(0) ? M(0) : diff * math::pow(math::fabs(diff), p - M(2)) * g / math::pow(d, p - M(1));
        }
      }
    }
    grad_x1[o] = cast<T>(sum);  // p == 0: zero
  }
}

template <typename F>
void with_order(double p, F&& f) {
  switch (order_of(p)) {
    case Order::Zero: return f(std::integral_constant<Order, Order::Zero>{});
    case Order::One: return f(std::integral_constant<Order, Order::One>{});
    case Order::Two: return f(std::integral_constant<Order, Order::Two>{});
    case Order::Inf: return f(std::integral_constant<Order, Order::Inf>{});
    case Order::P: return f(std::integral_constant<Order, Order::P>{});
  }
}

dim3 grid_of(int64_t n) { return capped_grid((n + kThreads - 1) / kThreads); }

// cdist on the CPU: float32 and float64.
constexpr uint32_t kCdistTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

}  // namespace

void cdist_forward(Stream stream, DType dtype, const CdistArgs& args, void* dist) {
  const int64_t total = args.batch * args.r1 * args.r2;
  if (total == 0) return;
  dispatch<kCdistTypes>(dtype, "cdist", [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_order(args.p, [&](auto order) {
      launch_independent("cdist", cdist_forward_kernel<T, decltype(order)::value>, grid_of(total), dim3(kThreads),
                         stream, args, static_cast<T*>(dist));
    });
  });
}

void cdist_backward(Stream stream, DType dtype, const CdistArgs& args, const void* grad, const void* dist,
                    void* grad_x1) {
  const int64_t total = args.batch * args.r1 * args.m;
  if (total == 0) return;
  dispatch<kCdistTypes>(dtype, "_cdist_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_order(args.p, [&](auto order) {
      launch_independent("cdist_backward", cdist_backward_kernel<T, decltype(order)::value>, grid_of(total),
                         dim3(kThreads), stream, args, static_cast<const T*>(grad), static_cast<const T*>(dist),
                         static_cast<T*>(grad_x1));
    });
  });
}

}  // namespace foo::kernels::FOO_TARGET
