// Creation ops on foo with our own kernels (kernels/ops/factory.h): arange (torch.arange) and
// linspace (torch.linspace); torch.eye on foo's zero_ and fill_; fill_/zero_ live with copies
// (copy.cpp). Values match the CPU's bit for bit: the host does every scalar conversion the
// CPU kernel does (c10's checked Scalar::to, the step computations), the kernels replay its
// per-element arithmetic (see factory.h for arange's vectorized-loop rounding).
#include <cstring>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <ATen/native/RangeUtils.h>

#include "aten/core/layout.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/factory.h"
#include "native/arange_out.h"
#include "native/eye_m_out.h"
#include "native/eye_out.h"
#include "native/linspace_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::Layout;

// The CPU arange kernel's vector loop (at::vec::Vectorized on x86: 32-byte vectors), with the
// fused multiply-adds its AVX2 build uses; see kernels/ops/factory.h.
struct CpuLoopShape {
  int64_t chunk, lanes;
  bool fused;
};

CpuLoopShape cpu_arange_loop(int64_t n, size_t element_size) {
  CpuLoopShape shape{n, 0, true};
#if defined(__x86_64__) || defined(_M_X64)
  const auto capability = at::get_cpu_capability();
  shape.lanes = static_cast<int64_t>(32 / element_size);
  shape.fused = capability == "AVX2" || capability == "AVX512";
#else
  (void)element_size;
#endif
  // at::parallel_for's split (ParallelOpenMP.h): one chunk per thread, at least GRAIN_SIZE long.
  const int64_t grain = at::internal::GRAIN_SIZE;
  if (n > grain && at::get_num_threads() > 1 && !at::in_parallel_region()) {
    const int64_t threads = std::min<int64_t>(at::get_num_threads(), (n + grain - 1) / grain);
    shape.chunk = (n + threads - 1) / threads;
  }
  return shape;
}

}  // namespace

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "arange_foo", [&] {
    using accscalar_t = at::acc_type<scalar_t, false>;  // the CPU's: double for float, int64 for ints
    // An integer step that truncates to 0 (arange(0, 10, 0.1, dtype=int64)): torch 2.13's
    // compute_arange_size raises this ValueError; 2.11's divides by it (SIGFPE), so the check comes
    // first. A step of exactly 0 is left to compute_arange_size (a RuntimeError in every torch).
    TORCH_CHECK_VALUE(step.toDouble() == 0 || step.to<accscalar_t>() != accscalar_t(0), "step must be nonzero");
    const int64_t size = at::native::compute_arange_size<scalar_t>(start, end, step);
    const int64_t numel = out.numel();
    if (numel != size) {
      if (numel > 0) {
        TORCH_WARN("The number of elements in the out tensor of shape ", out.sizes(), " is ", numel,
                   " which does not match the computed number of elements ", size,
                   ". Note that this may occur as a result of rounding error. "
                   "The out tensor will be resized to a tensor of shape (", size, ",).");
      }
      out.resize_({size});
    }
    if (size == 0) return;
    const auto acc_start = start.to<accscalar_t>(), acc_step = step.to<accscalar_t>();
    int64_t start_int = 0, step_int = 0;
    double start_f = 0, step_f = 0;
    if constexpr (std::is_integral_v<scalar_t>) {
      start_int = static_cast<int64_t>(acc_start);
      step_int = static_cast<int64_t>(acc_step);
    } else {
      start_f = static_cast<double>(acc_start);  // exact: accscalar_t is float or double
      step_f = static_cast<double>(acc_step);
    }
    const auto loop = cpu_arange_loop(size, sizeof(scalar_t));
    auto stream = stream_of(out);
    write_in_place(out, [&](at::Tensor& t, const Layout& layout) {
      FOO_CALL_KERNEL(arange_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, size, start_int,
                      step_int, start_f, step_f, loop.chunk, loop.lanes, loop.fused);
    });
  });
  return out;
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(start);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "linspace_foo", [&] {
    // As the CPU kernel: the ends in the dtype; the step in the dtype for floating dtypes (c10
    // arithmetic for 16-bit floats), in double for integral dtypes.
    using step_t = std::conditional_t<std::is_integral_v<scalar_t>, double, scalar_t>;
    const scalar_t s = start.to<scalar_t>(), e = end.to<scalar_t>();
    const step_t step = (static_cast<step_t>(e) - static_cast<step_t>(s)) / (steps - 1);
    int64_t start_int = 0, end_int = 0;
    double start_f = 0, end_f = 0;
    if constexpr (std::is_integral_v<scalar_t>) {
      start_int = static_cast<int64_t>(s);
      end_int = static_cast<int64_t>(e);
    } else {
      start_f = static_cast<double>(s);
      end_f = static_cast<double>(e);
    }
    auto stream = stream_of(out);
    write_in_place(out, [&](at::Tensor& t, const Layout& layout) {
      FOO_CALL_KERNEL(linspace_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, steps,
                      start_int, end_int, start_f, end_f, static_cast<double>(step));
    });
  });
  return out;
}

// torch.eye (eye.m_out; eye.out is n x n): CUDA's eye_out_cuda, on foo's own kernels -- zero_,
// then a strided fill_ of the diagonal view (any out= strides), two launches. The CPU's checks.
at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  // ATen's resize_ leaves a tensor of the same sizes alone (a transposed out= keeps its strides);
  // foo's resize_ makes it contiguous, so it is called only when the sizes change.
  if (out.sizes() != at::IntArrayRef({n, m})) out.resize_({n, m});
  out.zero_();
  const int64_t diagonal = std::min(n, m);
  if (diagonal > 0) out.as_strided({diagonal}, {out.stride(0) + out.stride(1)}).fill_(1);
  return out;
}

at::Tensor& eye_out(int64_t n, at::Tensor& out) { return eye_m_out(n, n, out); }

}  // namespace foo::native
