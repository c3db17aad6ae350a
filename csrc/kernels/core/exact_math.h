#pragma once
// Arithmetic with exactly one IEEE round-to-nearest-even per operation, identical on both targets.
// nvcc contracts `a * b + c` into one fused multiply-add by default (--fmad=true), and a host
// compiler may do the same on targets with FMA hardware, so an expression written with plain
// operators can round differently on sim and cuda. Kernels whose results must be bit-identical
// across drivers (random fills, arange, linspace) spell every rounding out with these helpers:
// the __*_rn intrinsics are never contracted; fma_rn is an explicit, correctly rounded fused op.
#include <cmath>

#include "kernels/core/dtype.h"

namespace foo::kernels {

// On a host with FMA hardware the compiler may fuse a product into a following add even across
// inlined helpers; an empty asm that "modifies" the product keeps it separately rounded. Without
// FMA hardware (x86-64's baseline) nothing can be fused and the barrier compiles to nothing.
template <typename T>
FOO_HD T round_barrier(T v) {
#if !defined(__CUDA_ARCH__) && (defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF))
  __asm__ volatile("" : "+g"(v));
#endif
  return v;
}

#if defined(__CUDA_ARCH__)
#define FOO_RN(dev, host) return dev;
#else
#define FOO_RN(dev, host) return host;
#endif
FOO_HD float add_rn(float a, float b) { FOO_RN(__fadd_rn(a, b), a + b) }
FOO_HD float sub_rn(float a, float b) { FOO_RN(__fsub_rn(a, b), a - b) }
FOO_HD float mul_rn(float a, float b) { FOO_RN(__fmul_rn(a, b), round_barrier(a * b)) }
FOO_HD float div_rn(float a, float b) { FOO_RN(__fdiv_rn(a, b), a / b) }
FOO_HD float fma_rn(float a, float b, float c) { FOO_RN(__fmaf_rn(a, b, c), std::fma(a, b, c)) }
FOO_HD double add_rn(double a, double b) { FOO_RN(__dadd_rn(a, b), a + b) }
FOO_HD double sub_rn(double a, double b) { FOO_RN(__dsub_rn(a, b), a - b) }
FOO_HD double mul_rn(double a, double b) { FOO_RN(__dmul_rn(a, b), round_barrier(a * b)) }
FOO_HD double div_rn(double a, double b) { FOO_RN(__ddiv_rn(a, b), a / b) }
FOO_HD double fma_rn(double a, double b, double c) { FOO_RN(__fma_rn(a, b, c), std::fma(a, b, c)) }
FOO_HD double sqrt_rn(double a) { FOO_RN(__dsqrt_rn(a), std::sqrt(a)) }
#undef FOO_RN

}  // namespace foo::kernels
