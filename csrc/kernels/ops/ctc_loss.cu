// ctc_loss (ctc_loss.h). Per batch element, one block: alpha (forward) and beta (backward) are
// computed row by row in time, the threads splitting the extended target positions of a row and a
// barrier between rows (row t reads only row t - 1, or t + 1 for beta). Every sum of exponentials
// is the CPU's expression, operand for operand, so results agree with the CPU's to rounding of
// exp/log. The gradient's sum over the positions s of one label (eq. 16) runs, per (t, label), in
// the CPU's order (s descending) with its log-add, by one thread each: over every s for the blank,
// over the label's own target positions (a chain built once per element) for the others, so a
// row costs O(labels + positions), not O(labels * positions).
#include <cmath>

#include "kernels/ops/ctc_loss.h"
#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr uint32_t kCtcTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);
constexpr uint32_t kTargetTypes = dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
constexpr unsigned kThreads = 256;

// The label at extended position s: blank at even s, target s / 2 at odd s.
template <typename I>
__device__ __forceinline__ int64_t target_prime(const I* targets, int64_t offset, int64_t stride, int64_t s,
                                                int64_t blank) {
  return s % 2 == 0 ? blank : static_cast<int64_t>(targets[offset + stride * (s / 2)]);
}

// log_probs[t, b, c]; NaN for a label outside [0, num_labels) (the CPU reads out of bounds).
template <typename T>
__device__ __forceinline__ T log_prob(const CtcLossArgs& a, const T* lp, int64_t t, int64_t b, int64_t c) {
  if (c < 0 || c >= a.num_labels) return static_cast<T>(NAN);
  return lp[t * a.lp_stride_t + b * a.lp_stride_b + c * a.lp_stride_c];
}

// log(exp(x1 - m) + exp(x2 - m) + exp(x3 - m)) + m with m the largest (0 when all are -inf), the
// CPU's eq. (6) and (10) without the log_prob.
template <typename T>
__device__ __forceinline__ T log_sum3(T x1, T x2, T x3) {
  T m = x1;
  if (x2 > m) m = x2;
  if (x3 > m) m = x3;
  if (m == -static_cast<T>(INFINITY)) m = T(0);
  return math::log(math::exp(x1 - m) + math::exp(x2 - m) + math::exp(x3 - m)) + m;
}

// acc "log+=" x, as the CPU's gradient collects alpha * beta.
template <typename T>
__device__ __forceinline__ void log_add(T& acc, T x) {
  if (acc == -static_cast<T>(INFINITY)) {
    acc = x;
  } else {
    const T m = acc < x ? x : acc;  // std::max(acc, x)
    acc = math::log(math::exp(acc - m) + math::exp(x - m)) + m;
  }
}

template <typename T, typename I>
__global__ void forward_kernel(CtcLossArgs a) {
  const T neginf = -static_cast<T>(INFINITY);
  const T* lp = static_cast<const T*>(a.log_probs);
  const I* targets = static_cast<const I*>(a.targets);
  T* log_alpha = static_cast<T*>(a.log_alpha);
  T* nll = static_cast<T*>(a.neg_log_likelihood);
  const int64_t S = a.la_positions, T_max = a.max_input_length;
  for (int64_t b = blockIdx.x; b < a.batch_size; b += gridDim.x) {  // uniform over the block
    const int64_t input_length = a.lengths[b], target_length = a.lengths[a.batch_size + b];
    const int64_t tg_offset = a.lengths[2 * a.batch_size + b];
    T* la = log_alpha + b * T_max * S;
    __syncthreads();  // the previous element's last reads are done
    if (input_length == 0) {
      for (int64_t i = threadIdx.x; i < T_max * S; i += blockDim.x) la[i] = neginf;
      if (threadIdx.x == 0) nll[b] = -(target_length == 0 ? T(0) : neginf);
      continue;
    }
    // Row 0: blank, then the first label (the equations for alpha_1 above eq. 6).
    for (int64_t s = threadIdx.x; s < S; s += blockDim.x) {
      T v = neginf;
      if (s == 0) {
        v = log_prob(a, lp, 0, b, a.blank);
      } else if (s == 1 && target_length > 0) {
        v = log_prob(a, lp, 0, b, target_prime(targets, tg_offset, a.target_stride, 1, a.blank));
      }
      la[s] = v;
    }
    for (int64_t t = 1; t < T_max; ++t) {
      __syncthreads();  // row t - 1 is written
      for (int64_t s = threadIdx.x; s < S; s += blockDim.x) {
        T v = neginf;
        if (t < input_length && s < 2 * target_length + 1) {
          const int64_t c = target_prime(targets, tg_offset, a.target_stride, s, a.blank);
          const T* prev = la + (t - 1) * S;
          const T la1 = prev[s];
          const T la2 = s > 0 ? prev[s - 1] : neginf;
          const bool three = s > 1 && target_prime(targets, tg_offset, a.target_stride, s - 2, a.blank) != c;
          const T la3 = three ? prev[s - 2] : neginf;
          v = log_sum3(la1, la2, la3) + log_prob(a, lp, t, b, c);
        }
        la[t * S + s] = v;
      }
    }
    __syncthreads();
    // The likelihood: the last two alphas (eq. 8), the last one alone for an empty target.
    if (threadIdx.x == 0) {
      const T* last = la + (input_length - 1) * S;
      if (target_length == 0) {
        nll[b] = -last[0];
      } else {
        const T l1 = last[2 * target_length], l2 = last[2 * target_length - 1];
        T m = l1 < l2 ? l2 : l1;  // std::max(l1, l2)
        m = m == neginf ? T(0) : m;
        nll[b] = -(math::log(math::exp(l1 - m) + math::exp(l2 - m)) + m);
      }
    }
  }
}

template <typename T, typename I>
__global__ void backward_kernel(CtcLossArgs a) {
  const T neginf = -static_cast<T>(INFINITY);
  const T* lp = static_cast<const T*>(a.log_probs);
  const I* targets = static_cast<const I*>(a.targets);
  const T* log_alpha = static_cast<const T*>(a.log_alpha);
  const T* nll_in = static_cast<const T*>(a.neg_log_likelihood);
  const T* grad_out = static_cast<const T*>(a.grad_out);
  T* log_beta = static_cast<T*>(a.log_beta);
  T* grad = static_cast<T*>(a.grad);
  const int64_t S = a.la_positions, T_max = a.max_input_length, C = a.num_labels, N = a.batch_size;
  for (int64_t b = blockIdx.x; b < N; b += gridDim.x) {  // uniform over the block
    const T nll = nll_in[b];
    const int64_t input_length = a.lengths[b], target_length = a.lengths[N + b];
    const int64_t tg_offset = a.lengths[2 * N + b];
    const T* la = log_alpha + b * T_max * S;
    T* lb = log_beta + b * T_max * S;
    __syncthreads();
    if (a.zero_infinity && nll == static_cast<T>(INFINITY)) {
      for (int64_t i = threadIdx.x; i < T_max * C; i += blockDim.x) grad[((i / C) * N + b) * C + i % C] = T(0);
      continue;
    }
    // Beta's last row (before eq. 10): the final blank and the last label.
    if (input_length > 0) {
      const int64_t t = input_length - 1;
      for (int64_t s = threadIdx.x; s < S; s += blockDim.x) {
        T v = neginf;
        if (s == 2 * target_length) v = log_prob(a, lp, t, b, a.blank);
        else if (target_length > 0 && s == 2 * target_length - 1)
          v = log_prob(a, lp, t, b, target_prime(targets, tg_offset, a.target_stride, s, a.blank));
        lb[t * S + s] = v;
      }
    }
    // Eq. (10) and (11), backwards in time.
    for (int64_t t = input_length - 2; t >= 0; --t) {
      __syncthreads();  // row t + 1 is written
      for (int64_t s = threadIdx.x; s < 2 * target_length + 1; s += blockDim.x) {
        const int64_t c = target_prime(targets, tg_offset, a.target_stride, s, a.blank);
        const T* next = lb + (t + 1) * S;
        const T lb1 = next[s];
        const T lb2 = s < 2 * target_length ? next[s + 1] : neginf;
        const bool three = s < 2 * target_length - 1 &&
                           target_prime(targets, tg_offset, a.target_stride, s + 2, a.blank) != c;
        const T lb3 = three ? next[s + 2] : neginf;
        lb[t * S + s] = log_sum3(lb1, lb2, lb3) + log_prob(a, lp, t, b, c);
      }
    }
    // Where each label occurs in the target: last[c] the last position k with target k == c (-1:
    // none), prev[k] the one before k with the same label.
    int64_t* last = a.label_scratch + b * (C + S);
    int64_t* prev = last + C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) last[c] = -1;
    __syncthreads();  // all of beta is written, `last` is cleared
    if (threadIdx.x == 0) {
      for (int64_t k = 0; k < target_length; ++k) {
        const int64_t c = target_prime(targets, tg_offset, a.target_stride, 2 * k + 1, a.blank);
        if (c < 0 || c >= C) continue;  // never collected (the CPU reads out of bounds)
        prev[k] = last[c];
        last[c] = k;
      }
    }
    __syncthreads();
    const T gr = grad_out[b * a.grad_out_stride];
    for (int64_t i = threadIdx.x; i < T_max * C; i += blockDim.x) {
      const int64_t t = i / C, c = i % C;
      T& out = grad[(t * N + b) * C + c];
      if (t >= input_length) {
        out = T(0);
        continue;
      }
      // log(sum of alpha beta over the positions of label c) (eq. 16), as the CPU collects it.
      T lcab = neginf;
      if (t == input_length - 1) {
        // Only the last two positions of beta's last row are set; the CPU assigns them.
        if (c == a.blank) lcab = la[t * S + 2 * target_length] + lb[t * S + 2 * target_length];
        if (target_length > 0 && c == target_prime(targets, tg_offset, a.target_stride, 2 * target_length - 1, a.blank))
          lcab = la[t * S + 2 * target_length - 1] + lb[t * S + 2 * target_length - 1];
      } else if (c == a.blank) {
        // Every position: even ones, and odd ones should a target be the blank (as the CPU).
        for (int64_t s = 2 * target_length; s >= 0; --s) {
          if (target_prime(targets, tg_offset, a.target_stride, s, a.blank) == c) {
            log_add(lcab, la[t * S + s] + lb[t * S + s]);
          }
        }
      } else {
        for (int64_t k = last[c]; k >= 0; k = prev[k]) log_add(lcab, la[t * S + 2 * k + 1] + lb[t * S + 2 * k + 1]);
      }
      const T p = log_prob(a, lp, t, b, c);
      out = (math::exp(p) - math::exp(lcab + nll - p)) * gr;
    }
  }
}

template <typename F>
void dispatch_both(const CtcLossArgs& a, F&& f) {
  dispatch<kCtcTypes>(a.dtype, "ctc_loss", [&](auto tag) {
    dispatch<kTargetTypes>(a.target_dtype, "ctc_loss", [&](auto itag) { f(tag, itag); });
  });
}

}  // namespace

void ctc_loss_forward(Stream stream, const CtcLossArgs& a) {
  if (a.batch_size == 0) return;  // with no time steps the kernel still writes the losses
  dispatch_both(a, [&](auto tag, auto itag) {
    using T = typename decltype(tag)::type;
    using I = typename decltype(itag)::type;
    launch("ctc_loss", forward_kernel<T, I>, capped_grid(a.batch_size), dim3(threads_for(a.la_positions, kThreads)),
           0, stream, a);
  });
}

void ctc_loss_backward(Stream stream, const CtcLossArgs& a) {
  if (a.batch_size == 0 || a.max_input_length == 0 || a.num_labels == 0) return;
  dispatch_both(a, [&](auto tag, auto itag) {
    using T = typename decltype(tag)::type;
    using I = typename decltype(itag)::type;
    // Enough threads for the gradient's (t, label) pairs too.
    const int64_t work = a.la_positions > a.num_labels ? a.la_positions : a.num_labels;
    launch("ctc_loss_backward", backward_kernel<T, I>, capped_grid(a.batch_size), dim3(threads_for(work, kThreads)),
           0, stream, a);
  });
}

}  // namespace foo::kernels::FOO_TARGET
