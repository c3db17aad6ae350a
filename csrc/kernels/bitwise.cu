// Bitwise and/or/xor/not on integers and bool (bool stays 0/1: ~true would be 0xfe).
#include "kernels/bitwise.h"
#include "kernels/elementwise.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
struct BitwiseFn {
  BitwiseOp op;
  __device__ T operator()(T a, T b) const {
    switch (op) {
      case BitwiseOp::And: return static_cast<T>(a & b);
      case BitwiseOp::Or: return static_cast<T>(a | b);
      case BitwiseOp::Xor: return static_cast<T>(a ^ b);
    }
    return a;
  }
};

template <typename T>
struct BitwiseNotFn {
  __device__ T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) {
      return !a;
    } else {
      return static_cast<T>(~a);
    }
  }
};

constexpr uint32_t kBitwiseTypes = kIntegralTypes | dtype_bit(DType::Bool);

}  // namespace

void bitwise(Stream stream, DType dtype, const ElementwiseGeometry& g, BitwiseOp op) {
  dispatch<kBitwiseTypes>(dtype, "bitwise", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>("bitwise", stream, g, BitwiseFn<T>{op});
  });
}

void bitwise_not(Stream stream, DType dtype, const ElementwiseGeometry& g) {
  dispatch<kBitwiseTypes>(dtype, "bitwise_not", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>("bitwise_not", stream, g, BitwiseNotFn<T>{});
  });
}

}  // namespace foo::kernels::FOO_TARGET
