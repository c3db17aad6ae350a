#pragma once
// Discrete Fourier transforms (fft.cu): one 1-D transform along one dim of a batch of lines per
// launch; a multi-dim FFT is a sequence of such passes (aten/ops/fft.cpp), as pocketfft's and
// cuFFT's plans are. Mixed radix 2/3/4/5/7 Stockham autosort for lengths whose factors are all
// <= 7, Bluestein (chirp-z through a power-of-two transform of length >= 2n - 1) for the rest.
// One block per line (grid-stride over the lines), the line in shared memory (2 * fft_len
// elements up to 48 KiB) or a global scratch beyond. complex64 and complex128, twiddles from a double table the host
// computes per plan.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int kFftMaxFactors = 64;

// A length-n DFT of every line: line l = a * inner + b (a < lines / inner, b < inner) reads its
// element i at in + a * in_outer_stride + b * in_inner_stride + i * in_stride (strides in
// elements of the input type) and writes element k < out_len likewise at out. forward:
// X_k = sum_j x_j exp(-2 pi i jk / n); else the + sign. The result is multiplied by scale.
//   in_real: the input is real (float/double of dtype's precision), imaginary parts 0;
//   in_hermitian: the input holds in_len entries of a Hermitian spectrum: x_j for j <= n / 2 is
//     in[j], x_j for j > n / 2 is conj(in[n - j]) (an index >= in_len reads 0);
//   otherwise in_len >= n entries are read as they are;
//   out_real: only the real part is written (to a real output).
// Plan: fft_len is n (factors: its factorisation into 2, 3, 4, 5, 7) or, for Bluestein, a power
// of two >= 2n - 1 (factors: its factorisation); twiddles[t] = exp(-2 pi i t / fft_len), t <
// fft_len; for Bluestein chirp[k] = exp(-pi i (k^2 mod 2n) / n), k < n, and chirp_fft the
// forward transform of length fft_len of b (b_k = conj(chirp[|k|]) for |k| < n, k taken mod
// fft_len; 0 elsewhere). scratch: blocks * 2 * fft_len elements of dtype, blocks the
// launcher's grid (fft_blocks()), when fft_shared_bytes() is 0 (else unused: shared memory).
struct FftArgs {
  DType dtype;  // Complex64 or Complex128
  int64_t lines, inner, n;
  const void* in;
  int64_t in_outer_stride, in_inner_stride, in_stride, in_len;
  bool in_real, in_hermitian;
  void* out;
  int64_t out_outer_stride, out_inner_stride, out_stride, out_len;
  bool out_real;
  bool forward;
  double scale;
  int64_t fft_len;
  int nfactors;
  int factors[kFftMaxFactors];
  const complex_t<double>* twiddles;
  const complex_t<double>* chirp;
  const complex_t<double>* chirp_fft;
  void* scratch;
};

// Dynamic shared memory of a block of fft_1d: the line's 2 * fft_len elements when they fit in
// 48 KiB (the default limit; 3072 complex64 / 1536 complex128), else 0 and the line lives in the
// global scratch (args.scratch, needed only then).
FOO_HD int64_t fft_shared_bytes(int64_t fft_len, int64_t elem_size) {
  const int64_t bytes = 2 * fft_len * elem_size;
  return bytes <= 48 * 1024 ? bytes : 0;
}

// The grid of fft_1d for `lines` lines of fft_len elements of elem_size bytes: at most as many
// blocks as keep the scratch under 64 MiB (at least one).
inline int64_t fft_blocks(int64_t lines, int64_t fft_len, int64_t elem_size) {
  int64_t cap = (int64_t(64) << 20) / (2 * fft_len * elem_size);
  if (cap < 1) cap = 1;
  if (cap > 4096) cap = 4096;
  return lines < 1 ? 1 : lines < cap ? lines : cap;
}

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, fft_1d, (Stream stream, const FftArgs& args))
