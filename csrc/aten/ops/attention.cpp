// Scaled dot-product attention on foo (kernels/ops/attention.cu): the fused kernel registered as
// PyTorch's "overrideable" SDPA backend. F.scaled_dot_product_attention asks
// _fused_sdp_choice_stub (registered below for PrivateUse1) which backend to take: the fused one
// when the inputs fit it, the math path (composite ops) otherwise. Autograd reaches
// _scaled_dot_product_fused_attention_overrideable_backward through derivatives.yaml.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/attention.h"
#include "native/fused_sdp_choice.h"
#include "native/scaled_dot_product_fused_attention_overrideable.h"
#include "native/scaled_dot_product_fused_attention_overrideable_backward.h"
#include "runtime/generator.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

using foo::kernels::AttentionRef;
using foo::kernels::AttentionShape;
using foo::kernels::MutableAttentionRef;

bool is_attention_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kDouble;
}

// Why the fused kernel cannot take these inputs, or "" when it can. `gqa_allowed`: query heads
// may be a multiple of key/value heads (SDPA's enable_gqa; a direct call of the fused op allows it).
std::string unfit_reason(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& mask, double dropout_p, bool gqa_allowed) {
  for (const at::Tensor* t : {&q, &k, &v}) {
    if (!t->is_privateuseone()) return "query, key and value must be foo tensors";
    if (t->dim() != 4) return "query, key and value must be 4-D ([batch, heads, length, head dim])";
  }
  if (!is_attention_dtype(q.scalar_type())) return std::string("dtype ") + c10::toString(q.scalar_type()) + " is not floating";
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type()) return "query, key and value dtypes differ";
  if (k.size(0) != v.size(0) || k.size(1) != v.size(1) || k.size(2) != v.size(2)) return "key and value shapes disagree";
  if (k.size(0) != q.size(0) && k.size(0) != 1) return "key/value batch is neither the query's nor 1";
  if (k.size(1) == 0 || q.size(1) % k.size(1) != 0) return "query heads are not a multiple of key/value heads";
  if (k.size(1) != q.size(1) && !gqa_allowed) return "query and key/value heads differ without enable_gqa";
  if (q.size(3) != k.size(3)) return "query and key head dims differ";
  if (std::max(q.size(3), v.size(3)) > foo::kernels::kAttentionMaxHeadDim) {
    return "head dims above " + std::to_string(foo::kernels::kAttentionMaxHeadDim);
  }
  if (!(dropout_p >= 0.0 && dropout_p < 1.0)) return "dropout_p outside [0, 1)";
  if (mask.has_value() && mask->defined()) {
    if (!mask->is_privateuseone()) return "the mask is not a foo tensor";
    if (mask->scalar_type() != at::kBool && mask->scalar_type() != q.scalar_type()) return "the mask dtype is neither bool nor the query's";
    if (!at::is_expandable_to(mask->sizes(), {q.size(0), q.size(1), q.size(2), k.size(2)})) {
      return "the mask does not broadcast to [batch, heads, query length, key length]";
    }
  }
  return "";
}

// What F.scaled_dot_product_attention asks before choosing a backend: the fused kernel when the
// inputs fit and torch.nn.attention.sdpa_kernel allows OVERRIDEABLE, else the math path.
int64_t choose_backend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::optional<at::Tensor>& mask, double dropout_p, bool /*is_causal*/,
                       std::optional<double> /*scale*/, bool enable_gqa) {
  const auto& ctx = at::globalContext();
  const std::string why = unfit_reason(q, k, v, mask, dropout_p, enable_gqa);
  if (why.empty() && ctx.userEnabledOverrideableSDP()) return static_cast<int64_t>(at::SDPBackend::overrideable);
  TORCH_CHECK(ctx.userEnabledMathSDP(), "scaled_dot_product_attention on foo: no available kernel: the math backend is ",
              "disabled and the fused one ", why.empty() ? std::string("is disabled") : "cannot take the inputs: " + why);
  return static_cast<int64_t>(at::SDPBackend::math);
}

template <typename Ref, typename Ptr>
Ref attention_ref(Ptr data, const at::Tensor& t) {
  return {data, t.stride(0), t.stride(1), t.stride(2), t.stride(3)};
}
AttentionRef ref_of(const at::Tensor& t) { return attention_ref<AttentionRef>(t.const_data_ptr(), t); }
MutableAttentionRef mutable_ref_of(const at::Tensor& t) { return attention_ref<MutableAttentionRef>(t.mutable_data_ptr(), t); }

at::ScalarType lse_dtype(at::ScalarType t) { return t == at::kDouble ? at::kDouble : at::kFloat; }

double softmax_scale(const at::Tensor& q, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
}

// The shape, mask and dropout description both kernels share. `bias` (expanded to
// [batch, heads, q_len, kv_len]) and the seed/offset tensors must outlive the launch.
AttentionShape attention_shape(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                               double dropout_p, bool is_causal, std::optional<double> scale,
                               const at::Tensor& seed, const at::Tensor& offset) {
  AttentionShape s{};
  s.dtype = kernel_dtype(q.scalar_type());
  s.batch = q.size(0), s.heads = q.size(1), s.q_len = q.size(2), s.kv_len = k.size(2);
  s.dim = q.size(3), s.v_dim = v.size(3);
  s.kv_batch = k.size(0), s.kv_heads = k.size(1);
  s.scale = softmax_scale(q, scale);
  s.causal = is_causal;
  s.has_bias = bias.defined();
  if (s.has_bias) s.bias = ref_of(bias);
  s.dropout = dropout_p > 0.0;
  s.keep = 1.0 - dropout_p;
  if (s.dropout) {
    s.seed = seed.const_data_ptr<int64_t>();
    s.offset = offset.const_data_ptr<int64_t>();
  }
  return s;
}

// The additive mask broadcast (stride 0, no copy) to the score shape; a boolean mask (a direct call
// of the fused op) becomes 0 / -inf as SDPA converts it.
at::Tensor expanded_bias(const std::optional<at::Tensor>& mask, const at::Tensor& q, const at::Tensor& k) {
  if (!mask.has_value() || !mask->defined()) return {};
  at::Tensor m = *mask;
  if (m.scalar_type() == at::kBool) {
    m = at::zeros(m.sizes(), q.options()).masked_fill_(m.logical_not(), -std::numeric_limits<double>::infinity());
  }
  return m.expand({q.size(0), q.size(1), q.size(2), k.size(2)});
}

// A new tensor of `shape` laid out as `like` is (torch's meta kernel, alloc_with_matching_layout,
// which Inductor plans with): the same strides when the shapes agree, otherwise dense strides in
// `like`'s dimension order (a permuted query gives an equally permuted output).
at::Tensor empty_in_layout_of(const at::Tensor& like, at::IntArrayRef shape) {
  if (like.sizes() == shape) return at::empty_like(like);
  std::array<int64_t, 4> order{0, 1, 2, 3};  // dims, outermost first
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  std::array<int64_t, 4> strides{};
  int64_t step = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = step;
    step *= shape[*it];
  }
  return at::empty_strided(shape, strides, like.options());
}

at::Tensor device_scalar(uint64_t value, const at::Device& device) {
  return at::scalar_tensor(static_cast<int64_t>(value), at::TensorOptions().dtype(at::kLong)).to(device);
}

void check_fits(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& mask,
                double dropout_p, const char* op) {
  const std::string why = unfit_reason(q, k, v, mask, dropout_p, /*gqa_allowed=*/true);
  TORCH_CHECK(why.empty(), op, ": the fused foo kernel cannot take these inputs: ", why,
              " (F.scaled_dot_product_attention takes the math path for them)");
}

}  // namespace

int64_t fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                         const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                         std::optional<double> scale, bool enable_gqa) {
  return choose_backend(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
scaled_dot_product_fused_attention_overrideable(const at::Tensor& query, const at::Tensor& key,
                                                const at::Tensor& value, const std::optional<at::Tensor>& attn_bias,
                                                double dropout_p, bool is_causal, bool return_debug_mask,
                                                std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable";
  check_fits(query, key, value, attn_bias, dropout_p, op);
  TORCH_CHECK(!return_debug_mask, op, ": foo does not return the debug attention mask");
  const int64_t B = query.size(0), H = query.size(1), L = query.size(2), S = key.size(2);
  auto out = empty_in_layout_of(query, {B, H, L, value.size(3)});
  auto lse = at::empty({B, H, L}, query.options().dtype(lse_dtype(query.scalar_type())));
  at::Tensor seed, offset;
  if (dropout_p > 0.0) {
    // One Philox draw per score element, numbered as a contiguous [B, H, L, S] tensor.
    auto* gen = at::get_generator_or_default<foo::runtime::FooGeneratorImpl>(
        std::nullopt, foo::runtime::default_generator(query.device().index()));
    foo::runtime::PhiloxState state;
    {
      std::lock_guard<std::mutex> lock(gen->mutex_);
      state = gen->reserve(static_cast<uint64_t>(B * H * L * S));
    }
    seed = device_scalar(state.seed, query.device());
    offset = device_scalar(state.offset, query.device());
  } else {
    seed = at::empty({}, query.options().dtype(at::kLong));  // 0-d, as the meta kernel says
    offset = at::empty({}, query.options().dtype(at::kLong));
  }
  const at::Tensor bias = expanded_bias(attn_bias, query, key);
  foo::kernels::AttentionForwardArgs args{};
  args.shape = attention_shape(query, key, value, bias, dropout_p, is_causal, scale, seed, offset);
  args.q = ref_of(query), args.k = ref_of(key), args.v = ref_of(value);
  args.out = mutable_ref_of(out);
  args.lse = lse.mutable_data_ptr();
  if (S == 0) {
    out.zero_();  // an empty softmax: the math path's zeros
    lse.fill_(std::numeric_limits<double>::infinity());
  } else {
    FOO_CALL_KERNEL(attention_forward, stream_of(query), args);
  }
  auto empty_long = at::empty({0}, query.options().dtype(at::kLong));
  return {out, lse, empty_long, empty_long, c10::SymInt(L), c10::SymInt(S), seed, offset, at::empty({0}, query.options())};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> scaled_dot_product_fused_attention_overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/, int64_t /*max_q*/,
    int64_t /*max_k*/, double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  const std::optional<at::Tensor> mask = attn_bias.defined() ? std::optional<at::Tensor>(attn_bias) : std::nullopt;
  check_fits(query, key, value, mask, dropout_p, op);
  const int64_t B = query.size(0), H = query.size(1), L = query.size(2), S = key.size(2);
  TORCH_CHECK(grad_out.sizes() == out.sizes() && out.sizes() == at::IntArrayRef({B, H, L, value.size(3)}), op,
              ": grad_out and out must have shape [batch, heads, query length, value head dim]");
  TORCH_CHECK(grad_out.scalar_type() == query.scalar_type() && out.scalar_type() == query.scalar_type(), op,
              ": grad_out and out must have the query's dtype");
  TORCH_CHECK(logsumexp.scalar_type() == lse_dtype(query.scalar_type()) && logsumexp.is_contiguous() &&
                  logsumexp.sizes() == at::IntArrayRef({B, H, L}),
              op, ": logsumexp must be the forward's contiguous [batch, heads, query length] ",
              lse_dtype(query.scalar_type()), " tensor");
  for (const at::Tensor* t : {&grad_out, &out, &logsumexp}) {
    TORCH_CHECK(t->device() == query.device(), op, ": expected all tensors on ", query.device(), ", got ", t->device());
  }
  if (dropout_p > 0.0) {
    TORCH_CHECK(philox_seed.numel() == 1 && philox_offset.numel() == 1 && philox_seed.scalar_type() == at::kLong &&
                    philox_offset.scalar_type() == at::kLong && philox_seed.device() == query.device() &&
                    philox_offset.device() == query.device(),
                op, ": dropout needs the forward's philox_seed and philox_offset (0-d int64 foo tensors)");
  }
  const bool want_bias_grad = grad_input_mask[3] && attn_bias.defined();
  auto dq = at::empty_like(query);
  auto dk = at::empty_like(key);
  auto dv = at::empty_like(value);
  at::Tensor dbias;
  if (want_bias_grad) dbias = at::zeros({B, H, L, S}, query.options());
  if (L == 0 || S == 0 || B == 0 || H == 0) {
    dq.zero_(), dk.zero_(), dv.zero_();
  } else {
    const at::Tensor bias = expanded_bias(mask, query, key);
    auto delta = at::empty({B * H * L}, logsumexp.options());
    foo::kernels::AttentionBackwardArgs args{};
    args.shape = attention_shape(query, key, value, bias, dropout_p, is_causal, scale, philox_seed, philox_offset);
    args.q = ref_of(query), args.k = ref_of(key), args.v = ref_of(value);
    args.out = ref_of(out), args.grad_out = ref_of(grad_out);
    args.lse = logsumexp.const_data_ptr();
    args.delta = delta.mutable_data_ptr();
    args.dq = mutable_ref_of(dq), args.dk = mutable_ref_of(dk), args.dv = mutable_ref_of(dv);
    args.dbias = want_bias_grad ? dbias.mutable_data_ptr() : nullptr;
    FOO_CALL_KERNEL(attention_backward, stream_of(query), args);
  }
  if (want_bias_grad) dbias = at::sum_to(dbias, attn_bias.sizes());
  return {grad_input_mask[0] ? dq : at::Tensor(), grad_input_mask[1] ? dk : at::Tensor(),
          grad_input_mask[2] ? dv : at::Tensor(), dbias};
}

}  // namespace foo::native

namespace at::native {
// What F.scaled_dot_product_attention asks for a foo query (attention.cpp in PyTorch).
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &foo::native::fused_sdp_choice)
}  // namespace at::native
