// What differs between the torch versions torch_foo builds against (2.11 to 2.14,
// cmake/FooTorch.cmake), in one place: the rest of csrc/ states no torch version.
#pragma once

#include <torch/version.h>

#define FOO_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace foo::native {

// native_group_norm: the CPU kernel refuses an input that is not contiguous in its memory format
// up to torch 2.13 (F.group_norm made it contiguous first); from 2.14 it takes any strides, and
// F.group_norm passes them on. foo matches the CPU of the torch it runs with.
constexpr bool kGroupNormTakesAnyLayout = FOO_TORCH_AT_LEAST(2, 14);

}  // namespace foo::native

// Ops CUDA's autocast registers beside ATen's lists (autocast_mode.cpp), with their policy, as
// FOO_AUTOCAST_EXTRA(KERNEL) calling KERNEL(op, policy) once each; cuDNN-only ops are left out.
#if FOO_TORCH_AT_LEAST(2, 14)
#define FOO_AUTOCAST_EXTRA(KERNEL) KERNEL(linalg_matrix_sqrth, fp32)
#else
#define FOO_AUTOCAST_EXTRA(KERNEL)
#endif

// c10d's PREMUL_SUM factor (ReduceOp::supplement_): NCCLPreMulSumSupplement up to torch 2.12,
// PreMulSumSupplement from 2.13 (which keeps the old name as an alias for now).
#if FOO_TORCH_AT_LEAST(2, 13)
#define FOO_C10D_PREMUL_SUM_SUPPLEMENT c10d::PreMulSumSupplement
#else
#define FOO_C10D_PREMUL_SUM_SUPPLEMENT c10d::NCCLPreMulSumSupplement
#endif

// Named tensors: the autocast lists of torch 2.11 and 2.12 spell at::DimnameList unqualified;
// 2.13 has no named tensors. FOO_USING_DIMNAME_LIST brings the name in where it exists.
#if FOO_TORCH_AT_LEAST(2, 13)
#define FOO_USING_DIMNAME_LIST
#else
#define FOO_USING_DIMNAME_LIST using at::DimnameList;
#endif
