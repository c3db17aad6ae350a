// Random fills drawn from the foo generator (Philox), so torch.foo.manual_seed reproduces them
// and the sim and cuda drivers give the same numbers for the same seed: normal_, uniform_,
// log_normal_, exponential_, cauchy_, geometric_, random_ (all overloads: torch.randint), and
// normal with tensor mean/std. A strided self is filled in place, element i (row-major) taking
// the draw of counter i / 2 as a contiguous tensor would (kernels/ops/random.h).
//
// Argument checks, range arithmetic and the complex cases (normal_/uniform_ of a complex tensor
// fill its view_as_real) come from ATen's own templates (ATen/native/DistributionTemplates.h),
// the code the CPU and CUDA run; the structs below are the kernels those templates call.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/DistributionTemplates.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/random_common.h"
#include "kernels/ops/random.h"
#include "native/cauchy_.h"
#include "native/exponential_.h"
#include "native/geometric_.h"
#include "native/log_normal_.h"
#include "native/normal_.h"
#include "native/normal_float_tensor_out.h"
#include "native/normal_tensor_float_out.h"
#include "native/normal_tensor_tensor_out.h"
#include "native/random_.h"
#include "native/random_from.h"
#include "native/random_to.h"
#include "native/uniform_.h"

namespace foo::native {
namespace {

using foo::kernels::Distribution;
using foo::kernels::Layout;
namespace templates = at::native::templates;


// The core of every continuous fill: self allocated, arguments checked.
void fill_distribution(at::Tensor self, Distribution dist, double a, double b, std::optional<at::Generator> gen,
                       const char* op) {
  check_kernel_dtype(op, self.scalar_type(),
                     foo::kernels::kFloatingTypes | (dist == Distribution::Geometric ? foo::kernels::kIntegralTypes : 0u));
  if (self.numel() == 0) return;
  const auto state = reserve_philox(self.device().index(), std::move(gen), self.numel());
  const auto stream = current_kernel_stream(self);
  write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(distribution_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, dist, a, b);
  });
}

// base + bits % range (range 0: all 64 bits), the core of random_.
void fill_random_int(at::Tensor self, uint64_t range, int64_t base, std::optional<at::Generator> gen) {
  if (self.numel() == 0) return;
  const auto state = reserve_philox(self.device().index(), std::move(gen), self.numel());
  const auto stream = current_kernel_stream(self);
  write_in_place(self, [&](at::Tensor& t, const Layout& layout) {
    FOO_CALL_KERNEL(random_int_fill, stream, kernel_dtype(t.scalar_type()), t.mutable_data_ptr(), layout, t.numel(),
                    state.seed, state.offset, range, base);
  });
}

// The kernels ATen's templates call (their RNG parameter is unused: the generator travels as
// the optional argument).
template <typename RNG>
struct NormalKernel {
  void operator()(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
    at::assert_no_internal_overlap(self);
    fill_distribution(self, Distribution::Normal, mean, std, std::move(gen), "normal_");
  }
};
template <typename RNG>
struct UniformKernel {
  void operator()(at::TensorIteratorBase& iter, double from, double to, std::optional<at::Generator> gen) {
    fill_distribution(iter.tensor(0), Distribution::Uniform, from, to, std::move(gen), "uniform_");
  }
};
template <typename RNG>
struct LogNormalKernel {
  void operator()(at::TensorIteratorBase& iter, double mean, double std, std::optional<at::Generator> gen) {
    fill_distribution(iter.tensor(0), Distribution::LogNormal, mean, std, std::move(gen), "log_normal_");
  }
};
template <typename RNG>
struct ExponentialKernel {
  void operator()(at::TensorIteratorBase& iter, double lambda, std::optional<at::Generator> gen) {
    fill_distribution(iter.tensor(0), Distribution::Exponential, lambda, 0.0, std::move(gen), "exponential_");
  }
};
template <typename RNG>
struct CauchyKernel {
  void operator()(at::TensorIteratorBase& iter, double median, double sigma, std::optional<at::Generator> gen) {
    fill_distribution(iter.tensor(0), Distribution::Cauchy, median, sigma, std::move(gen), "cauchy_");
  }
};
template <typename RNG>
struct GeometricKernel {
  void operator()(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
    // log1p(-p) once on the host: the same value for both drivers.
    fill_distribution(iter.tensor(0), Distribution::Geometric, std::log1p(-p), 0.0, std::move(gen), "geometric_");
  }
};

// random_(): integers as the CPU draws them: [0, 2^mantissa] for floating dtypes, [0, max] for
// integers, {0, 1} for bool.
uint64_t default_random_range(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return (uint64_t{1} << 24) + 1;
    case at::kDouble: return (uint64_t{1} << 53) + 1;
    case at::kHalf: return (uint64_t{1} << 11) + 1;
    case at::kBFloat16: return (uint64_t{1} << 8) + 1;
    case at::kBool: return 2;
    case at::kByte: return uint64_t{1} << 8;
    case at::kChar: return uint64_t{1} << 7;
    case at::kShort: return uint64_t{1} << 15;
    case at::kInt: return uint64_t{1} << 31;
    case at::kLong: return uint64_t{1} << 63;
    default: break;
  }
  check_kernel_dtype("random_", t, 0u);  // raises: no other dtype has a range
  return 0;
}

template <typename RNG>
struct RandomKernel {
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    fill_random_int(iter.tensor(0), default_random_range(iter.dtype()), 0, std::move(gen));
  }
};
template <typename RNG>
struct RandomFromToKernel {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t base, std::optional<at::Generator> gen) {
    (void)default_random_range(iter.dtype());  // the dtype check
    fill_random_int(iter.tensor(0), range, base, std::move(gen));
  }
  // [int64 min, int64 max]: the CPU serves it for these dtypes only.
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    const auto t = iter.dtype();
    TORCH_CHECK(t == at::kLong || t == at::kDouble || t == at::kFloat || t == at::kBFloat16,
                "random_: the full 64-bit range is supported only for int64, double, float and bfloat16, not ", t);
    fill_random_int(iter.tensor(0), 0, 0, std::move(gen));
  }
};

using Gen = at::Generator;

}  // namespace

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  return templates::normal_impl_<NormalKernel, Gen>(self, mean, std, std::move(generator));
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  return templates::uniform_impl_<UniformKernel, Gen>(self, from, to, std::move(generator));
}

at::Tensor& log_normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  return templates::log_normal_impl_<LogNormalKernel, Gen>(self, mean, std, std::move(generator));
}

at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> generator) {
  return templates::exponential_impl_<ExponentialKernel, Gen>(self, lambd, std::move(generator));
}

at::Tensor& cauchy_(at::Tensor& self, double median, double sigma, std::optional<at::Generator> generator) {
  return templates::cauchy_impl_<CauchyKernel, Gen>(self, median, sigma, std::move(generator));
}

at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> generator) {
  return templates::geometric_impl_<GeometricKernel, Gen>(self, p, std::move(generator));
}

// ATen's random_ templates reject other dtypes without naming them; name them first.
static void check_random_dtype(const at::Tensor& self) {
  check_kernel_dtype("random_", self.scalar_type(), foo::kernels::kAllTypes);
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> generator) {
  check_random_dtype(self);
  return templates::random_impl<RandomKernel, Gen>(self, std::move(generator));
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> generator) {
  check_random_dtype(self);
  return templates::random_from_to_impl<RandomFromToKernel, Gen>(self, from, to, std::move(generator));
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> generator) {
  return random_from(self, 0, to, std::move(generator));
}

// normal(mean, std) with a tensor mean and/or std: N(0, 1) (or N(0, std)) draws, then scaled and
// shifted on the device (ATen's normal_out_impl). The functional overloads pass an undefined
// out, allocated here as ATen's normal_impl allocates it.
at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std, std::optional<at::Generator> generator,
                                    at::Tensor& out) {
  if (!out.defined()) out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  return templates::normal_out_impl<NormalKernel, Gen>(out, mean, std, std::move(generator));
}

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std, std::optional<at::Generator> generator,
                                    at::Tensor& out) {
  if (!out.defined()) out = at::empty_like(std, at::MemoryFormat::Contiguous);
  return templates::normal_out_impl<NormalKernel, Gen>(out, mean, std, std::move(generator));
}

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean, const at::Tensor& std,
                                     std::optional<at::Generator> generator, at::Tensor& out) {
  if (!out.defined()) {
    out = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options(), at::MemoryFormat::Contiguous);
  }
  return templates::normal_out_impl<NormalKernel, Gen>(out, mean, std, std::move(generator));
}

}  // namespace foo::native
