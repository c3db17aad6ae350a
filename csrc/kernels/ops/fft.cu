// Discrete Fourier transforms (fft.h): a block per line, grid-stride over the lines. The line is
// loaded into the block's shared memory (up to 48 KiB) or global scratch, transformed by Stockham autosort stages (mixed radix
// 2/3/4/5/7, ping-pong between the scratch's two halves, one __syncthreads per stage), and
// stored. Bluestein's algorithm for other lengths: the chirp-multiplied line is convolved with
// the chirp by two power-of-two transforms (the chirp's own transform comes precomputed). An
// inverse transform is conj(forward(conj(x))). Twiddles come from the host's double table;
// complex64 computes in float, complex128 in double.
#include "kernels/core/dtype.h"
#include "kernels/ops/fft.h"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr uint32_t kFftTypes = kComplexTypes;
constexpr int kMaxRadix = 7;

template <typename T>
__device__ __forceinline__ T twiddle(const complex_t<double>* table, int64_t t) {
  using P = real_of_t<T>;
  const complex_t<double> w = table[t];
  return T(static_cast<P>(w.re), static_cast<P>(w.im));
}

// Element i of the line starting at `in`, as the forward transform reads it.
template <typename T>
__device__ __forceinline__ T load(const FftArgs& a, const void* in, int64_t i) {
  using P = real_of_t<T>;
  T v;
  if (a.in_real) {
    v = T(static_cast<const P*>(in)[i * a.in_stride], P(0));
  } else if (a.in_hermitian) {
    const bool mirrored = i > a.n / 2;
    const int64_t j = mirrored ? a.n - i : i;
    v = j < a.in_len ? static_cast<const T*>(in)[j * a.in_stride] : T(P(0));
    if (mirrored) v = math::conj(v);
  } else {
    v = static_cast<const T*>(in)[i * a.in_stride];
  }
  return a.forward ? v : math::conj(v);
}

// The forward DFT of length a.fft_len of x (y: the other half of the scratch), by Stockham
// stages: at the stage of radix R after sub-transforms of length ns, thread item j (k = j mod
// ns) reads x[j + r m] (m = fft_len / R), applies the twiddles w^(r k fft_len / (ns R)), does an
// R-point DFT and writes y[(j - k) R + k + q ns]. Returns the half that holds the result. The
// caller has synchronised after writing x; this synchronises after every stage.
template <typename T>
__device__ T* stockham(T* x, T* y, const FftArgs& a) {
  const int64_t len = a.fft_len;
  int64_t ns = 1;
  for (int s = 0; s < a.nfactors; ++s) {
    const int radix = a.factors[s];
    const int64_t m = len / radix, step = len / (ns * radix);
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const int64_t k = j % ns;
      T v[kMaxRadix];
      v[0] = x[j];
      for (int r = 1; r < radix; ++r) v[r] = x[j + r * m] * twiddle<T>(a.twiddles, r * k * step);
      const int64_t base = (j - k) * radix + k;
      for (int q = 0; q < radix; ++q) {
        T acc = v[0];
        for (int r = 1; r < radix; ++r) acc = acc + v[r] * twiddle<T>(a.twiddles, ((r * q) % radix) * m);
        y[base + q * ns] = acc;
      }
    }
    __syncthreads();
    T* t = x;
    x = y;
    y = t;
    ns *= radix;
  }
  return x;
}

template <typename T>
__global__ void fft_kernel(FftArgs a) {
  using P = real_of_t<T>;
  const int64_t len = a.fft_len, n = a.n;
  const bool bluestein = len != n;
  FOO_DYNAMIC_SHARED(T, smem);
  T* const half0 = fft_shared_bytes(len, sizeof(T)) > 0 ? smem
                                                         : static_cast<T*>(a.scratch) + static_cast<int64_t>(blockIdx.x) * 2 * len;
  T* const half1 = half0 + len;
  const P scale = static_cast<P>(a.scale);
  const P inv_len = P(1) / static_cast<P>(len);
  for (int64_t line = blockIdx.x; line < a.lines; line += gridDim.x) {
    const int64_t outer = line / a.inner, inner = line % a.inner;
    const char* in = static_cast<const char*>(a.in) +
                     (outer * a.in_outer_stride + inner * a.in_inner_stride) *
                         static_cast<int64_t>(a.in_real ? sizeof(P) : sizeof(T));
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
      T v(P(0));
      if (i < n) {
        v = load<T>(a, in, i);
        if (bluestein) v = v * twiddle<T>(a.chirp, i);
      }
      half0[i] = v;
    }
    __syncthreads();
    T* res = stockham(half0, half1, a);
    if (bluestein) {
      // The convolution with b: inverse(F(a) F(b)) = conj(forward(conj(F(a) F(b)))) / len.
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) res[i] = math::conj(res[i] * twiddle<T>(a.chirp_fft, i));
      __syncthreads();
      res = stockham(res, res == half0 ? half1 : half0, a);
    }
    char* out = static_cast<char*>(a.out) + (outer * a.out_outer_stride + inner * a.out_inner_stride) *
                                                static_cast<int64_t>(a.out_real ? sizeof(P) : sizeof(T));
    for (int64_t k = threadIdx.x; k < a.out_len; k += blockDim.x) {
      T v = res[k];
      if (bluestein) v = math::conj(v) * twiddle<T>(a.chirp, k) * inv_len;
      if (!a.forward) v = math::conj(v);
      v = v * scale;
      if (a.out_real) {
        reinterpret_cast<P*>(out)[k * a.out_stride] = v.re;
      } else {
        reinterpret_cast<T*>(out)[k * a.out_stride] = v;
      }
    }
    __syncthreads();  // the next line reuses the scratch
  }
}

}  // namespace

void fft_1d(Stream stream, const FftArgs& args) {
  if (args.lines == 0 || args.out_len == 0) return;
  dispatch<kFftTypes>(args.dtype, "fft_1d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t blocks = fft_blocks(args.lines, args.fft_len, sizeof(T));
    launch("fft_1d", fft_kernel<T>, capped_grid(blocks), dim3(threads_for(args.fft_len / 2 + 1)),
           static_cast<size_t>(fft_shared_bytes(args.fft_len, sizeof(T))), stream, args);
  });
}

}  // namespace foo::kernels::FOO_TARGET
