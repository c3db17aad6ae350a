// torch.autocast("foo"): the AutocastPrivateUse1 kernels, with CUDA's policy taken from ATen's own
// op lists (ATen/autocast_mode.h: AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, ...), so the policy
// follows torch upgrades without a copied list. Ops outside the lists fall through to the foo
// kernels unchanged, as on CUDA. The dtype (float16 by default, or bfloat16) is the context's,
// read by ATen's WrapFunction through at::autocast::get_lower_precision_fp_from_device_type.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include "aten/core/torch_compat.h"

namespace foo::native {
namespace {

// ATen's signature lists spell these unqualified (they are written for namespace at).
FOO_USING_DIMNAME_LIST
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// CUDA refuses binary_cross_entropy under autocast (the 16-bit log saturates); so does foo.
at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                       int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
              "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
              "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
              "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
              "safe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define FOO_AUTOCAST_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define FOO_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define FOO_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define FOO_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(FOO_AUTOCAST_LOWER_PRECISION_FP)
  AT_FORALL_FP32(FOO_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(FOO_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(FOO_AUTOCAST_PROMOTE)
  FOO_AUTOCAST_EXTRA(KERNEL_PRIVATEUSEONE)
#undef FOO_AUTOCAST_LOWER_PRECISION_FP
#undef FOO_AUTOCAST_FP32
#undef FOO_AUTOCAST_FP32_SET_OPT_DTYPE
#undef FOO_AUTOCAST_PROMOTE
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binary_cross_entropy_banned));
}

}  // namespace
}  // namespace foo::native
