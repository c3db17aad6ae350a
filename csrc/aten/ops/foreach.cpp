// torch._foreach_* ops and the fused Adam/AdamW/SGD/Adagrad steps as multi-tensor kernels (foreach.cu): one
// launch per call over every tensor, through a table of the tensors copied to the device. Lists
// the fast route cannot take (mixed dtypes or devices, non-dense or differently strided tensors,
// integer tensors, scalars that would promote) run ATen's per-tensor loop, whose ops are native.
#include <ATen/ATen.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/ForeachUtils.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_zero_native.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "aten/core/launch_args.h"
#include "native/foreach_add_list.h"
#include "native/foreach_add_list_.h"
#include "native/foreach_add_scalar.h"
#include "native/foreach_add_scalar_.h"
#include "native/foreach_addcdiv_scalar_.h"
#include "native/foreach_addcdiv_scalarlist_.h"
#include "native/foreach_addcmul_scalar_.h"
#include "native/foreach_div_list_.h"
#include "native/foreach_div_scalar_.h"
#include "native/foreach_div_scalarlist_.h"
#include "native/foreach_lerp_scalar_.h"
#include "native/foreach_maximum_list_.h"
#include "native/foreach_mul_list_.h"
#include "native/foreach_mul_scalar.h"
#include "native/foreach_mul_scalar_.h"
#include "native/foreach_mul_tensor_.h"
#include "native/foreach_neg.h"
#include "native/foreach_norm.h"
#include "native/foreach_sqrt.h"
#include "native/foreach_sqrt_.h"
#include "native/foreach_sub_list_.h"
#include "native/foreach_sub_scalar_.h"
#include "native/foreach_zero_.h"
#include "native/fused_adam_.h"
#include "native/fused_adamw_.h"
#include "native/fused_adagrad_.h"
#include "native/fused_sgd_.h"
#include "aten/core/elementwise.h"
#include "kernels/ops/foreach.h"

namespace foo::native {
namespace {

using foo::kernels::AdamArgs;
using foo::kernels::ForeachArgs;
using foo::kernels::ForeachOp;
using foo::kernels::ForeachScalar;
using foo::kernels::ForeachTensor;
using foo::kernels::kForeachChunk;
using foo::kernels::kForeachLists;

// The device table of `lists` (lists[k][i] is tensor i of list k; at most kForeachLists lists)
// and its chunk count. The host bytes go through a pageable host-to-device copy, which the
// driver stages: nothing waits, and the device tensor lives in stream order until the kernel ran.
struct DeviceTable {
  at::Tensor rows;  // on the device
  int64_t chunks = 0;
  int32_t tensors = 0;
  const ForeachTensor* data() const { return reinterpret_cast<const ForeachTensor*>(rows.const_data_ptr()); }
};

DeviceTable make_table(c10::ArrayRef<at::TensorList> lists, c10::ArrayRef<at::Scalar> scalars, c10::Device device) {
  TORCH_INTERNAL_ASSERT(lists.size() <= static_cast<size_t>(kForeachLists));
  const size_t n = lists[0].size();
  std::vector<ForeachTensor> rows(n);
  DeviceTable table;
  for (size_t i = 0; i < n; ++i) {
    ForeachTensor& row = rows[i];
    std::memset(&row, 0, sizeof(row));
    for (size_t k = 0; k < lists.size(); ++k) {
      if (!lists[k].empty()) row.data[k] = static_cast<char*>(lists[k][i].data_ptr());
    }
    row.numel = lists[lists.size() > 1 ? 1 : 0][i].numel();
    row.first_chunk = table.chunks;
    row.scalar = scalars.empty() ? 0.0 : scalars[i].toDouble();
    table.chunks += (row.numel + kForeachChunk - 1) / kForeachChunk;
  }
  at::Tensor host = at::empty({static_cast<int64_t>(n * sizeof(ForeachTensor))}, at::dtype(at::kByte));
  std::memcpy(host.mutable_data_ptr(), rows.data(), n * sizeof(ForeachTensor));
  table.rows = host.to(device);
  table.tensors = static_cast<int32_t>(n);
  return table;
}

// Whether the multi-tensor kernel serves these lists (ATen's fast-route conditions, floating only).
bool fast(c10::ArrayRef<at::TensorList> lists, c10::ArrayRef<at::Scalar> scalars = {}) {
  return at::isFloatingType(lists[0][0].scalar_type()) && at::native::can_use_fast_route(lists, scalars);
}

struct Pointwise {
  ForeachOp op;
  ForeachScalar from = ForeachScalar::Value;
  double scalar = 0, alpha = 1;
  at::Tensor device_scalar{};           // ForeachScalar::Device: a 0-d tensor of the opmath dtype
  c10::ArrayRef<at::Scalar> per_tensor{};  // ForeachScalar::PerTensor
};

// out[i] = op(inputs[0][i], inputs[1][i], ...): `out` may be inputs[0] (in-place).
void run_pointwise(const Pointwise& p, at::TensorList out, std::initializer_list<at::TensorList> inputs) {
  std::vector<at::TensorList> lists{out};
  lists.insert(lists.end(), inputs.begin(), inputs.end());
  const DeviceTable table = make_table(lists, p.per_tensor, out[0].device());
  ForeachArgs args{p.op, p.from, p.scalar, p.alpha, ptr_or_null(p.device_scalar),
                   table.data(), table.tensors, table.chunks};
  FOO_CALL_KERNEL(foreach_pointwise, stream_of(out[0]), kernel_dtype(out[0].scalar_type()), args);
}

std::vector<at::Tensor> empty_like_all(at::TensorList tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(at::empty_like(t));
  return out;
}

// A 0-d device tensor read by the kernel as opmath_t of the list's dtype.
at::Tensor device_scalar(const at::Tensor& other, at::ScalarType list_dtype, const char* op) {
  TORCH_CHECK(other.dim() == 0 && other.numel() == 1, op, ": scalar tensor expected to be 0 dim but it has ",
              other.dim(), " dimensions and ", other.numel(), " elements.");
  const auto opmath = list_dtype == at::kDouble ? at::kDouble : at::kFloat;
  return other.to(opmath).contiguous();
}

// The kernel reads a 0-d tensor on the list's device; a CPU or complex one goes per tensor.
bool device_scalar_fast(at::TensorList self, const at::Tensor& other) {
  return fast({self}) && other.device() == self[0].device() && !at::isComplexType(other.scalar_type());
}

}  // namespace

// ---- add / sub ----
void foreach_add_scalar_(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_add_scalar_kernel_slow_(self, scalar);
  run_pointwise({ForeachOp::AddScalar, ForeachScalar::Value, scalar.toDouble()}, self, {self});
}

std::vector<at::Tensor> foreach_add_scalar(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_add_scalar_kernel_slow(self, scalar);
  auto out = empty_like_all(self);
  run_pointwise({ForeachOp::AddScalar, ForeachScalar::Value, scalar.toDouble()}, out, {self});
  return out;
}

void foreach_add_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  at::native::check_foreach_api_restrictions(self, other);
  if (!fast({self, other}, {alpha})) return at::native::foreach_tensor_add_list_kernel_slow_(self, other, alpha);
  run_pointwise({ForeachOp::AddList, ForeachScalar::Value, 0.0, alpha.toDouble()}, self, {self, other});
}

std::vector<at::Tensor> foreach_add_list(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  at::native::check_foreach_api_restrictions(self, other);
  if (!fast({self, other}, {alpha})) return at::native::foreach_tensor_add_list_kernel_slow(self, other, alpha);
  auto out = empty_like_all(self);
  run_pointwise({ForeachOp::AddList, ForeachScalar::Value, 0.0, alpha.toDouble()}, out, {self, other});
  return out;
}

void foreach_sub_scalar_(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  for (const auto& t : self) at::native::sub_check(t, scalar);  // a bool scalar: the CPU's error
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_sub_scalar_kernel_slow_(self, scalar);
  run_pointwise({ForeachOp::AddScalar, ForeachScalar::Value, -scalar.toDouble()}, self, {self});
}

void foreach_sub_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  at::native::check_foreach_api_restrictions(self, other);
  for (size_t i = 0; i < self.size(); ++i) at::native::sub_check(self[i], other[i]);
  if (!fast({self, other}, {alpha})) return at::native::foreach_tensor_sub_list_kernel_slow_(self, other, alpha);
  run_pointwise({ForeachOp::AddList, ForeachScalar::Value, 0.0, -alpha.toDouble()}, self, {self, other});
}

// ---- mul / div ----
void foreach_mul_scalar_(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_mul_scalar_kernel_slow_(self, scalar);
  run_pointwise({ForeachOp::MulScalar, ForeachScalar::Value, scalar.toDouble()}, self, {self});
}

std::vector<at::Tensor> foreach_mul_scalar(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_mul_scalar_kernel_slow(self, scalar);
  auto out = empty_like_all(self);
  run_pointwise({ForeachOp::MulScalar, ForeachScalar::Value, scalar.toDouble()}, out, {self});
  return out;
}

void foreach_mul_list_(at::TensorList self, at::TensorList other) {
  at::native::check_foreach_api_restrictions(self, other);
  if (!fast({self, other})) return at::native::foreach_tensor_mul_list_kernel_slow_(self, other);
  run_pointwise({ForeachOp::MulList}, self, {self, other});
}

void foreach_mul_tensor_(at::TensorList self, const at::Tensor& other) {
  at::native::check_foreach_api_restrictions(self);
  if (!device_scalar_fast(self, other)) return at::native::foreach_tensor_mul_tensor_kernel_slow_(self, other);
  Pointwise p{ForeachOp::MulScalar, ForeachScalar::Device};
  p.device_scalar = device_scalar(other, self[0].scalar_type(), "_foreach_mul_");
  run_pointwise(p, self, {self});
}

void foreach_div_scalar_(at::TensorList self, const at::Scalar& scalar) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self}, {scalar})) return at::native::foreach_tensor_div_scalar_kernel_slow_(self, scalar);
  run_pointwise({ForeachOp::DivScalar, ForeachScalar::Value, scalar.toDouble()}, self, {self});
}

void foreach_div_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> scalars) {
  at::native::check_foreach_api_restrictions(self, scalars);
  if (!fast({self}, scalars)) return at::native::foreach_tensor_div_scalarlist_kernel_slow_(self, scalars);
  Pointwise p{ForeachOp::DivScalar, ForeachScalar::PerTensor};
  p.per_tensor = scalars;
  run_pointwise(p, self, {self});
}

void foreach_div_list_(at::TensorList self, at::TensorList other) {
  at::native::check_foreach_api_restrictions(self, other);
  if (!fast({self, other})) return at::native::foreach_tensor_div_list_kernel_slow_(self, other);
  run_pointwise({ForeachOp::DivList}, self, {self, other});
}

// ---- unary ----
std::vector<at::Tensor> foreach_sqrt(at::TensorList self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self})) return at::native::foreach_tensor_sqrt_slow(self);
  auto out = empty_like_all(self);
  run_pointwise({ForeachOp::Sqrt}, out, {self});
  return out;
}

void foreach_sqrt_(at::TensorList self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self})) return at::native::foreach_tensor_sqrt_slow_(self);
  run_pointwise({ForeachOp::Sqrt}, self, {self});
}

std::vector<at::Tensor> foreach_neg(at::TensorList self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self})) return at::native::foreach_tensor_neg_slow(self);
  auto out = empty_like_all(self);
  run_pointwise({ForeachOp::Neg}, out, {self});
  return out;
}

void foreach_zero_(at::TensorList self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fast({self})) return at::native::foreach_tensor_zero_slow_(self);
  run_pointwise({ForeachOp::Zero}, self, {});
}

// ---- lerp, addcmul, addcdiv, maximum ----
void foreach_lerp_scalar_(at::TensorList self, at::TensorList tensors1, const at::Scalar& weight) {
  at::native::check_foreach_api_restrictions(self, tensors1);
  if (!fast({self, tensors1}, {weight})) return at::native::foreach_tensor_lerp_list_kernel_slow_(self, tensors1, weight);
  run_pointwise({ForeachOp::Lerp, ForeachScalar::Value, weight.toDouble()}, self, {self, tensors1});
}

void foreach_addcmul_scalar_(at::TensorList self, at::TensorList tensor1, at::TensorList tensor2, const at::Scalar& value) {
  at::native::check_foreach_api_restrictions(self, tensor1, tensor2);
  if (!fast({self, tensor1, tensor2}, {value})) {
    return at::native::foreach_tensor_addcmul_scalar_slow_(self, tensor1, tensor2, value);
  }
  run_pointwise({ForeachOp::Addcmul, ForeachScalar::Value, value.toDouble()}, self, {self, tensor1, tensor2});
}

void foreach_addcdiv_scalar_(at::TensorList self, at::TensorList tensor1, at::TensorList tensor2, const at::Scalar& value) {
  at::native::check_foreach_api_restrictions(self, tensor1, tensor2);
  if (!fast({self, tensor1, tensor2}, {value})) {
    return at::native::foreach_tensor_addcdiv_scalar_slow_(self, tensor1, tensor2, value);
  }
  run_pointwise({ForeachOp::Addcdiv, ForeachScalar::Value, value.toDouble()}, self, {self, tensor1, tensor2});
}

void foreach_addcdiv_scalarlist_(at::TensorList self, at::TensorList tensor1, at::TensorList tensor2,
                                 at::ArrayRef<at::Scalar> scalars) {
  at::native::check_foreach_api_restrictions(self, tensor1, tensor2, scalars);
  if (!fast({self, tensor1, tensor2}, scalars)) {
    return at::native::foreach_tensor_addcdiv_scalarlist_slow_(self, tensor1, tensor2, scalars);
  }
  Pointwise p{ForeachOp::Addcdiv, ForeachScalar::PerTensor};
  p.per_tensor = scalars;
  run_pointwise(p, self, {self, tensor1, tensor2});
}

void foreach_maximum_list_(at::TensorList self, at::TensorList other) {
  at::native::check_foreach_api_restrictions(self, other);
  if (!fast({self, other})) return at::native::foreach_tensor_clamp_min_list_kernel_slow_(self, other);
  run_pointwise({ForeachOp::Maximum}, self, {self, other});
}

// ---- norm: ord 1, 2 and inf in the kernel; other orders and dtype conversions per tensor ----
std::vector<at::Tensor> foreach_norm(at::TensorList self, const at::Scalar& ord, std::optional<at::ScalarType> dtype) {
  at::native::check_foreach_api_restrictions(self);
  const double p = ord.toDouble();
  const bool inf = p == std::numeric_limits<double>::infinity();
  // The per-tensor path raises the CPU's error for the infinity norm of an empty tensor.
  const bool kernel_ord = p == 1 || p == 2 || (inf && std::none_of(self.begin(), self.end(), [](const at::Tensor& t) {
                                                 return t.numel() == 0;
                                               }));
  if (!kernel_ord || !fast({self}) || (dtype.has_value() && *dtype != self[0].scalar_type())) {
    return at::native::foreach_tensor_norm_slow(self, ord, dtype);
  }
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (const auto& t : self) out.push_back(at::empty({}, t.options()));
  const DeviceTable table = make_table({at::TensorList(out), self}, {}, self[0].device());
  at::Tensor partials = at::empty({std::max<int64_t>(table.chunks, 1)}, self[0].options().dtype(at::kDouble));
  ForeachArgs args{ForeachOp::Zero, ForeachScalar::Value, 0.0, 0.0, nullptr, table.data(), table.tensors, table.chunks};
  FOO_CALL_KERNEL(foreach_norm, stream_of(self[0]), kernel_dtype(self[0].scalar_type()), args,
                  p == 1 || p == 2 ? p : 0.0, partials.mutable_data_ptr<double>());
  return out;
}

// ---- fused optimizers: Adam / AdamW, SGD, Adagrad ----
namespace {

// grad_scale / found_inf of a fused optimizer: a one-element float32 device tensor read by the
// kernel, or null.
const float* optional_float_scalar(const char* name, const std::optional<at::Tensor>& t, const char* what) {
  if (!t.has_value() || !t->defined()) return nullptr;
  TORCH_CHECK(t->scalar_type() == at::kFloat && t->numel() == 1, name, ": ", what, " must be a one-element float32 tensor");
  return t->const_data_ptr<float>();
}

// The lists a fused kernel walks together: floating, one dtype, dense and laid out alike.
void check_fused_lists(const char* name, const std::vector<at::TensorList>& lists) {
  TORCH_CHECK(at::isFloatingType(lists[0][0].scalar_type()) && at::native::can_use_fast_route(lists), name,
              ": foo's fused kernel needs floating parameters, gradients and states of one dtype, dense and "
              "laid out alike, on one device");
}

// state_steps: one-element float32 tensors on the parameters' device (read by the kernel).
void check_state_steps(const char* name, at::TensorList state_steps, const at::Tensor& param) {
  for (const auto& step : state_steps) {
    TORCH_CHECK(step.scalar_type() == at::kFloat && step.numel() == 1 && step.device() == param.device(), name,
                ": state_steps must be one-element float32 tensors on ", param.device());
  }
}

void fused_adam_impl(const char* name, bool decoupled, at::TensorList self, at::TensorList grads,
                     at::TensorList exp_avgs, at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                     at::TensorList state_steps, double lr, double beta1, double beta2, double weight_decay,
                     double eps, bool amsgrad, bool maximize, const std::optional<at::Tensor>& grad_scale,
                     const std::optional<at::Tensor>& found_inf) {
  if (self.empty()) return;
  at::native::check_foreach_api_restrictions(self, grads, exp_avgs);
  at::native::check_foreach_api_restrictions(self, exp_avg_sqs, state_steps);
  if (amsgrad) at::native::check_foreach_api_restrictions(self, max_exp_avg_sqs);
  std::vector<at::TensorList> lists{self, grads, exp_avgs, exp_avg_sqs};
  if (amsgrad) lists.push_back(max_exp_avg_sqs);
  check_fused_lists(name, lists);
  check_state_steps(name, state_steps, self[0]);
  const at::TensorList none;
  const DeviceTable table =
      make_table({self, grads, exp_avgs, exp_avg_sqs, amsgrad ? max_exp_avg_sqs : none, state_steps}, {}, self[0].device());
  AdamArgs args{table.data(), table.tensors, table.chunks, lr, beta1, beta2, weight_decay, eps, nullptr,
                optional_float_scalar(name, grad_scale, "grad_scale"), optional_float_scalar(name, found_inf, "found_inf"),
                amsgrad, maximize,
                decoupled};
  FOO_CALL_KERNEL(fused_adam, stream_of(self[0]), kernel_dtype(self[0].scalar_type()), args);
}

}  // namespace

void fused_adam_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                 at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2,
                 double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  fused_adam_impl("_fused_adam_", false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adamw_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                  at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2,
                  double weight_decay, double eps, bool amsgrad, bool maximize,
                  const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  fused_adam_impl("_fused_adamw_", true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

// SGD: momentum_buffer_list is empty when momentum == 0 (torch.optim passes []); on the first
// step torch.optim hands fresh buffers and is_first_step, and the kernel fills them.
void fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay,
                double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const char* name = "_fused_sgd_";
  if (self.empty()) return;
  at::native::check_foreach_api_restrictions(self, grads);
  const bool has_buffers = momentum != 0.0;
  TORCH_CHECK(!has_buffers || momentum_buffer_list.size() == self.size(), name,
              ": momentum != 0 needs one momentum buffer per parameter");
  std::vector<at::TensorList> lists{self, grads};
  if (has_buffers) lists.push_back(momentum_buffer_list);
  check_fused_lists(name, lists);
  const at::TensorList none;
  const DeviceTable table = make_table({self, grads, has_buffers ? momentum_buffer_list : none}, {}, self[0].device());
  foo::kernels::SgdArgs args{table.data(), table.tensors, table.chunks, weight_decay, momentum, lr, dampening,
                             optional_float_scalar(name, grad_scale, "grad_scale"),
                             optional_float_scalar(name, found_inf, "found_inf"), nesterov, maximize, is_first_step};
  FOO_CALL_KERNEL(fused_sgd, stream_of(self[0]), kernel_dtype(self[0].scalar_type()), args);
}

void fused_adagrad_(at::TensorList self, at::TensorList grads, at::TensorList state_sums, at::TensorList state_steps,
                    double lr, double lr_decay, double weight_decay, double eps, bool maximize,
                    const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const char* name = "_fused_adagrad_";
  if (self.empty()) return;
  at::native::check_foreach_api_restrictions(self, grads, state_sums);
  at::native::check_foreach_api_restrictions(self, state_steps);
  check_fused_lists(name, {self, grads, state_sums});
  check_state_steps(name, state_steps, self[0]);
  const DeviceTable table = make_table({self, grads, state_sums, state_steps}, {}, self[0].device());
  foo::kernels::AdagradArgs args{table.data(), table.tensors, table.chunks, lr, lr_decay, weight_decay, eps,
                                 optional_float_scalar(name, grad_scale, "grad_scale"),
                                 optional_float_scalar(name, found_inf, "found_inf"), maximize};
  FOO_CALL_KERNEL(fused_adagrad, stream_of(self[0]), kernel_dtype(self[0].scalar_type()), args);
}

}  // namespace foo::native
