// Fused attention (attention.h), flash-attention style, in three kernels:
//
// forward  (a block per BR query rows of one (batch, head)): the block keeps its query tile in
//          shared memory and streams key/value tiles of BR rows through it. Each query row is
//          owned by TPR consecutive lanes of one warp: they split the row's BR scores of a tile
//          (then combine max and sum with shuffles) and its output columns. Online softmax: the
//          running max m and sum l rescale the output accumulator by exp(m_old - m_new) per tile,
//          so no score matrix exists anywhere; lse = m + log(l) is saved for the backward.
// dq       (same grid): recomputes p = exp(s - lse) tile by tile, ds = p * (dp - delta) with
//          dp = dout . v and delta = dout . out (which it computes first and saves for dkv), and
//          accumulates dq = scale * ds @ k (and writes ds as the bias gradient when asked).
// dkv      (a block per BR key rows of one key/value head): streams the query tiles of every query
//          head (and batch) sharing the key/value head and accumulates dv = p_dropped^T @ dout and
//          dk = scale * ds^T @ q in registers; launched after dq, whose delta it reads.
// Splitting the backward into dq and dkv recomputes the scores twice but needs no atomics: every
// gradient element is summed by one thread in a fixed order (deterministic on every driver).
//
// Tiles: BR rows of D (the head dim rounded up to 32, 64 or 128) opmath values, padded to D + 1 so
// rows of a tile fall in different banks; BR = 32, 16 or 8, the largest whose dkv tiles (4 row
// tiles, 2 score tiles) fit 48 KiB of dynamic shared memory. 128 threads: BR rows x TPR lanes.
#include <cmath>

#include "kernels/ops/attention.h"
#include "kernels/core/kernel.h"
#include "kernels/core/philox.h"
#include "kernels/core/math.cuh"

namespace foo::kernels::FOO_TARGET {
namespace {

constexpr int kThreads = 128;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kSharedLimit = 48 * 1024;

template <typename Acc, int D>
struct Tile {
  static constexpr int LD = D + 1;  // shared row stride of a [rows][D] tile
  static constexpr int shared_bytes_for(int br) {
    return static_cast<int>(sizeof(Acc)) * (4 * br * LD + 2 * br * (br + 1) + 2 * br);
  }
  static constexpr int BR = shared_bytes_for(32) <= kSharedLimit ? 32 : shared_bytes_for(16) <= kSharedLimit ? 16 : 8;
  static constexpr int LP = BR + 1;                  // shared row stride of a [rows][BR] score tile
  static constexpr int TPR = kThreads / BR;          // lanes per row, consecutive in one warp
  static constexpr int SC = (BR + TPR - 1) / TPR;    // scores of a tile row per lane
  static constexpr int DC = (D + TPR - 1) / TPR;     // output columns per lane
  static constexpr int kSharedBytes = shared_bytes_for(BR);
  static_assert(kSharedBytes <= kSharedLimit, "attention tiles exceed 48 KiB of shared memory");
  static_assert(32 % TPR == 0, "a row's lanes must sit in one warp");
};

template <typename T>
struct Ref {  // AttentionRef, typed
  const T* data;
  int64_t sb, sh, sr, sc;
  __device__ __forceinline__ const T* row(int64_t b, int64_t h, int64_t r) const { return data + b * sb + h * sh + r * sr; }
};
template <typename T>
struct MutRef {
  T* data;
  int64_t sb, sh, sr, sc;
  __device__ __forceinline__ T* row(int64_t b, int64_t h, int64_t r) const { return data + b * sb + h * sh + r * sr; }
};

template <typename T>
struct Params {
  using Acc = opmath_t<T>;
  int64_t batch, heads, q_len, kv_len, dim, v_dim, kv_batch, group;  // group: query heads per kv head
  Acc scale, inv_keep;
  double keep;
  bool causal, has_bias, dropout;
  const int64_t* seed;
  const int64_t* offset;
  Ref<T> q, k, v, out_in, dout, bias;
  MutRef<T> out, dq, dk, dv;
  Acc* lse;
  Acc* delta;
  T* dbias;

  __device__ __forceinline__ int64_t kv_b(int64_t b) const { return kv_batch == 1 ? 0 : b; }
  __device__ __forceinline__ int64_t kv_h(int64_t h) const { return h / group; }
  // Whether score (b, h, i, j) exists: inside the shapes and not above the causal diagonal.
  __device__ __forceinline__ bool live(int64_t i, int64_t j) const {
    return i < q_len && j < kv_len && !(causal && j > i);
  }
  __device__ __forceinline__ Acc bias_at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return has_bias ? static_cast<Acc>(bias.row(b, h, i)[j * bias.sc]) : Acc(0);
  }
  __device__ __forceinline__ bool kept(int64_t b, int64_t h, int64_t i, int64_t j, uint64_t s, uint64_t o) const {
    return philox_uniform(((b * heads + h) * q_len + i) * kv_len + j, s, o) < keep;
  }
};

template <typename Acc>
__device__ __forceinline__ Acc neg_inf() {
  return -static_cast<Acc>(INFINITY);
}

// Combines v over the TPR lanes of a row (butterfly: each lane gets the result). Every lane of
// the warp calls it together.
template <int TPR, typename Acc, typename Op>
__device__ __forceinline__ Acc row_reduce(Acc v, Op op) {
#pragma unroll
  for (int offset = TPR / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}
struct Max {
  template <typename Acc>
  __device__ __forceinline__ Acc operator()(Acc a, Acc b) const { return a > b ? a : b; }
};
struct Sum {
  template <typename Acc>
  __device__ __forceinline__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

template <typename Acc>
__device__ __forceinline__ Acc dot(const Acc* a, const Acc* b, int64_t n) {
  Acc s(0);
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// Rows [r0, r0 + BR) (columns [0, cols)) of operand (b, h) into a shared [BR][LD] tile, as opmath
// values; rows past `rows` become zeros. All threads of the block take part.
template <int BR, int LD, typename T, typename Acc>
__device__ __forceinline__ void load_tile(Acc* dst, const Ref<T>& src, int64_t b, int64_t h, int64_t r0,
                                          int64_t rows, int64_t cols) {
  const int64_t n = BR * cols;
  for (int64_t e = threadIdx.x; e < n; e += kThreads) {
    const int64_t rr = e / cols, cc = e % cols;
    dst[rr * LD + cc] = r0 + rr < rows ? static_cast<Acc>(src.row(b, h, r0 + rr)[cc * src.sc]) : Acc(0);
  }
}

// The (seed, offset) of the dropout stream, read from device memory.
template <typename T>
__device__ __forceinline__ void rng_state(const Params<T>& p, uint64_t* seed, uint64_t* offset) {
  *seed = p.dropout ? static_cast<uint64_t>(*p.seed) : 0;
  *offset = p.dropout ? static_cast<uint64_t>(*p.offset) : 0;
}

// ---- forward ------------------------------------------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(kThreads) attention_forward_kernel(Params<T> p) {
  using Acc = opmath_t<T>;
  using C = Tile<Acc, D>;
  constexpr int BR = C::BR, LD = C::LD, LP = C::LP, TPR = C::TPR;
  FOO_DYNAMIC_SHARED(Acc, smem);
  Acc* Qs = smem;
  Acc* Ks = Qs + BR * LD;
  Acc* Vs = Ks + BR * LD;
  Acc* Ps = Vs + BR * LD;
  const int r = threadIdx.x / TPR, t = threadIdx.x % TPR;
  uint64_t seed, offset;
  rng_state(p, &seed, &offset);
  const int64_t q_tiles = (p.q_len + BR - 1) / BR;

  for (int64_t bh = blockIdx.y; bh < p.batch * p.heads; bh += gridDim.y) {
    const int64_t b = bh / p.heads, h = bh % p.heads, kb = p.kv_b(b), kh = p.kv_h(h);
    for (int64_t qt = blockIdx.x; qt < q_tiles; qt += gridDim.x) {
      const int64_t q0 = qt * BR, i = q0 + r;
      __syncthreads();  // the previous tile's readers are done
      load_tile<BR, LD>(Qs, p.q, b, h, q0, p.q_len, p.dim);
      Acc m = neg_inf<Acc>(), l(0), acc[C::DC];
#pragma unroll
      for (int c = 0; c < C::DC; ++c) acc[c] = Acc(0);
      // Causal: key tiles past the tile's last query row contribute nothing.
      const int64_t kv_end = p.causal ? (q0 + BR < p.kv_len ? q0 + BR : p.kv_len) : p.kv_len;
      for (int64_t k0 = 0; k0 < kv_end; k0 += BR) {
        __syncthreads();
        load_tile<BR, LD>(Ks, p.k, kb, kh, k0, p.kv_len, p.dim);
        load_tile<BR, LD>(Vs, p.v, kb, kh, k0, p.kv_len, p.v_dim);
        __syncthreads();
        Acc s[C::SC];
        Acc tile_max = neg_inf<Acc>();
#pragma unroll
        for (int c = 0; c < C::SC; ++c) {
          const int jl = t + c * TPR;
          const int64_t j = k0 + jl;
          s[c] = neg_inf<Acc>();
          if (jl < BR && p.live(i, j)) {
            s[c] = p.scale * dot(Qs + r * LD, Ks + jl * LD, p.dim) + p.bias_at(b, h, i, j);
            tile_max = Max()(tile_max, s[c]);
          }
        }
        const Acc m_new = Max()(m, row_reduce<TPR>(tile_max, Max()));
        // While every score so far is -inf, exponents are taken against 0: p = 0, no NaN yet.
        const Acc m_ref = m_new == neg_inf<Acc>() ? Acc(0) : m_new;
        const Acc alpha = math::exp(m - m_ref);
        Acc psum(0);
#pragma unroll
        for (int c = 0; c < C::SC; ++c) {
          const int jl = t + c * TPR;
          if (jl >= BR) continue;
          Acc pv = math::exp(s[c] - m_ref);
          psum += pv;
          if (p.dropout) pv = p.kept(b, h, i, k0 + jl, seed, offset) ? pv * p.inv_keep : Acc(0);
          Ps[r * LP + jl] = pv;
        }
        l = l * alpha + row_reduce<TPR>(psum, Sum());
        m = m_new;
        __syncwarp();  // the row's probabilities, written by its lanes, are read by all of them
#pragma unroll
        for (int c = 0; c < C::DC; ++c) {
          const int d = t + c * TPR;
          if (d >= p.v_dim) continue;
          Acc a = acc[c] * alpha;
          for (int jl = 0; jl < BR; ++jl) a += Ps[r * LP + jl] * Vs[jl * LD + d];
          acc[c] = a;
        }
      }
      if (i < p.q_len) {
        T* o = p.out.row(b, h, i);
#pragma unroll
        for (int c = 0; c < C::DC; ++c) {
          const int d = t + c * TPR;
          if (d < p.v_dim) o[d * p.out.sc] = cast<T>(l > Acc(0) ? acc[c] / l : Acc(0));
        }
        // A row with no finite score (all masked) outputs zeros and lse = +inf, so the backward's
        // exp(s - lse) is 0 there: the math path's _safe_softmax, and flash attention's lse.
        if (t == 0) p.lse[bh * p.q_len + i] = l > Acc(0) ? m + math::log(l) : static_cast<Acc>(INFINITY);
      }
    }
  }
}

// ---- backward: dq (and delta, and the bias gradient) ------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(kThreads) attention_backward_dq_kernel(Params<T> p) {
  using Acc = opmath_t<T>;
  using C = Tile<Acc, D>;
  constexpr int BR = C::BR, LD = C::LD, LP = C::LP, TPR = C::TPR;
  FOO_DYNAMIC_SHARED(Acc, smem);
  Acc* Qs = smem;
  Acc* dOs = Qs + BR * LD;
  Acc* Ks = dOs + BR * LD;
  Acc* Vs = Ks + BR * LD;
  Acc* dSs = Vs + BR * LD;
  const int r = threadIdx.x / TPR, t = threadIdx.x % TPR;
  uint64_t seed, offset;
  rng_state(p, &seed, &offset);
  const int64_t q_tiles = (p.q_len + BR - 1) / BR;

  for (int64_t bh = blockIdx.y; bh < p.batch * p.heads; bh += gridDim.y) {
    const int64_t b = bh / p.heads, h = bh % p.heads, kb = p.kv_b(b), kh = p.kv_h(h);
    for (int64_t qt = blockIdx.x; qt < q_tiles; qt += gridDim.x) {
      const int64_t q0 = qt * BR, i = q0 + r;
      const bool row_in = i < p.q_len;
      // delta = dout . out for this row (dp's row sum against p), saved for the dkv kernel.
      Acc part(0);
      if (row_in) {
        const T* go = p.dout.row(b, h, i);
        const T* o = p.out_in.row(b, h, i);
        for (int64_t d = t; d < p.v_dim; d += TPR) {
          part += static_cast<Acc>(go[d * p.dout.sc]) * static_cast<Acc>(o[d * p.out_in.sc]);
        }
      }
      const Acc delta = row_reduce<TPR>(part, Sum());
      if (row_in && t == 0) p.delta[bh * p.q_len + i] = delta;
      const Acc lse = row_in ? p.lse[bh * p.q_len + i] : Acc(0);

      __syncthreads();
      load_tile<BR, LD>(Qs, p.q, b, h, q0, p.q_len, p.dim);
      load_tile<BR, LD>(dOs, p.dout, b, h, q0, p.q_len, p.v_dim);
      Acc acc[C::DC];
#pragma unroll
      for (int c = 0; c < C::DC; ++c) acc[c] = Acc(0);
      const int64_t kv_end = p.causal ? (q0 + BR < p.kv_len ? q0 + BR : p.kv_len) : p.kv_len;
      for (int64_t k0 = 0; k0 < kv_end; k0 += BR) {
        __syncthreads();
        load_tile<BR, LD>(Ks, p.k, kb, kh, k0, p.kv_len, p.dim);
        load_tile<BR, LD>(Vs, p.v, kb, kh, k0, p.kv_len, p.v_dim);
        __syncthreads();
#pragma unroll
        for (int c = 0; c < C::SC; ++c) {
          const int jl = t + c * TPR;
          if (jl >= BR) continue;
          const int64_t j = k0 + jl;
          Acc ds(0);
          if (p.live(i, j)) {
            const Acc s = p.scale * dot(Qs + r * LD, Ks + jl * LD, p.dim) + p.bias_at(b, h, i, j);
            const Acc prob = math::exp(s - lse);
            Acc dp = dot(dOs + r * LD, Vs + jl * LD, p.v_dim);
            if (p.dropout) dp = p.kept(b, h, i, j, seed, offset) ? dp * p.inv_keep : Acc(0);
            ds = prob * (dp - delta);
            if (p.dbias != nullptr) p.dbias[(bh * p.q_len + i) * p.kv_len + j] = cast<T>(ds);
          }
          dSs[r * LP + jl] = ds;
        }
        __syncwarp();
#pragma unroll
        for (int c = 0; c < C::DC; ++c) {
          const int d = t + c * TPR;
          if (d >= p.dim) continue;
          Acc a = acc[c];
          for (int jl = 0; jl < BR; ++jl) a += dSs[r * LP + jl] * Ks[jl * LD + d];
          acc[c] = a;
        }
      }
      if (row_in) {
        T* dq = p.dq.row(b, h, i);
#pragma unroll
        for (int c = 0; c < C::DC; ++c) {
          const int d = t + c * TPR;
          if (d < p.dim) dq[d * p.dq.sc] = cast<T>(p.scale * acc[c]);
        }
      }
    }
  }
}

// ---- backward: dk and dv ----------------------------------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(kThreads) attention_backward_dkv_kernel(Params<T> p) {
  using Acc = opmath_t<T>;
  using C = Tile<Acc, D>;
  constexpr int BR = C::BR, LD = C::LD, LP = C::LP, TPR = C::TPR;
  FOO_DYNAMIC_SHARED(Acc, smem);
  Acc* Ks = smem;
  Acc* Vs = Ks + BR * LD;
  Acc* Qs = Vs + BR * LD;
  Acc* dOs = Qs + BR * LD;
  Acc* Ps = dOs + BR * LD;
  Acc* dSs = Ps + BR * LP;
  Acc* Ls = dSs + BR * LP;  // lse of the query tile's rows
  Acc* Ds = Ls + BR;        // delta of the query tile's rows
  const int r = threadIdx.x / TPR, t = threadIdx.x % TPR;
  uint64_t seed, offset;
  rng_state(p, &seed, &offset);
  const int64_t kv_tiles = (p.kv_len + BR - 1) / BR, q_tiles = (p.q_len + BR - 1) / BR;
  const int64_t kv_heads = p.heads / p.group;
  // Query batches reading one key/value batch: all of them when the key/value batch broadcasts.
  const int64_t batches_per_kv = p.kv_batch == 1 ? p.batch : 1;

  for (int64_t kbh = blockIdx.y; kbh < p.kv_batch * kv_heads; kbh += gridDim.y) {
    const int64_t kb = kbh / kv_heads, kh = kbh % kv_heads;
    for (int64_t kt = blockIdx.x; kt < kv_tiles; kt += gridDim.x) {
      const int64_t k0 = kt * BR, j = k0 + r;
      __syncthreads();
      load_tile<BR, LD>(Ks, p.k, kb, kh, k0, p.kv_len, p.dim);
      load_tile<BR, LD>(Vs, p.v, kb, kh, k0, p.kv_len, p.v_dim);
      Acc dk[C::DC], dv[C::DC];
#pragma unroll
      for (int c = 0; c < C::DC; ++c) dk[c] = dv[c] = Acc(0);
      // Causal: query tiles before this key tile's first row see none of its keys.
      const int64_t qt_begin = p.causal ? k0 / BR : 0;
      for (int64_t n = 0; n < batches_per_kv * p.group; ++n) {
        const int64_t b = p.kv_batch == 1 ? n / p.group : kb, h = kh * p.group + n % p.group;
        const int64_t bh = b * p.heads + h;
        for (int64_t qt = qt_begin; qt < q_tiles; ++qt) {
          const int64_t q0 = qt * BR;
          __syncthreads();
          load_tile<BR, LD>(Qs, p.q, b, h, q0, p.q_len, p.dim);
          load_tile<BR, LD>(dOs, p.dout, b, h, q0, p.q_len, p.v_dim);
          if (threadIdx.x < BR) {
            const int64_t i = q0 + threadIdx.x;
            Ls[threadIdx.x] = i < p.q_len ? p.lse[bh * p.q_len + i] : Acc(0);
            Ds[threadIdx.x] = i < p.q_len ? p.delta[bh * p.q_len + i] : Acc(0);
          }
          __syncthreads();
#pragma unroll
          for (int c = 0; c < C::SC; ++c) {
            const int il = t + c * TPR;
            if (il >= BR) continue;
            const int64_t i = q0 + il;
            Acc pd(0), ds(0);
            if (p.live(i, j)) {
              const Acc s = p.scale * dot(Qs + il * LD, Ks + r * LD, p.dim) + p.bias_at(b, h, i, j);
              const Acc prob = math::exp(s - Ls[il]);
              Acc dp = dot(dOs + il * LD, Vs + r * LD, p.v_dim);
              pd = prob;
              if (p.dropout) {
                const bool keep = p.kept(b, h, i, j, seed, offset);
                pd = keep ? prob * p.inv_keep : Acc(0);
                dp = keep ? dp * p.inv_keep : Acc(0);
              }
              ds = prob * (dp - Ds[il]);
            }
            Ps[r * LP + il] = pd;
            dSs[r * LP + il] = ds;
          }
          __syncwarp();
#pragma unroll
          for (int c = 0; c < C::DC; ++c) {
            const int d = t + c * TPR;
            Acc a = dv[c], e = dk[c];
            for (int il = 0; il < BR; ++il) {
              if (d < p.v_dim) a += Ps[r * LP + il] * dOs[il * LD + d];
              if (d < p.dim) e += dSs[r * LP + il] * Qs[il * LD + d];
            }
            dv[c] = a;
            dk[c] = e;
          }
        }
      }
      if (j < p.kv_len) {
        T* gk = p.dk.row(kb, kh, j);
        T* gv = p.dv.row(kb, kh, j);
#pragma unroll
        for (int c = 0; c < C::DC; ++c) {
          const int d = t + c * TPR;
          if (d < p.dim) gk[d * p.dk.sc] = cast<T>(p.scale * dk[c]);
          if (d < p.v_dim) gv[d * p.dv.sc] = cast<T>(dv[c]);
        }
      }
    }
  }
}

// ---- launchers ------------------------------------------------------------------------------

template <typename T>
Ref<T> ref(const AttentionRef& a) {
  return {static_cast<const T*>(a.data), a.sb, a.sh, a.sr, a.sc};
}
template <typename T>
MutRef<T> mut_ref(const MutableAttentionRef& a) {
  return {static_cast<T*>(a.data), a.sb, a.sh, a.sr, a.sc};
}

template <typename T>
Params<T> params(const AttentionShape& s) {
  using Acc = opmath_t<T>;
  Params<T> p{};
  p.batch = s.batch, p.heads = s.heads, p.q_len = s.q_len, p.kv_len = s.kv_len;
  p.dim = s.dim, p.v_dim = s.v_dim, p.kv_batch = s.kv_batch, p.group = s.heads / s.kv_heads;
  p.scale = static_cast<Acc>(s.scale);
  p.causal = s.causal;
  p.has_bias = s.has_bias;
  if (s.has_bias) p.bias = ref<T>(s.bias);
  p.dropout = s.dropout;
  p.keep = s.keep;
  p.inv_keep = s.keep > 0 ? static_cast<Acc>(1.0 / s.keep) : Acc(0);
  p.seed = s.seed;
  p.offset = s.offset;
  return p;
}

// Calls f(std::integral_constant<int, D>) for the tile width covering both head dims.
template <typename F>
void with_head_dim(int64_t dim, int64_t v_dim, const char* op, F&& f) {
  const int64_t widest = dim > v_dim ? dim : v_dim;
  if (widest <= 32) return f(std::integral_constant<int, 32>{});
  if (widest <= 64) return f(std::integral_constant<int, 64>{});
  if (widest <= kAttentionMaxHeadDim) return f(std::integral_constant<int, 128>{});
  throw std::invalid_argument(std::string(op) + ": head dims up to " + std::to_string(kAttentionMaxHeadDim) +
                              " are supported, got " + std::to_string(widest));
}

}  // namespace

void attention_forward(Stream stream, const AttentionForwardArgs& args) {
  const AttentionShape& s = args.shape;
  if (s.batch == 0 || s.heads == 0 || s.q_len == 0 || s.v_dim == 0) return;
  dispatch<kFloatingTypes>(s.dtype, "foo::attention_forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Params<T> p = params<T>(s);
    p.q = ref<T>(args.q), p.k = ref<T>(args.k), p.v = ref<T>(args.v);
    p.out = mut_ref<T>(args.out);
    p.lse = static_cast<opmath_t<T>*>(args.lse);
    with_head_dim(s.dim, s.v_dim, "foo::attention_forward", [&](auto width) {
      using C = Tile<opmath_t<T>, decltype(width)::value>;
      const dim3 grid(static_cast<unsigned>((s.q_len + C::BR - 1) / C::BR), capped_grid(s.batch * s.heads).x);
      launch("foo::attention_forward", attention_forward_kernel<T, decltype(width)::value>, grid, dim3(kThreads),
             C::kSharedBytes, stream, p);
    });
  });
}

void attention_backward(Stream stream, const AttentionBackwardArgs& args) {
  const AttentionShape& s = args.shape;
  if (s.batch == 0 || s.heads == 0 || s.q_len == 0 || s.kv_len == 0) return;
  dispatch<kFloatingTypes>(s.dtype, "foo::attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = opmath_t<T>;
    Params<T> p = params<T>(s);
    p.q = ref<T>(args.q), p.k = ref<T>(args.k), p.v = ref<T>(args.v);
    p.out_in = ref<T>(args.out), p.dout = ref<T>(args.grad_out);
    p.lse = const_cast<Acc*>(static_cast<const Acc*>(args.lse));
    p.delta = static_cast<Acc*>(args.delta);
    p.dq = mut_ref<T>(args.dq), p.dk = mut_ref<T>(args.dk), p.dv = mut_ref<T>(args.dv);
    p.dbias = static_cast<T*>(args.dbias);
    with_head_dim(s.dim, s.v_dim, "foo::attention_backward", [&](auto width) {
      constexpr int D = decltype(width)::value;
      using C = Tile<Acc, D>;
      const dim3 q_grid(static_cast<unsigned>((s.q_len + C::BR - 1) / C::BR), capped_grid(s.batch * s.heads).x);
      launch("foo::attention_backward_dq", attention_backward_dq_kernel<T, D>, q_grid, dim3(kThreads),
             C::kSharedBytes, stream, p);
      const dim3 kv_grid(static_cast<unsigned>((s.kv_len + C::BR - 1) / C::BR), capped_grid(s.kv_batch * s.kv_heads).x);
      launch("foo::attention_backward_dkv", attention_backward_dkv_kernel<T, D>, kv_grid, dim3(kThreads),
             C::kSharedBytes, stream, p);
    });
  });
}

}  // namespace foo::kernels::FOO_TARGET
