// Discrete Fourier transforms on foo (kernels/ops/fft.cu): _fft_c2c, _fft_r2c and _fft_c2r, what
// every torch.fft function, stft and istft reach, and their gradients (ATen's formulas call these
// same ops). A transform over several dims is a sequence of 1-D passes, one kernel launch each,
// from one contiguous tensor into the next (pocketfft's order: r2c transforms the last dim first,
// c2r last). The normalisation is applied by the last pass. Shapes, dtypes and out= follow the
// CPU's (aten/src/ATen/native/mkl/SpectralOps.cpp): out= computes the result and copies it into
// the resized out, as the CPU's _out kernels do; a two-sided r2c computes the full transform of
// the last dim rather than filling the other half by symmetry.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "aten/core/kernel_dtype.h"
#include "aten/core/launch_args.h"
#include "kernels/ops/fft.h"
#include "native/fft_c2c_out.h"
#include "native/fft_c2r_out.h"
#include "native/fft_r2c_out.h"

namespace foo::native {
namespace {

using foo::kernels::FftArgs;

constexpr uint32_t kFftTypes = foo::kernels::kComplexTypes;
constexpr uint32_t kFftRealTypes =
    foo::kernels::dtype_bit(foo::kernels::DType::Float32) | foo::kernels::dtype_bit(foo::kernels::DType::Float64);

// n's factors in 4, 2, 3, 5, 7 (in that order; the Stockham stages' radices); false when another
// prime divides n.
bool small_factors(int64_t n, std::vector<int>& factors) {
  factors.clear();
  for (int p : {4, 2, 3, 5, 7}) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  return n == 1;
}

// exp(-2 pi i t / len) for t < len, in long double so that the double table is correctly rounded
// but for the last bit (the angle reduced exactly: t < len).
at::Tensor twiddle_table(int64_t len, const at::Device& device) {
  const long double pi = 3.141592653589793238462643383279502884L;
  at::Tensor table = at::empty({len}, at::TensorOptions().dtype(at::kComplexDouble));
  auto* w = table.data_ptr<c10::complex<double>>();
  for (int64_t t = 0; t < len; ++t) {
    const long double angle = -2.0L * pi * static_cast<long double>(t) / static_cast<long double>(len);
    w[t] = c10::complex<double>(static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle)));
  }
  return table.to(device);
}

int64_t norm_size(at::IntArrayRef sizes, at::IntArrayRef dim) {
  int64_t n = 1;
  for (int64_t d : dim) n *= sizes[d];
  return n;
}

double norm_scale(int64_t n, int64_t normalization) {
  switch (static_cast<at::native::fft_norm_mode>(normalization)) {
    case at::native::fft_norm_mode::none: return 1.0;
    case at::native::fft_norm_mode::by_n: return 1.0 / static_cast<double>(n);
    case at::native::fft_norm_mode::by_root_n: return 1.0 / std::sqrt(static_cast<double>(n));
  }
  TORCH_CHECK(false, "Unsupported normalization type", normalization);
}

enum class Mode { Complex, RealIn, HermitianIn };

// One 1-D pass of length n along dim d: in and out contiguous, of the same sizes but in dim d
// (out's is the number of outputs kept: n, or n / 2 + 1 for a one-sided r2c). mode RealIn: in
// is real; HermitianIn: in holds the first entries of a Hermitian spectrum and out is real.
void fft_pass(const at::Tensor& in, const at::Tensor& out, int64_t d, int64_t n, bool forward, double scale,
              Mode mode) {
  if (in.numel() == 0 || out.numel() == 0) return;
  const at::ScalarType complex_type = c10::toComplexType(in.scalar_type());  // a complex type itself
  FftArgs args{};
  args.dtype = kernel_dtype(complex_type);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= in.size(i);
  for (int64_t i = d + 1; i < in.dim(); ++i) inner *= in.size(i);
  args.lines = outer * inner;
  args.inner = inner;
  args.n = n;
  args.in = in.data_ptr();
  args.in_len = in.size(d);
  args.in_outer_stride = in.size(d) * inner;
  args.in_inner_stride = 1;
  args.in_stride = inner;
  args.in_real = mode == Mode::RealIn;
  args.in_hermitian = mode == Mode::HermitianIn;
  args.out = out.data_ptr();
  args.out_len = out.size(d);
  args.out_outer_stride = out.size(d) * inner;
  args.out_inner_stride = 1;
  args.out_stride = inner;
  args.out_real = mode == Mode::HermitianIn;
  args.forward = forward;
  args.scale = scale;

  std::vector<int> factors;
  at::Tensor twiddles, chirp, chirp_fft;
  if (small_factors(n, factors)) {
    args.fft_len = n;
  } else {
    // Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_(k - j)), c_k = exp(-pi i k^2 / n), the
    // convolution by power-of-two transforms of length >= 2n - 1.
    int64_t len = 1;
    while (len < 2 * n - 1) len *= 2;
    args.fft_len = len;
    small_factors(len, factors);
    const long double pi = 3.141592653589793238462643383279502884L;
    at::Tensor c = at::empty({n}, at::TensorOptions().dtype(at::kComplexDouble));
    at::Tensor b = at::zeros({len}, at::TensorOptions().dtype(at::kComplexDouble));
    auto* cp = c.data_ptr<c10::complex<double>>();
    auto* bp = b.data_ptr<c10::complex<double>>();
    const uint64_t two_n = 2 * static_cast<uint64_t>(n);
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t kk = static_cast<uint64_t>(k) % two_n;
      const uint64_t t = static_cast<uint64_t>((static_cast<unsigned __int128>(kk) * kk) % two_n);
      const long double angle = -pi * static_cast<long double>(t) / static_cast<long double>(n);
      cp[k] = c10::complex<double>(static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle)));
      bp[k] = std::conj(cp[k]);
      if (k > 0) bp[len - k] = std::conj(cp[k]);
    }
    chirp = c.to(in.device());
    twiddles = twiddle_table(len, in.device());
    chirp_fft = at::empty({len}, chirp.options());
    const at::Tensor b_dev = b.to(in.device());
    FftArgs p{};
    p.dtype = foo::kernels::DType::Complex128;
    p.lines = 1;
    p.inner = 1;
    p.n = len;
    p.in = b_dev.data_ptr();
    p.in_len = len;
    p.in_stride = 1;
    p.out = chirp_fft.data_ptr();
    p.out_len = len;
    p.out_stride = 1;
    p.forward = true;
    p.scale = 1.0;
    p.fft_len = len;
    p.nfactors = static_cast<int>(factors.size());
    std::copy(factors.begin(), factors.end(), p.factors);
    p.twiddles = reinterpret_cast<const foo::kernels::complex_t<double>*>(twiddles.const_data_ptr());
    at::Tensor p_scratch;
    if (foo::kernels::fft_shared_bytes(len, sizeof(c10::complex<double>)) == 0) {
      p_scratch = at::empty({2 * len}, chirp.options());
      p.scratch = p_scratch.data_ptr();
    }
    FOO_CALL_KERNEL(fft_1d, stream_of(in), p);
    args.chirp = reinterpret_cast<const foo::kernels::complex_t<double>*>(chirp.const_data_ptr());
    args.chirp_fft = reinterpret_cast<const foo::kernels::complex_t<double>*>(chirp_fft.const_data_ptr());
  }
  TORCH_INTERNAL_ASSERT(factors.size() <= static_cast<size_t>(foo::kernels::kFftMaxFactors));
  if (!twiddles.defined()) twiddles = twiddle_table(args.fft_len, in.device());
  args.nfactors = static_cast<int>(factors.size());
  std::copy(factors.begin(), factors.end(), args.factors);
  args.twiddles = reinterpret_cast<const foo::kernels::complex_t<double>*>(twiddles.const_data_ptr());
  const int64_t elem = c10::elementSize(complex_type);
  const int64_t blocks = foo::kernels::fft_blocks(args.lines, args.fft_len, elem);
  at::Tensor scratch;
  if (foo::kernels::fft_shared_bytes(args.fft_len, elem) == 0) {
    scratch = at::empty({blocks * 2 * args.fft_len * elem}, in.options().dtype(at::kByte));
    args.scratch = scratch.data_ptr();
  }
  FOO_CALL_KERNEL(fft_1d, stream_of(in), args);
}

// Complex-to-complex passes over `dims` of x (contiguous), the scale on the last; returns the
// result (x itself when dims is empty).
at::Tensor c2c_passes(at::Tensor x, at::IntArrayRef dims, bool forward, double scale) {
  for (size_t i = 0; i < dims.size(); ++i) {
    at::Tensor y = at::empty(x.sizes(), x.options());
    fft_pass(x, y, dims[i], x.size(dims[i]), forward, i + 1 == dims.size() ? scale : 1.0, Mode::Complex);
    x = y;
  }
  return x;
}

// The output strides ATen's meta functions predict for a device that is neither cuda nor a CPU
// without MKL (torch/_meta_registrations.py, _exec_fft; MKL's layout): the dims not transformed
// first, ordered by the input's strides (largest first, stable), then the transformed dims in
// `dims` order, as one row-major block. torch.compile's fake tensors rely on it.
at::DimVector exec_fft_strides(at::IntArrayRef in_strides, at::IntArrayRef out_sizes, at::IntArrayRef dims) {
  const int64_t ndim = static_cast<int64_t>(out_sizes.size());
  std::vector<bool> transformed(ndim, false);
  for (int64_t d : dims) transformed[d] = true;
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) batch.push_back(d);
  }
  std::stable_sort(batch.begin(), batch.end(), [&](int64_t a, int64_t b) { return in_strides[a] > in_strides[b]; });
  // The contiguous strides of [batch, out_sizes[dims]...] (sizes below 1 count as 1).
  const int64_t k = static_cast<int64_t>(dims.size());
  std::vector<int64_t> block(k + 1);
  int64_t acc = 1;
  for (int64_t i = k - 1; i >= 0; --i) {
    block[i + 1] = acc;
    acc *= std::max<int64_t>(out_sizes[dims[i]], 1);
  }
  block[0] = acc;
  at::DimVector strides(ndim, 0);
  int64_t batch_numel = 1;
  for (int64_t i = static_cast<int64_t>(batch.size()) - 1; i >= 0; --i) {
    strides[batch[i]] = batch_numel * block[0];
    batch_numel *= out_sizes[batch[i]];
  }
  for (int64_t i = 0; i < k; ++i) strides[dims[i]] = block[i + 1];
  return strides;
}

// dims sorted by the input's strides, largest first (stable); the last one kept last when
// exclude_last (meta's _sort_dims).
at::DimVector sort_dims(at::IntArrayRef in_strides, at::IntArrayRef dims, bool exclude_last) {
  at::DimVector sorted(dims.begin(), dims.end());
  auto end = sorted.end() - (exclude_last ? 1 : 0);
  std::stable_sort(sorted.begin(), end, [&](int64_t a, int64_t b) { return in_strides[a] > in_strides[b]; });
  return sorted;
}

// result (contiguous) in the layout `strides`: itself when it has them, else a copy.
at::Tensor with_strides(const at::Tensor& result, at::IntArrayRef strides) {
  if (result.numel() <= 1 || result.strides() == strides) return result;
  return at::empty_strided(result.sizes(), strides, result.options()).copy_(result);
}

at::Tensor& to_out(const at::Tensor& result, at::Tensor& out) {
  if (!out.defined()) {
    out = result;
    return out;
  }
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward,
                        at::Tensor& out) {
  TORCH_CHECK(self.is_complex());
  check_kernel_dtype("_fft_c2c", self.scalar_type(), kFftTypes);
  const double scale = norm_scale(norm_size(self.sizes(), dim), normalization);
  if (dim.empty()) return to_out(self.clone(), out);  // as the CPU's: a copy (the norm's size is 1)
  const at::Tensor result = c2c_passes(self.contiguous(), dim, forward, scale);
  return to_out(with_strides(result, exec_fft_strides(self.strides(), self.sizes(), sort_dims(self.strides(), dim, false))),
                out);
}

at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                        at::Tensor& out) {
  TORCH_CHECK(self.is_floating_point());
  check_kernel_dtype("_fft_r2c", self.scalar_type(), kFftRealTypes);
  TORCH_CHECK(!dim.empty(), "_fft_r2c: expected at least one dim");
  const int64_t last = dim.back();
  const int64_t n = self.size(last);
  const double scale = norm_scale(norm_size(self.sizes(), dim), normalization);
  at::DimVector sizes(self.sizes().begin(), self.sizes().end());
  if (onesided) sizes[last] = n / 2 + 1;
  const at::Tensor x = self.contiguous();
  at::Tensor y = at::empty(sizes, self.options().dtype(c10::toComplexType(self.scalar_type())));
  fft_pass(x, y, last, n, /*forward=*/true, dim.size() == 1 ? scale : 1.0, Mode::RealIn);
  const at::Tensor result = c2c_passes(y, dim.slice(0, dim.size() - 1), /*forward=*/true, scale);
  return to_out(with_strides(result, exec_fft_strides(self.strides(), sizes, sort_dims(self.strides(), dim, true))), out);
}

at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, int64_t last_dim_size,
                        at::Tensor& out) {
  TORCH_CHECK(self.is_complex());
  check_kernel_dtype("_fft_c2r", self.scalar_type(), kFftTypes);
  TORCH_CHECK(!dim.empty(), "_fft_c2r: expected at least one dim");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  const int64_t last = dim.back();
  at::DimVector sizes(self.sizes().begin(), self.sizes().end());
  sizes[last] = last_dim_size;
  const double scale = norm_scale(norm_size(sizes, dim), normalization);
  const at::Tensor x = c2c_passes(self.contiguous(), dim.slice(0, dim.size() - 1), /*forward=*/false, 1.0);
  at::Tensor result = at::empty(sizes, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  fft_pass(x, result, last, last_dim_size, /*forward=*/false, scale, Mode::HermitianIn);
  // The meta function's layout: the c2c over the other dims (its layout), then the last dim.
  at::DimVector in_strides(self.strides().begin(), self.strides().end());
  if (dim.size() > 1) {
    const auto others = dim.slice(0, dim.size() - 1);
    in_strides = exec_fft_strides(self.strides(), self.sizes(), sort_dims(self.strides(), others, false));
  }
  return to_out(with_strides(result, exec_fft_strides(in_strides, sizes, dim.slice(dim.size() - 1))), out);
}

}  // namespace foo::native
