// Comparisons (eq, ne, lt, le, gt, ge) and logical and/or/xor/not: every result is bool. The op is
// a kernel argument, uniform over the launch, so each dtype instantiates one kernel.
#include "kernels/compare.h"
#include "kernels/elementwise.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
struct CompareFn {
  CompareOp op;
  __device__ bool operator()(T a, T b) const {
    // 16-bit floats widen exactly, so comparing in float is comparing the values.
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    switch (op) {
      case CompareOp::Eq: return x == y;
      case CompareOp::Ne: return x != y;
      case CompareOp::Lt: return x < y;
      case CompareOp::Le: return x <= y;
      case CompareOp::Gt: return x > y;
      case CompareOp::Ge: return x >= y;
    }
    return false;
  }
};

template <typename T>
struct LogicalFn {
  LogicalOp op;
  __device__ bool operator()(T a, T b) const {
    const bool x = cast<bool>(a), y = cast<bool>(b);  // nonzero (NaN included) is true
    switch (op) {
      case LogicalOp::And: return x && y;
      case LogicalOp::Or: return x || y;
      case LogicalOp::Xor: return x != y;
    }
    return false;
  }
};

template <typename T>
struct LogicalNotFn {
  __device__ bool operator()(T a) const { return !cast<bool>(a); }
};

}  // namespace

void compare(Stream stream, DType dtype, const ElementwiseGeometry& g, CompareOp op) {
  dispatch<kAllTypes>(dtype, "compare", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<bool, T, T>("compare", stream, g, CompareFn<T>{op});
  });
}

void logical(Stream stream, DType dtype, const ElementwiseGeometry& g, LogicalOp op) {
  dispatch<kAllTypes>(dtype, "logical", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<bool, T, T>("logical", stream, g, LogicalFn<T>{op});
  });
}

void logical_not(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kAllTypes>(dtype, "logical_not", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<bool, T>("logical_not", stream, g, LogicalNotFn<T>{});
  });
}

}  // namespace foo::kernels::FOO_TARGET
