#pragma once
// Fused scaled-dot-product attention (attention.cu): flash-attention-style tiles, online softmax,
// no score matrix in memory; the backward recomputes the scores from the saved logsumexp.
//
//   s[i, j] = scale * q[i] . k[j] + bias[i, j]      (-inf where causal and j > i)
//   p[i, j] = softmax_j(s[i, j]),  lse[i] = log sum_j exp(s[i, j])
//   out[i]  = sum_j p[i, j] * z[i, j] / keep * v[j]  (z: dropout's keep mask, 1 without dropout)
//
// Query (b, h) reads key/value (kv_batch == 1 ? 0 : b, h / (heads / kv_heads)): grouped-query
// attention and a key/value batch of 1 both broadcast. Element types: float32, float64, float16,
// bfloat16 (dtype), computed in opmath (float for 16-bit types); head dims up to kMaxHeadDim.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int64_t kAttentionMaxHeadDim = 128;

// Element (b, h, row, col) of a 4-d operand at data[b * sb + h * sh + row * sr + col * sc]
// (strides in elements; 0 broadcasts, e.g. a [L, S] mask over batch and heads).
struct AttentionRef {
  const void* data;
  int64_t sb, sh, sr, sc;
};
struct MutableAttentionRef {
  void* data;
  int64_t sb, sh, sr, sc;
};

struct AttentionShape {
  DType dtype;
  int64_t batch, heads, q_len, kv_len, dim, v_dim;  // dim: of q and k; v_dim: of v and out
  int64_t kv_batch, kv_heads;                          // kv_batch is batch or 1; heads % kv_heads == 0
  double scale;
  bool causal;  // key j > query i is masked (top-left aligned, as torch's math path)
  bool has_bias;
  AttentionRef bias;  // additive, of dtype; broadcast to [batch, heads, q_len, kv_len]
  // Dropout: element (b, h, i, j) (index ((b * heads + h) * q_len + i) * kv_len + j) is kept when
  // its Philox uniform (kernels/core/philox.h) under (*seed, *offset) is < keep; seed and offset are
  // device int64s (so the backward needs no host read of them).
  bool dropout;
  double keep;
  const int64_t* seed;
  const int64_t* offset;
};

// out: [batch, heads, q_len, v_dim]; lse: [batch, heads, q_len] contiguous, of the opmath type
// (float32 for 16-bit dtypes). A row whose scores are all -inf (fully masked) gives zeros and
// lse = +inf, as the math path's _safe_softmax (and flash attention's lse) do.
struct AttentionForwardArgs {
  AttentionShape shape;
  AttentionRef q, k, v;
  MutableAttentionRef out;
  void* lse;
};

// Gradients of AttentionForwardArgs given out and lse. dq, dk, dv take the shapes of q, k, v (dk
// and dv sum over the query heads and batches that share a key/value head). dbias (or null):
// contiguous [batch, heads, q_len, kv_len] of dtype, the gradient of the scores, zero where the
// causal mask skips whole tiles (the caller zero-fills it). delta: workspace of batch * heads *
// q_len opmath values.
struct AttentionBackwardArgs {
  AttentionShape shape;
  AttentionRef q, k, v, out, grad_out;
  const void* lse;
  void* delta;
  MutableAttentionRef dq, dk, dv;
  void* dbias;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, attention_forward, (Stream stream, const AttentionForwardArgs& args))
FOO_DECLARE_KERNEL(void, attention_backward, (Stream stream, const AttentionBackwardArgs& args))
