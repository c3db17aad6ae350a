#pragma once
// Fused LSTM and GRU cells (rnn.cu): the pointwise part of one time step, after the two gate
// matmuls, as CUDA's _thnn_fused_*_cell kernels do. All tensors contiguous, of element type
// `dtype` (float32, float64, float16, bfloat16), computed in opmath (float for 16-bit types);
// B rows of H hidden units.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

// gates = input_gates + hidden_gates (+ input_bias + hidden_bias), chunks i, f, g, o of H each:
// cy = sigmoid(f) * cx + sigmoid(i) * tanh(g), hy = sigmoid(o) * tanh(cy);
// workspace [B, 4H] keeps the activated gates for the backward.
struct LstmCellArgs {
  DType dtype;
  int64_t batch, hidden;
  const void* input_gates;
  const void* hidden_gates;
  const void* cx;
  const void* input_bias;   // [4H] or null
  const void* hidden_bias;  // [4H] or null
  void* hy;
  void* cy;
  void* workspace;
};

// grad_gates [B, 4H] (of the pre-activation gates) and grad_cx [B, H] from grad_hy / grad_cy (each
// may be null: zero).
struct LstmCellBackwardArgs {
  DType dtype;
  int64_t batch, hidden;
  const void* grad_hy;
  const void* grad_cy;
  const void* cx;
  const void* cy;
  const void* workspace;
  void* grad_gates;
  void* grad_cx;
};

// Chunks r, z, n of H each: r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r * hn),
// hy = n + z * (hx - n) (biases added to their gates when given); workspace [B, 5H] = r, z, n, hx, hn.
struct GruCellArgs {
  DType dtype;
  int64_t batch, hidden;
  const void* input_gates;
  const void* hidden_gates;
  const void* hx;
  const void* input_bias;   // [3H] or null
  const void* hidden_bias;  // [3H] or null
  void* hy;
  void* workspace;
};

// grad_input_gates and grad_hidden_gates [B, 3H], grad_hx [B, H] from grad_hy.
struct GruCellBackwardArgs {
  DType dtype;
  int64_t batch, hidden;
  const void* grad_hy;
  const void* workspace;
  void* grad_input_gates;
  void* grad_hidden_gates;
  void* grad_hx;
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, lstm_cell_forward, (Stream stream, const LstmCellArgs& args))
FOO_DECLARE_KERNEL(void, lstm_cell_backward, (Stream stream, const LstmCellBackwardArgs& args))
FOO_DECLARE_KERNEL(void, gru_cell_forward, (Stream stream, const GruCellArgs& args))
FOO_DECLARE_KERNEL(void, gru_cell_backward, (Stream stream, const GruCellBackwardArgs& args))
