// Reductions: sum, mean, amax/amin, max/min (over a dim, and over everything), argmax/argmin,
// var/std, var_mean/std_mean, linalg.vector_norm and norm, prod. The structured ones (sum, mean, amax/amin, max/min.dim, argmax/argmin)
// get their checks and output shapes and dtypes from ATen's meta functions; the others check and
// size them here as the CPU does. Then reduce_into() lays the input out as the dense [outer, size, inner] array the
// launcher (kernels/ops/reduce.cu) reduces over `size` — without a copy when the tensor's memory
// already has that form (any contiguous or permuted-contiguous tensor whose reduced dims are
// adjacent in memory) — and the kernel writes the output.
#include <ATen/ATen.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/any_meta.h>

#include <algorithm>
#include <vector>

#include "aten/core/device_memory.h"
#include "aten/core/kernel_dtype.h"
#include "aten/core/out_arg.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/reduce.h"
#include "native/all_all_out.h"
#include "native/all_dim_out.h"
#include "native/all_dims_out.h"
#include "native/amax_out.h"
#include "native/amin_out.h"
#include "native/any_all_out.h"
#include "native/any_dim_out.h"
#include "native/any_dims_out.h"
#include "native/argmax_out.h"
#include "native/argmin_out.h"
#include "native/equal.h"
#include "native/max_dim_out.h"
#include "native/max_unary_out.h"
#include "native/linalg_vector_norm_out.h"
#include "native/mean_out.h"
#include "native/min_dim_out.h"
#include "native/min_unary_out.h"
#include "native/norm_dtype_out.h"
#include "native/norm_out.h"
#include "native/prod_int_out.h"
#include "native/prod_out.h"
#include "native/std_mean_out.h"
#include "native/std_out.h"
#include "native/sum_out.h"
#include "native/var_mean_out.h"
#include "native/var_out.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using at::native::DimMask;
using foo::kernels::ReduceOp;

bool is_reduced(const DimMask& mask, int64_t d) { return mask[static_cast<size_t>(d)]; }

// How the kernel sees the input: `input`'s memory is a dense [outer, size, inner] array, reduced
// over `size`. Output element o * inner + i belongs to the kept dims `out_order` (logical dim
// indices, size > 1, outermost in memory first).
struct Layout {
  at::Tensor input;
  int64_t outer = 1, size = 1, inner = 1;
  std::vector<int64_t> out_order;
};

// `logical_index`: the reduced elements must be numbered in logical (row-major) order, as
// argmax's indices are.
Layout plan_layout(const at::Tensor& self, const DimMask& mask, bool logical_index) {
  const int64_t nd = self.dim();
  Layout l;
  if (self.numel() == 0) {  // nothing is read: only the shape matters
    l.input = self;
    for (int64_t d = 0; d < nd; ++d) {
      if (is_reduced(mask, d)) {
        l.size *= self.size(d);
      } else {
        l.outer *= self.size(d);
        if (self.size(d) != 1) l.out_order.push_back(d);
      }
    }
    return l;
  }
  // The dims that matter (size 1 does not), outermost in memory first.
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < nd; ++d) {
    if (self.size(d) != 1) dims.push_back(d);
  }
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return self.stride(a) > self.stride(b); });
  bool dense = true;
  int64_t expected = 1;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    if (self.stride(*it) != expected) {
      dense = false;
      break;
    }
    expected *= self.size(*it);
  }
  if (dense) {
    int runs = 0;
    bool previous = false, ordered = true;
    int64_t last = -1;
    for (const int64_t d : dims) {
      const bool r = is_reduced(mask, d);
      if (r && !previous) ++runs;
      if (r) {
        ordered = ordered && d > last;
        last = d;
      }
      previous = r;
    }
    if (runs <= 1 && (ordered || !logical_index)) {
      // Kept dims before the reduced run are `outer`, after it `inner` (all `inner` when
      // nothing is reduced: the column kernel then reads coalesced).
      bool after = runs == 0;
      l.input = self;
      for (const int64_t d : dims) {
        if (is_reduced(mask, d)) {
          l.size *= self.size(d);
          after = true;
        } else {
          (after ? l.inner : l.outer) *= self.size(d);
          l.out_order.push_back(d);
        }
      }
      return l;
    }
  }
  // Otherwise (overlapping or gapped memory, or reduced dims apart): kept dims first, reduced
  // last, made contiguous.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d) {
    if (!is_reduced(mask, d)) {
      perm.push_back(d);
      l.outer *= self.size(d);
      if (self.size(d) != 1) l.out_order.push_back(d);
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (is_reduced(mask, d)) {
      perm.push_back(d);
      l.size *= self.size(d);
    }
  }
  l.input = self.permute(perm).contiguous();
  return l;
}

// The tensors a reduction writes (null: not wanted), already shaped (keepdim or not).
struct Outputs {
  const at::Tensor* values = nullptr;   // sum, mean, amax, ..., max.dim's values, var/std
  const at::Tensor* indices = nullptr;  // argmax/argmin, max.dim/min.dim
  const at::Tensor* means = nullptr;    // var_mean/std_mean
};

// Runs `op` over the dims of `mask` into `outs`. `self` has the kernel's input dtype.
void reduce_into(ReduceOp op, const at::Tensor& self, const DimMask& mask, bool keepdim, Outputs outs,
                 double correction = 0.0, double ord = 0.0) {
  const Layout l = plan_layout(self, mask, outs.indices != nullptr);
  const int64_t outputs = l.outer * l.inner;
  if (outputs == 0) return;
  // The kernel writes outputs flat, in out_order: straight into a contiguous output when that
  // is the logical order, else into a buffer scattered afterwards.
  const bool in_order = std::is_sorted(l.out_order.begin(), l.out_order.end());
  auto target = [&](const at::Tensor* t) -> at::Tensor {
    if (t == nullptr) return {};
    return in_order && t->is_contiguous() ? *t : at::empty({outputs}, t->options());
  };
  const at::Tensor value_buf = target(outs.values), index_buf = target(outs.indices), mean_buf = target(outs.means);

  const int64_t workspace_bytes = foo::kernels::reduce_workspace_bytes(l.outer, l.size, l.inner);
  at::Tensor workspace;
  if (workspace_bytes > 0) workspace = at::empty({workspace_bytes}, self.options().dtype(at::kByte));

  foo::kernels::ReduceArgs args{};
  args.op = op;
  args.in_dtype = kernel_dtype(l.input.scalar_type());
  args.out_dtype = value_buf.defined() ? kernel_dtype(value_buf.scalar_type()) : args.in_dtype;
  args.in = l.input.const_data_ptr();
  args.out = value_buf.defined() ? value_buf.mutable_data_ptr() : nullptr;
  args.indices = index_buf.defined() ? index_buf.mutable_data_ptr<int64_t>() : nullptr;
  args.means = mean_buf.defined() ? mean_buf.mutable_data_ptr() : nullptr;
  args.outer = l.outer;
  args.size = l.size;
  args.inner = l.inner;
  args.correction = correction;
  args.ord = ord;
  args.workspace = workspace.defined() ? workspace.mutable_data_ptr() : nullptr;
  FOO_CALL_KERNEL(reduce, stream_of(self), args);

  auto scatter = [&](const at::Tensor* t, const at::Tensor& buf) {
    if (t == nullptr || buf.is_same(*t)) return;
    const int64_t nd = self.dim();
    std::vector<int64_t> dim_stride(static_cast<size_t>(nd), 0);
    int64_t s = 1;
    for (auto it = l.out_order.rbegin(); it != l.out_order.rend(); ++it) {
      dim_stride[*it] = s;
      s *= self.size(*it);
    }
    std::vector<int64_t> strides;
    for (int64_t d = 0; d < nd; ++d) {
      if (!is_reduced(mask, d)) strides.push_back(dim_stride[d]);
      else if (keepdim) strides.push_back(0);
    }
    t->copy_(buf.as_strided(t->sizes(), strides));
  };
  scatter(outs.values, value_buf);
  scatter(outs.indices, index_buf);
  scatter(outs.means, mean_buf);
}

DimMask all_dims(const at::Tensor& self) { return at::native::make_dim_mask(std::nullopt, self.dim()); }

DimMask one_dim(const at::Tensor& self, int64_t dim) {
  return at::native::make_dim_mask(at::IntArrayRef(dim), self.dim());
}

// The kernel's (input, output) dtype pairs of sum and mean besides equal dtypes.
bool native_sum_pair(at::ScalarType in, at::ScalarType out, bool mean) {
  if (in == out) return true;
  if (!mean && out == at::kLong && at::isIntegralType(in, /*includeBool=*/true)) return true;
  return out == at::kFloat && (in == at::kHalf || in == at::kBFloat16);
}

void minmax_dim(const char* name, ReduceOp op, const at::Tensor& self, int64_t dim, bool keepdim,
                const at::Tensor& values, const at::Tensor& indices) {
  check_kernel_dtype(name, self.scalar_type());
  reduce_into(op, self, one_dim(self, dim), keepdim, {&values, &indices});
}

void arg_extreme(const char* name, ReduceOp op, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                 const at::Tensor& out) {
  check_kernel_dtype(name, self.scalar_type(), foo::kernels::kNumericTypes);
  const DimMask mask = dim.has_value() ? one_dim(self, at::maybe_wrap_dim(*dim, self.dim())) : all_dims(self);
  reduce_into(op, self, mask, keepdim, {nullptr, &out});
}

void extreme_values(const char* name, ReduceOp op, const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                    const at::Tensor& out) {
  check_kernel_dtype(name, self.scalar_type());
  reduce_into(op, self, at::native::make_dim_mask(dim, self.dim()), keepdim, {&out});
}

at::Tensor& extreme_all(const char* name, ReduceOp op, const at::Tensor& self, at::Tensor& out) {
  check_kernel_dtype(name, self.scalar_type());
  if (!out.defined()) {
    // The functional max()/min() refuse an empty input; the out= form (as on the CPU) does not,
    // and yields the identity (-inf for max).
    TORCH_CHECK(self.numel() > 0, name,
                ": Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
                "the 'dim' argument.");
    out = at::empty({}, self.options());
  } else {
    TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), name, ": result type ", self.scalar_type(),
                " can't be cast to the desired output type ", out.scalar_type());
    at::native::resize_output(out, {});
  }
  at::Tensor result = out.scalar_type() == self.scalar_type() ? out : at::empty({}, self.options());
  reduce_into(op, self, all_dims(self), false, {&result});
  if (!result.is_same(out)) {
    // The CPU fills `out` with the value as a Scalar: out of the dtype's range is an error.
    const at::Scalar value = result.item();
    AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "max_all",
                               [&] { (void)value.to<scalar_t>(); });
    out.copy_(result);
  }
  return out;
}

void warn_degrees_of_freedom(const char* name, const at::Tensor& self, const at::Tensor& out, double correction) {
  const int64_t reduced = out.numel() == 0 ? 0 : self.numel() / out.numel();
  if (static_cast<double>(reduced) - correction <= 0) {
    TORCH_WARN(name, "(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
               "(input numel divided by output numel).");
  }
}

void check_var_dtype(const char* name, const at::Tensor& self) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  check_kernel_dtype(name, self.scalar_type());
}

std::tuple<at::Tensor&, at::Tensor&> var_std_mean(const char* name, bool take_sqrt, const at::Tensor& self,
                                                  at::OptionalIntArrayRef dim,
                                                  const std::optional<at::Scalar>& correction, bool keepdim,
                                                  at::Tensor& var, at::Tensor& mean) {
  check_var_dtype(name, self);
  const double c = correction.value_or(1).toDouble();
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  const auto shape = at::native::shape_from_dim_mask(self, mask, keepdim);
  prepare_out(var, shape, self.options());
  prepare_out(mean, shape, self.options());
  warn_degrees_of_freedom(name, self, var, c);
  reduce_into(take_sqrt ? ReduceOp::Std : ReduceOp::Var, self, mask, keepdim, {&var, nullptr, &mean}, c);
  return {var, mean};
}

at::Tensor& var_std(const char* name, bool take_sqrt, const at::Tensor& self, at::OptionalIntArrayRef dim,
                    const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  check_var_dtype(name, self);
  const double c = correction.value_or(1).toDouble();
  if (!out.defined()) out = at::empty({0}, self.options());
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  check_kernel_dtype(name, out.scalar_type());
  warn_degrees_of_freedom(name, self, out, c);
  // The CPU computes in the output's dtype.
  const at::Tensor input = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
  reduce_into(take_sqrt ? ReduceOp::Std : ReduceOp::Var, input, mask, keepdim, {&out}, c);
  return out;
}

// prod over the dims of `mask` into `out`, whose dtype the product is computed in (the CPU casts
// the input to it first: make_reduction_from_out_ty).
void prod_into(const at::Tensor& self, const DimMask& mask, bool keepdim, const at::Tensor& out) {
  check_kernel_dtype("prod", self.scalar_type());
  check_kernel_dtype("prod", out.scalar_type());
  const at::Tensor input = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
  reduce_into(ReduceOp::Prod, input, mask, keepdim, {&out});
}

// all/any over the dims of `mask` into `result` (bool, or uint8 for uint8 input), which ATen's
// meta function shaped: the impl of the structured all/any kernels.
void all_any_impl(ReduceOp op, const at::Tensor& self, const DimMask& mask, bool keepdim, const at::Tensor& result) {
  check_kernel_dtype(op == ReduceOp::All ? "all" : "any", self.scalar_type());
  at::Tensor out = result;
  reduce_into(op, self, mask, keepdim, {&out});
}

}  // namespace

TORCH_IMPL_FUNC(sum_out)(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> /*dtype*/, const at::Tensor& out) {
  if (has_complex_kernel_dtype(out.scalar_type())) {
    // A complex sum is the sums of the real and the imaginary parts: the real kernel over
    // view_as_real of input and output, the trailing (real, imaginary) dim never reduced.
    const at::Tensor input = (self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type())).resolve_conj();
    DimMask mask = at::native::make_dim_mask(dim, self.dim());
    mask.reset(static_cast<size_t>(self.dim()));
    at::Tensor parts = at::view_as_real(out);
    reduce_into(ReduceOp::Sum, at::view_as_real(input), mask, keepdim, {&parts});
    return;
  }
  check_kernel_dtype("sum", self.scalar_type());
  check_kernel_dtype("sum", out.scalar_type());
  // The CPU casts the input to the output dtype and sums that.
  const at::Tensor input = native_sum_pair(self.scalar_type(), out.scalar_type(), false) ? self : self.to(out.scalar_type());
  reduce_into(ReduceOp::Sum, input, at::native::make_dim_mask(dim, self.dim()), keepdim, {&out});
}

TORCH_IMPL_FUNC(mean_out)(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> /*dtype*/, const at::Tensor& out) {
  const at::ScalarType out_dtype = out.scalar_type();
  check_kernel_dtype("mean", self.scalar_type());
  TORCH_CHECK(at::isFloatingType(out_dtype) || at::isComplexType(out_dtype), "result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out_dtype);
  check_kernel_dtype("mean", out_dtype);
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  // As the CPU: a 16-bit float mean is a float32 sum divided in float32 (the kernel does that
  // for half -> half); otherwise the input is cast to the output dtype first.
  const bool low = out_dtype == at::kHalf || out_dtype == at::kBFloat16;
  const at::ScalarType compute = low && self.scalar_type() != out_dtype ? at::kFloat : out_dtype;
  const at::Tensor input = native_sum_pair(self.scalar_type(), compute, true) ? self : self.to(compute);
  if (compute == out_dtype) {
    reduce_into(ReduceOp::Mean, input, mask, keepdim, {&out});
  } else {
    const at::Tensor result = at::empty(out.sizes(), out.options().dtype(compute));
    reduce_into(ReduceOp::Mean, input, mask, keepdim, {&result});
    out.copy_(result);
  }
}

TORCH_IMPL_FUNC(amax_out)(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  extreme_values("amax()", ReduceOp::Max, self, dim, keepdim, out);
}

TORCH_IMPL_FUNC(amin_out)(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  extreme_values("amin()", ReduceOp::Min, self, dim, keepdim, out);
}

// `dim` arrives wrapped (the meta function's precomputed value).
TORCH_IMPL_FUNC(max_dim_out)(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& max,
                             const at::Tensor& max_values) {
  minmax_dim("max()", ReduceOp::ArgMax, self, dim, keepdim, max, max_values);
}

TORCH_IMPL_FUNC(min_dim_out)(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& min,
                             const at::Tensor& min_indices) {
  minmax_dim("min()", ReduceOp::ArgMin, self, dim, keepdim, min, min_indices);
}

at::Tensor& max_unary_out(const at::Tensor& self, at::Tensor& out) {
  return extreme_all("max()", ReduceOp::Max, self, out);
}

at::Tensor& min_unary_out(const at::Tensor& self, at::Tensor& out) {
  return extreme_all("min()", ReduceOp::Min, self, out);
}

TORCH_IMPL_FUNC(argmax_out)(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, const at::Tensor& out) {
  arg_extreme("argmax", ReduceOp::ArgMax, self, dim, keepdim, out);
}

TORCH_IMPL_FUNC(argmin_out)(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, const at::Tensor& out) {
  arg_extreme("argmin", ReduceOp::ArgMin, self, dim, keepdim, out);
}

at::Tensor& var_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  return var_std("var", false, self, dim, correction, keepdim, out);
}

at::Tensor& std_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  return var_std("std", true, self, dim, correction, keepdim, out);
}

std::tuple<at::Tensor&, at::Tensor&> var_mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                  const std::optional<at::Scalar>& correction, bool keepdim,
                                                  at::Tensor& out0, at::Tensor& out1) {
  return var_std_mean("var_mean", false, self, dim, correction, keepdim, out0, out1);
}

std::tuple<at::Tensor&, at::Tensor&> std_mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                  const std::optional<at::Scalar>& correction, bool keepdim,
                                                  at::Tensor& out0, at::Tensor& out1) {
  return var_std_mean("std_mean", true, self, dim, correction, keepdim, out0, out1);
}

// As the CPU: other dtypes compare after promotion, other shapes are unequal, NaN equals nothing
// (an alias of itself included). The generated wrapper has checked both are on one foo device.
bool equal(const at::Tensor& self, const at::Tensor& other) {
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  const at::Tensor same = at::eq(self, other).all();
  return stage_to_cpu(same, "torch.equal reads its answer on the host").item<bool>();
}

TORCH_IMPL_FUNC(all_all_out)(const at::Tensor& self, const at::Tensor& out) {
  all_any_impl(ReduceOp::All, self, all_dims(self), false, out);
}

TORCH_IMPL_FUNC(all_dim_out)(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& out) {
  all_any_impl(ReduceOp::All, self, one_dim(self, at::maybe_wrap_dim(dim, self.dim())), keepdim, out);
}

TORCH_IMPL_FUNC(all_dims_out)(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                              const at::Tensor& out) {
  all_any_impl(ReduceOp::All, self, at::native::make_dim_mask(dim, self.dim()), keepdim, out);
}

TORCH_IMPL_FUNC(any_all_out)(const at::Tensor& self, const at::Tensor& out) {
  all_any_impl(ReduceOp::Any, self, all_dims(self), false, out);
}

TORCH_IMPL_FUNC(any_dim_out)(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& out) {
  all_any_impl(ReduceOp::Any, self, one_dim(self, at::maybe_wrap_dim(dim, self.dim())), keepdim, out);
}

TORCH_IMPL_FUNC(any_dims_out)(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                              const at::Tensor& out) {
  all_any_impl(ReduceOp::Any, self, at::native::make_dim_mask(dim, self.dim()), keepdim, out);
}

TORCH_IMPL_FUNC(linalg_vector_norm_out)(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                                        bool keepdim, std::optional<at::ScalarType> /*dtype*/, const at::Tensor& out) {
  // ATen's meta function checked ord against empty inputs and chose out's dtype (`dtype`, else
  // self's real dtype); as the CPU, the input is cast to it and the norm computed in it.
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(), "\"linalg_vector_norm\" not implemented for '", self.scalar_type(),
                              "' on foo");
  const at::Tensor input = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
  check_kernel_dtype("linalg_vector_norm", input.scalar_type());
  // An empty `dim` reduces every dim, as dim=None does.
  const bool all = !dim.has_value() || dim->empty();
  reduce_into(ReduceOp::Norm, input, at::native::make_dim_mask(all ? at::OptionalIntArrayRef() : dim, self.dim()), keepdim,
              {&out}, 0.0, ord.toDouble());
}

// prod.dim_int and its out=: ATen's meta function shaped `out` and chose its dtype (`dtype`, out's
// own, or self's with integers promoted to int64).
TORCH_IMPL_FUNC(prod_int_out)(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> /*dtype*/,
                              const at::Tensor& out) {
  prod_into(self, one_dim(self, at::maybe_wrap_dim(dim, self.dim())), keepdim, out);
}

// prod(self) over everything, and its out= (autogen upstream: compute, then copy into `out`,
// which may have another dtype), as the CPU's prod: a 0-d result of get_dtype_from_self's dtype.
at::Tensor& prod_out(const at::Tensor& self, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType result_type = at::native::get_dtype_from_self(self, dtype, /*promote_integers=*/true);
  const bool direct = !out.defined() || out.scalar_type() == result_type;
  if (out.defined()) at::native::resize_output(out, {});
  const at::Tensor result = direct && out.defined() ? out : at::empty({}, self.options().dtype(result_type));
  prod_into(self, all_dims(self), false, result);
  if (!out.defined()) out = result;
  else if (!result.is_same(out)) out.copy_(result);
  return out;
}

// torch.norm with a dim: what the CPU does, linalg.vector_norm into the output ATen's meta shaped.
TORCH_IMPL_FUNC(norm_out)(const at::Tensor& self, at::OptionalScalarRef p, at::IntArrayRef dim, bool keepdim,
                          const at::Tensor& out) {
  at::linalg_vector_norm_out(const_cast<at::Tensor&>(out), self, p.has_value() ? p.get() : at::Scalar(2.0), dim, keepdim,
                             std::nullopt);
}

TORCH_IMPL_FUNC(norm_dtype_out)(const at::Tensor& self, at::OptionalScalarRef p, at::IntArrayRef dim, bool keepdim,
                                at::ScalarType dtype, const at::Tensor& out) {
  at::linalg_vector_norm_out(const_cast<at::Tensor&>(out), self, p.has_value() ? p.get() : at::Scalar(2.0), dim, keepdim,
                             dtype);
}

}  // namespace foo::native
