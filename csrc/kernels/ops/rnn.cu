// Fused LSTM/GRU cells (rnn.h): one thread per (row, hidden unit), reading its gates from the
// row's chunks. Elementwise: no barriers, launched independent.
#include "kernels/core/kernel.h"
#include "kernels/ops/rnn.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename M>
__device__ __forceinline__ M sigmoid(M x) {
  return M(1) / (M(1) + math::exp(-x));
}

// Element c of a bias, or 0 without one.
template <typename T, typename M = opmath_t<T>>
__device__ __forceinline__ M bias_at(const T* bias, int64_t c) {
  return bias != nullptr ? static_cast<M>(bias[c]) : M(0);
}

template <typename T>
__device__ __forceinline__ opmath_t<T> load(const T* p, int64_t i) {
  return static_cast<opmath_t<T>>(p[i]);
}

template <typename T>
__global__ void lstm_forward_kernel(const T* ig, const T* hg, const T* cx, const T* ib, const T* hb, T* hy, T* cy,
                                    T* ws, int64_t batch, int64_t hidden) {
  using M = opmath_t<T>;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= batch * hidden) return;
  const int64_t b = e / hidden, u = e % hidden, row = b * 4 * hidden;
  M gate[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int64_t col = c * hidden + u;
    gate[c] = load(ig, row + col) + load(hg, row + col) + bias_at(ib, col) + bias_at(hb, col);
  }
  const M i = sigmoid(gate[0]), f = sigmoid(gate[1]), g = math::tanh(gate[2]), o = sigmoid(gate[3]);
  const M c_new = f * load(cx, e) + i * g;
  cy[e] = cast<T>(c_new);
  hy[e] = cast<T>(o * math::tanh(c_new));
  ws[row + u] = cast<T>(i);
  ws[row + hidden + u] = cast<T>(f);
  ws[row + 2 * hidden + u] = cast<T>(g);
  ws[row + 3 * hidden + u] = cast<T>(o);
}

template <typename T>
__global__ void lstm_backward_kernel(const T* ghy, const T* gcy, const T* cx, const T* cy, const T* ws, T* gg_out,
                                     T* gcx_out, int64_t batch, int64_t hidden) {
  using M = opmath_t<T>;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= batch * hidden) return;
  const int64_t b = e / hidden, u = e % hidden, row = b * 4 * hidden;
  const M i = load(ws, row + u), f = load(ws, row + hidden + u), g = load(ws, row + 2 * hidden + u),
          o = load(ws, row + 3 * hidden + u);
  const M dh = ghy != nullptr ? load(ghy, e) : M(0);
  const M tanh_c = math::tanh(load(cy, e));
  const M dc = dh * o * (M(1) - tanh_c * tanh_c) + (gcy != nullptr ? load(gcy, e) : M(0));
  gg_out[row + u] = cast<T>(dc * g * i * (M(1) - i));
  gg_out[row + hidden + u] = cast<T>(dc * load(cx, e) * f * (M(1) - f));
  gg_out[row + 2 * hidden + u] = cast<T>(dc * i * (M(1) - g * g));
  gg_out[row + 3 * hidden + u] = cast<T>(dh * tanh_c * o * (M(1) - o));
  gcx_out[e] = cast<T>(dc * f);
}

template <typename T>
__global__ void gru_forward_kernel(const T* ig, const T* hg, const T* hx, const T* ib, const T* hb, T* hy, T* ws,
                                   int64_t batch, int64_t hidden) {
  using M = opmath_t<T>;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= batch * hidden) return;
  const int64_t b = e / hidden, u = e % hidden, row = b * 3 * hidden;
  M in_gate[3], hid_gate[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int64_t col = c * hidden + u;
    in_gate[c] = load(ig, row + col) + bias_at(ib, col);
    hid_gate[c] = load(hg, row + col) + bias_at(hb, col);
  }
  const M r = sigmoid(in_gate[0] + hid_gate[0]);
  const M z = sigmoid(in_gate[1] + hid_gate[1]);
  const M n = math::tanh(in_gate[2] + r * hid_gate[2]);
  const M h = load(hx, e);
  hy[e] = cast<T>(n + z * (h - n));
  const int64_t wrow = b * 5 * hidden;
  ws[wrow + u] = cast<T>(r);
  ws[wrow + hidden + u] = cast<T>(z);
  ws[wrow + 2 * hidden + u] = cast<T>(n);
  ws[wrow + 3 * hidden + u] = cast<T>(h);
  ws[wrow + 4 * hidden + u] = cast<T>(hid_gate[2]);
}

template <typename T>
__global__ void gru_backward_kernel(const T* ghy, const T* ws, T* gi, T* gh, T* ghx, int64_t batch, int64_t hidden) {
  using M = opmath_t<T>;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= batch * hidden) return;
  const int64_t b = e / hidden, u = e % hidden, row = b * 3 * hidden, wrow = b * 5 * hidden;
  const M r = load(ws, wrow + u), z = load(ws, wrow + hidden + u), n = load(ws, wrow + 2 * hidden + u),
          h = load(ws, wrow + 3 * hidden + u), hn = load(ws, wrow + 4 * hidden + u);
  const M dh = load(ghy, e);
  const M dz = dh * (h - n) * z * (M(1) - z);
  const M dn = dh * (M(1) - z) * (M(1) - n * n);
  const M dr = dn * hn * r * (M(1) - r);
  gi[row + u] = cast<T>(dr);
  gi[row + hidden + u] = cast<T>(dz);
  gi[row + 2 * hidden + u] = cast<T>(dn);
  gh[row + u] = cast<T>(dr);
  gh[row + hidden + u] = cast<T>(dz);
  gh[row + 2 * hidden + u] = cast<T>(dn * r);
  ghx[e] = cast<T>(dh * z);
}

}  // namespace

void lstm_cell_forward(Stream stream, const LstmCellArgs& a) {
  const int64_t n = a.batch * a.hidden;
  if (n == 0) return;
  dispatch<kFloatingTypes>(a.dtype, "foo::lstm_cell_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("foo::lstm_cell_forward", lstm_forward_kernel<T>, blocks_for(n), dim3(256), stream,
                       static_cast<const T*>(a.input_gates), static_cast<const T*>(a.hidden_gates),
                       static_cast<const T*>(a.cx), static_cast<const T*>(a.input_bias),
                       static_cast<const T*>(a.hidden_bias), static_cast<T*>(a.hy), static_cast<T*>(a.cy),
                       static_cast<T*>(a.workspace), a.batch, a.hidden);
  });
}

void lstm_cell_backward(Stream stream, const LstmCellBackwardArgs& a) {
  const int64_t n = a.batch * a.hidden;
  if (n == 0) return;
  dispatch<kFloatingTypes>(a.dtype, "foo::lstm_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("foo::lstm_cell_backward", lstm_backward_kernel<T>, blocks_for(n), dim3(256), stream,
                       static_cast<const T*>(a.grad_hy), static_cast<const T*>(a.grad_cy),
                       static_cast<const T*>(a.cx), static_cast<const T*>(a.cy), static_cast<const T*>(a.workspace),
                       static_cast<T*>(a.grad_gates), static_cast<T*>(a.grad_cx), a.batch, a.hidden);
  });
}

void gru_cell_forward(Stream stream, const GruCellArgs& a) {
  const int64_t n = a.batch * a.hidden;
  if (n == 0) return;
  dispatch<kFloatingTypes>(a.dtype, "foo::gru_cell_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("foo::gru_cell_forward", gru_forward_kernel<T>, blocks_for(n), dim3(256), stream,
                       static_cast<const T*>(a.input_gates), static_cast<const T*>(a.hidden_gates),
                       static_cast<const T*>(a.hx), static_cast<const T*>(a.input_bias),
                       static_cast<const T*>(a.hidden_bias), static_cast<T*>(a.hy), static_cast<T*>(a.workspace),
                       a.batch, a.hidden);
  });
}

void gru_cell_backward(Stream stream, const GruCellBackwardArgs& a) {
  const int64_t n = a.batch * a.hidden;
  if (n == 0) return;
  dispatch<kFloatingTypes>(a.dtype, "foo::gru_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_independent("foo::gru_cell_backward", gru_backward_kernel<T>, blocks_for(n), dim3(256), stream,
                       static_cast<const T*>(a.grad_hy), static_cast<const T*>(a.workspace),
                       static_cast<T*>(a.grad_input_gates), static_cast<T*>(a.grad_hidden_gates),
                       static_cast<T*>(a.grad_hx), a.batch, a.hidden);
  });
}

}  // namespace foo::kernels::FOO_TARGET
