// torch.histc on foo for floating and integer dtypes, as CUDA's (the CPU's histc takes floats
// only): the result has the input's dtype; an integer input is binned as the CPU bins it cast to
// float32. No host synchronisation: with min == max (the default) the range is the data's
// [min, max], computed and read on the device (CUDA copies it to the host). That is also why a
// data range that is not finite (inf or NaN in the input) cannot raise, as the CPU and CUDA do:
// the result is then NaN in every bin (integer inputs are always finite).
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <cmath>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/histc.h"
#include "native/histc_out.h"
#include "runtime/stream.h"

namespace foo::native {

// The functional overload passes an undefined `out`.
at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max, at::Tensor& out) {
  check_kernel_dtype("histc", self.scalar_type(), foo::kernels::kNumericTypes);
  // As the CPU (CUDA would cast into any out=): the histogram has the input's dtype.
  TORCH_CHECK(!out.defined() || out.scalar_type() == self.scalar_type(),
              "torch.histc: input tensor and hist tensor should have the same dtype, but got input ", self.dtype(),
              " and hist ", out.dtype());
  TORCH_CHECK(bins > 0, "bins must be > 0");
  double lo = min.to<double>(), hi = max.to<double>();
  const bool data_range = lo == hi && self.numel() > 0;
  if (!data_range) {
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)), "range of [", lo, ", ", hi,
                "] is not finite");
    TORCH_CHECK(lo < hi, "max must be larger than min");
  }
  const at::Tensor x = self.contiguous();
  const auto opts = x.options().dtype(at::kLong);
  at::Tensor counts = at::zeros({bins}, opts);
  at::Tensor nonfinite = at::zeros({1}, opts);
  at::Tensor range;
  if (data_range) range = at::stack({x.min(), x.max()});
  FOO_CALL_KERNEL(histc, stream_of(x), kernel_dtype(x.scalar_type()),
                  x.const_data_ptr(), x.numel(), bins, lo, hi, data_range ? range.const_data_ptr() : nullptr,
                  counts.mutable_data_ptr<int64_t>(), nonfinite.mutable_data_ptr<int64_t>());
  at::Tensor hist = counts.to(self.scalar_type());
  if (data_range && at::isFloatingType(self.scalar_type())) {
    hist.masked_fill_(nonfinite.to(at::kBool), std::numeric_limits<double>::quiet_NaN());
  }
  if (!out.defined()) return out = hist;
  at::native::resize_output(out, {bins});
  out.copy_(hist);
  return out;
}

}  // namespace foo::native
