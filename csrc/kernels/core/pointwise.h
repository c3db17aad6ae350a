#pragma once
// The launcher every generated pointwise kernel (generated/pointwise/*.cu) exports, and what the
// host passes it: which formula (case) runs, and the formula's scalars, converted on the host.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"
#include "kernels/core/scalar_arg.h"

namespace foo::kernels {

constexpr int kMaxPointwiseScalars = 4;

struct PointwiseArgs {
  int32_t formula = 0;                          // index of the manifest case
  ScalarArg scalars[kMaxPointwiseScalars];      // in the formula's scalar order
  bool present[kMaxPointwiseScalars] = {};      // for optional scalars (Scalar?, float?)
};

}  // namespace foo::kernels

// out = formula(inputs...) over `g`, computing in `dtype` (a dtype the manifest entry claims).
#define FOO_DECLARE_POINTWISE(name) \
  FOO_DECLARE_KERNEL(void, name, (Stream, DType, const ElementwiseGeometry&, const PointwiseArgs&))
