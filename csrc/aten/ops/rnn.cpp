// Fused LSTM/GRU cells (kernels/ops/rnn.cu): what ATen's LSTMCell/GRUCell call once per time step for
// an accelerator input (nn.LSTM, nn.GRU, packed or not), after the two gate matmuls. These ops
// have no CPU kernel, so without them nn.LSTM/nn.GRU cannot run on foo at all. The backward ops
// are what autograd calls when GradMode is off during backward (an ordinary .backward()).
#include <ATen/ATen.h>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/rnn.h"
#include "native/thnn_fused_gru_cell.h"
#include "native/thnn_fused_gru_cell_backward.h"
#include "native/thnn_fused_lstm_cell.h"
#include "native/thnn_fused_lstm_cell_backward_impl.h"
#include "runtime/stream.h"

namespace foo::native {
namespace {

bool is_rnn_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// A [rows, cols] operand of `like`'s dtype and device, made contiguous for the kernel.
at::Tensor checked(const at::Tensor& t, const at::Tensor& like, at::IntArrayRef sizes, const char* op, const char* name) {
  TORCH_CHECK(t.sizes() == sizes, op, ": expected ", name, " of shape ", sizes, ", got ", t.sizes());
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), op, ": expected ", name, " of dtype ", like.scalar_type(),
              ", got ", t.scalar_type());
  TORCH_CHECK(t.device() == like.device(), op, ": expected ", name, " on ", like.device(), ", got ", t.device());
  return t.contiguous();
}

// Rows and hidden units of gates [B, chunks * H], checked as CUDA's fused cells check them.
std::pair<int64_t, int64_t> gate_geometry(const at::Tensor& gates, int64_t chunks, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_rnn_dtype(gates.scalar_type()), op, ": foo has no kernel for dtype ",
                              gates.scalar_type(), " (float32, float64, float16, bfloat16)");
  TORCH_CHECK(gates.dim() == 2 && gates.size(1) % chunks == 0, op, ": expected gates of shape [batch, ", chunks,
              " * hidden], got ", gates.sizes());
  return {gates.size(0), gates.size(1) / chunks};
}

at::Tensor optional_bias(const std::optional<at::Tensor>& bias, const at::Tensor& gates, const char* op,
                         const char* name) {
  if (!bias.has_value() || !bias->defined()) return {};
  return checked(*bias, gates, {gates.size(1)}, op, name);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell(const at::Tensor& input_gates,
                                                                    const at::Tensor& hidden_gates,
                                                                    const at::Tensor& cx,
                                                                    const std::optional<at::Tensor>& input_bias,
                                                                    const std::optional<at::Tensor>& hidden_bias) {
  constexpr const char* op = "_thnn_fused_lstm_cell";
  const auto [batch, hidden] = gate_geometry(input_gates, 4, op);
  const auto ig = input_gates.contiguous();
  const auto hg = checked(hidden_gates, input_gates, input_gates.sizes(), op, "hidden_gates");
  const auto c = checked(cx, input_gates, {batch, hidden}, op, "cx");
  const auto ib = optional_bias(input_bias, input_gates, op, "input_bias");
  const auto hb = optional_bias(hidden_bias, input_gates, op, "hidden_bias");
  TORCH_CHECK(ib.defined() == hb.defined(), op, ": expected both biases or neither");
  auto hy = at::empty({batch, hidden}, input_gates.options());
  auto cy = at::empty({batch, hidden}, input_gates.options());
  auto workspace = at::empty({batch, 4 * hidden}, input_gates.options());
  foo::kernels::LstmCellArgs args{kernel_dtype(input_gates.scalar_type()), batch, hidden, ig.const_data_ptr(),
                                  hg.const_data_ptr(), c.const_data_ptr(), ptr_or_null(ib), ptr_or_null(hb),
                                  hy.mutable_data_ptr(), cy.mutable_data_ptr(), workspace.mutable_data_ptr()};
  FOO_CALL_KERNEL(lstm_cell_forward, stream_of(input_gates), args);
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell_backward_impl(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  constexpr const char* op = "_thnn_fused_lstm_cell_backward_impl";
  const bool has_hy = grad_hy.has_value() && grad_hy->defined();
  const bool has_cy = grad_cy.has_value() && grad_cy->defined();
  if (!has_hy && !has_cy) return {};  // nothing flows back (CUDA's answer too)
  const auto [batch, hidden] = gate_geometry(workspace, 4, op);
  const auto c = checked(cx, workspace, {batch, hidden}, op, "cx");
  const auto c_new = checked(cy, workspace, {batch, hidden}, op, "cy");
  const auto ghy = has_hy ? checked(*grad_hy, workspace, {batch, hidden}, op, "grad_hy") : at::Tensor();
  const auto gcy = has_cy ? checked(*grad_cy, workspace, {batch, hidden}, op, "grad_cy") : at::Tensor();
  const auto ws = workspace.contiguous();
  auto grad_gates = at::empty({batch, 4 * hidden}, workspace.options());
  auto grad_cx = at::empty({batch, hidden}, workspace.options());
  foo::kernels::LstmCellBackwardArgs args{kernel_dtype(workspace.scalar_type()), batch, hidden, ptr_or_null(ghy),
                                          ptr_or_null(gcy), c.const_data_ptr(), c_new.const_data_ptr(),
                                          ws.const_data_ptr(), grad_gates.mutable_data_ptr(),
                                          grad_cx.mutable_data_ptr()};
  FOO_CALL_KERNEL(lstm_cell_backward, stream_of(workspace), args);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> thnn_fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                       const at::Tensor& hx,
                                                       const std::optional<at::Tensor>& input_bias,
                                                       const std::optional<at::Tensor>& hidden_bias) {
  constexpr const char* op = "_thnn_fused_gru_cell";
  const auto [batch, hidden] = gate_geometry(input_gates, 3, op);
  const auto ig = input_gates.contiguous();
  const auto hg = checked(hidden_gates, input_gates, input_gates.sizes(), op, "hidden_gates");
  const auto h = checked(hx, input_gates, {batch, hidden}, op, "hx");
  const auto ib = optional_bias(input_bias, input_gates, op, "input_bias");
  const auto hb = optional_bias(hidden_bias, input_gates, op, "hidden_bias");
  TORCH_CHECK(ib.defined() == hb.defined(), op, ": expected both biases or neither");
  auto hy = at::empty({batch, hidden}, input_gates.options());
  auto workspace = at::empty({batch, 5 * hidden}, input_gates.options());
  foo::kernels::GruCellArgs args{kernel_dtype(input_gates.scalar_type()), batch, hidden, ig.const_data_ptr(),
                                 hg.const_data_ptr(), h.const_data_ptr(), ptr_or_null(ib), ptr_or_null(hb),
                                 hy.mutable_data_ptr(), workspace.mutable_data_ptr()};
  FOO_CALL_KERNEL(gru_cell_forward, stream_of(input_gates), args);
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> thnn_fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  constexpr const char* op = "_thnn_fused_gru_cell_backward";
  const auto [batch, hidden] = gate_geometry(workspace, 5, op);
  const auto ghy = checked(grad_hy, workspace, {batch, hidden}, op, "grad_hy");
  const auto ws = workspace.contiguous();
  auto grad_input_gates = at::empty({batch, 3 * hidden}, workspace.options());
  auto grad_hidden_gates = at::empty({batch, 3 * hidden}, workspace.options());
  auto grad_hx = at::empty({batch, hidden}, workspace.options());
  foo::kernels::GruCellBackwardArgs args{kernel_dtype(workspace.scalar_type()), batch, hidden, ghy.const_data_ptr(),
                                         ws.const_data_ptr(), grad_input_gates.mutable_data_ptr(),
                                         grad_hidden_gates.mutable_data_ptr(), grad_hx.mutable_data_ptr()};
  FOO_CALL_KERNEL(gru_cell_backward, stream_of(workspace), args);
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace foo::native
