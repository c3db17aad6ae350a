// Matrix products (docs/kernels.md, "Matrix products").
//
// gemm: d = alpha * a @ b + beta * c, batched over blockIdx.z. Each block computes a BM x BN tile
// of d, walking k in steps of BK: its threads copy the BM x BK slice of a and the BK x BN slice of
// b into shared memory (converted to the accumulation type, a stored k-major so both are read
// along rows), then each thread accumulates a TM x TN register tile from them. The next slices
// are loaded into registers while the current ones are multiplied, so each k step has exactly
// two barriers (after the store, before the next store). Operands are read through arbitrary
// element strides, so transposed or sliced views need no copy; the tile load maps consecutive
// threads along whichever index of the operand has the smaller stride, keeping global reads
// coalesced for both row- and column-major operands.
//
// gemv: y = alpha * a @ x + beta * c. TPR threads share one row: lanes stride over k and the
// partial sums meet in a shared-memory tree (fixed order: the result does not depend on timing).
#include "kernels/gemm.h"
#include "kernels/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

template <typename T>
struct GemmParams {
  const T* a;
  const T* b;
  const T* c;
  T* d;
  int64_t batch, m, n, k;
  int64_t a_sb, a_sm, a_sk, b_sb, b_sk, b_sn, c_sb, c_sm, c_sn, d_sb, d_sm, d_sn;
  opmath_t<T> alpha, beta;
  bool a_k_fast;  // a's tile is loaded with k running across consecutive threads (else m)
  bool b_n_fast;  // b's tile is loaded with n running across consecutive threads (else k)
  bool use_c;     // beta != 0
};

// Output element (row, col) of one batch entry: alpha * acc (+ beta * c). With k == 0 the product
// is an empty sum and contributes exactly 0 whatever alpha is, as on the CPU.
template <typename T>
__device__ __forceinline__ void gemm_store(const GemmParams<T>& p, const T* c, T* d, int64_t row, int64_t col,
                                           opmath_t<T> acc) {
  using acc_t = opmath_t<T>;
  acc_t v = p.k > 0 ? p.alpha * acc : acc_t(0);
  if (p.use_c) v += p.beta * static_cast<acc_t>(c[row * p.c_sm + col * p.c_sn]);
  d[row * p.d_sm + col * p.d_sn] = cast<T>(v);
}

template <typename T, int BM, int BN, int BK, int TM, int TN, int MinBlocks>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), MinBlocks) gemm_tiled_kernel(GemmParams<T> p) {
  using acc_t = opmath_t<T>;
  constexpr int kThreads = (BM / TM) * (BN / TN);
  constexpr int kALoads = BM * BK / kThreads;  // elements of a's tile each thread copies
  constexpr int kBLoads = BK * BN / kThreads;
  constexpr int kPad = 4;                      // keeps the k-major stores free of bank conflicts
  constexpr int RM = TM / 4, RN = TN / 4;      // a thread's tile: RM x RN blocks of 4 x 4 ...
  constexpr int SM = BM / RM, SN = BN / RN;    // ... spaced SM rows and SN columns apart
  static_assert(TM % 4 == 0 && TN % 4 == 0, "register tile is made of 4x4 blocks");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0, "tile loads must divide evenly");
  static_assert(SM == (BM / TM) * 4 && SN == (BN / TN) * 4, "thread grid must cover the tile");

  __shared__ __align__(16) acc_t As[BK][BM + kPad];  // As[k][m]
  __shared__ __align__(16) acc_t Bs[BK][BN + kPad];  // Bs[k][n]

  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM;
  const int64_t n_tiles = (p.n + BN - 1) / BN;

  // Where each of this thread's tile-load elements sits in the tile (fixed for the whole kernel).
  int a_row[kALoads], a_kk[kALoads], b_kk[kBLoads], b_col[kBLoads];
#pragma unroll
  for (int i = 0; i < kALoads; ++i) {
    const int e = tid + i * kThreads;
    a_kk[i] = p.a_k_fast ? e % BK : e / BM;
    a_row[i] = p.a_k_fast ? e / BK : e % BM;
  }
#pragma unroll
  for (int i = 0; i < kBLoads; ++i) {
    const int e = tid + i * kThreads;
    b_col[i] = p.b_n_fast ? e % BN : e / BK;
    b_kk[i] = p.b_n_fast ? e / BN : e % BK;
  }

  for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
    for (int64_t nt = blockIdx.y; nt < n_tiles; nt += gridDim.y) {
      const int64_t n0 = nt * BN;
      // Each tile-load element's address at k0 = 0 (rows/columns past the edge read nothing).
      const T* a_src[kALoads];
      const T* b_src[kBLoads];
      bool a_in[kALoads], b_in[kBLoads];
#pragma unroll
      for (int i = 0; i < kALoads; ++i) {
        const int64_t row = m0 + a_row[i];
        a_in[i] = row < p.m;
        a_src[i] = p.a + bz * p.a_sb + (a_in[i] ? row : 0) * p.a_sm + a_kk[i] * p.a_sk;
      }
#pragma unroll
      for (int i = 0; i < kBLoads; ++i) {
        const int64_t col = n0 + b_col[i];
        b_in[i] = col < p.n;
        b_src[i] = p.b + bz * p.b_sb + (b_in[i] ? col : 0) * p.b_sn + b_kk[i] * p.b_sk;
      }

      acc_t ra[kALoads], rb[kBLoads];
      auto load = [&](int64_t k0) {
        const int64_t a_step = k0 * p.a_sk, b_step = k0 * p.b_sk;
#pragma unroll
        for (int i = 0; i < kALoads; ++i) {
          ra[i] = (a_in[i] && k0 + a_kk[i] < p.k) ? static_cast<acc_t>(a_src[i][a_step]) : acc_t(0);
        }
#pragma unroll
        for (int i = 0; i < kBLoads; ++i) {
          rb[i] = (b_in[i] && k0 + b_kk[i] < p.k) ? static_cast<acc_t>(b_src[i][b_step]) : acc_t(0);
        }
      };

      acc_t acc[TM][TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = acc_t(0);

      load(0);
      for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
        for (int i = 0; i < kALoads; ++i) As[a_kk[i]][a_row[i]] = ra[i];
#pragma unroll
        for (int i = 0; i < kBLoads; ++i) Bs[b_kk[i]][b_col[i]] = rb[i];
        __syncthreads();
        if (k0 + BK < p.k) load(k0 + BK);  // in flight while this slice is multiplied
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          acc_t af[TM], bf[TN];
#pragma unroll
          for (int r = 0; r < RM; ++r)
#pragma unroll
            for (int i = 0; i < 4; ++i) af[r * 4 + i] = As[kk][r * SM + ty * 4 + i];
#pragma unroll
          for (int r = 0; r < RN; ++r)
#pragma unroll
            for (int j = 0; j < 4; ++j) bf[r * 4 + j] = Bs[kk][r * SN + tx * 4 + j];
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] += af[i] * bf[j];
        }
        __syncthreads();
      }

      const T* C = p.c + bz * p.c_sb;
      T* D = p.d + bz * p.d_sb;
#pragma unroll
      for (int r = 0; r < RM; ++r)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = m0 + r * SM + ty * 4 + i;
          if (row >= p.m) continue;
#pragma unroll
          for (int s = 0; s < RN; ++s)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int64_t col = n0 + s * SN + tx * 4 + j;
              if (col < p.n) gemm_store(p, C, D, row, col, acc[r * 4 + i][s * 4 + j]);
            }
        }
    }
  }
}

// Tile shapes. Large: 128 x 128 x 8, 8 x 8 per thread (64 multiply-adds per shared load pair);
// small: 64 x 64 x 16, 4 x 4 per thread, for products too small to fill the device with large tiles.
// MinBlocks: blocks per multiprocessor the register budget must allow (nvcc's __launch_bounds__).
struct LargeTile { static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, MinBlocks = 1; };
struct SmallTile { static constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4, MinBlocks = 2; };
// float64 (8-byte accumulators) always takes the small tile, without the two-blocks register cap.
struct WideTile { static constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4, MinBlocks = 1; };

template <typename Tile, typename T>
void launch_gemm_tiled(Stream stream, const GemmParams<T>& p) {
  constexpr int kThreads = (Tile::BM / Tile::TM) * (Tile::BN / Tile::TN);
  const int64_t m_tiles = (p.m + Tile::BM - 1) / Tile::BM, n_tiles = (p.n + Tile::BN - 1) / Tile::BN;
  // gridDim.y and .z stop at 65535: the kernel loops over the rest.
  const dim3 grid(static_cast<unsigned>(m_tiles), capped_grid(n_tiles).x, capped_grid(p.batch).x);
  launch("foo::gemm", gemm_tiled_kernel<T, Tile::BM, Tile::BN, Tile::BK, Tile::TM, Tile::TN, Tile::MinBlocks>, grid,
         dim3(kThreads), 0, stream, p);
}

// Blocks that run at once on the device: the large tile is used when it still gives every
// multiprocessor a block.
int concurrent_blocks() {
#if defined(__CUDACC__)
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 108;
  }
  return sms;
#else
  return 8;  // sim: a few host threads run blocks; fewer, larger tiles mean fewer fiber switches
#endif
}

template <typename T>
void launch_gemm(Stream stream, const GemmParams<T>& p) {
  if constexpr (sizeof(opmath_t<T>) > 4) {
    launch_gemm_tiled<WideTile>(stream, p);
  } else {
    const int64_t large_tiles =
        ((p.m + LargeTile::BM - 1) / LargeTile::BM) * ((p.n + LargeTile::BN - 1) / LargeTile::BN) * p.batch;
    if (large_tiles >= concurrent_blocks()) launch_gemm_tiled<LargeTile>(stream, p);
    else launch_gemm_tiled<SmallTile>(stream, p);
  }
}


int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

template <typename T>
struct GemvParams {
  const T* a;
  const T* x;
  const T* c;
  T* y;
  int64_t m, k, a_sm, a_sk, x_s, c_s, y_s;
  opmath_t<T> alpha, beta;
  bool use_c;
};

template <typename T>
__device__ __forceinline__ void gemv_store(const GemvParams<T>& p, int64_t row, opmath_t<T> acc) {
  using acc_t = opmath_t<T>;
  acc_t v = p.k > 0 ? p.alpha * acc : acc_t(0);
  if (p.use_c) v += p.beta * static_cast<acc_t>(p.c[row * p.c_s]);
  p.y[row * p.y_s] = cast<T>(v);
}

// One row per thread: for a with unit row stride (column-major), consecutive threads read
// consecutive addresses. No communication between threads.
template <typename T>
__global__ void gemv_row_per_thread_kernel(GemvParams<T> p) {
  using acc_t = opmath_t<T>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.m) return;
  acc_t acc(0);
  for (int64_t j = 0; j < p.k; ++j) {
    acc += static_cast<acc_t>(p.a[row * p.a_sm + j * p.a_sk]) * static_cast<acc_t>(p.x[j * p.x_s]);
  }
  gemv_store(p, row, acc);
}

// TPR threads per row, 256 / TPR rows per block; partial sums reduced in shared memory.
template <typename T, int TPR>
__global__ void __launch_bounds__(256) gemv_reduce_kernel(GemvParams<T> p) {
  using acc_t = opmath_t<T>;
  constexpr int kRows = 256 / TPR;
  __shared__ acc_t partial[256];
  const int tid = threadIdx.x, lane = tid % TPR;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRows + tid / TPR;
  acc_t acc(0);
  if (row < p.m) {
    const T* a = p.a + row * p.a_sm;
    for (int64_t j = lane; j < p.k; j += TPR) {
      acc += static_cast<acc_t>(a[j * p.a_sk]) * static_cast<acc_t>(p.x[j * p.x_s]);
    }
  }
  partial[tid] = acc;
  __syncthreads();
#pragma unroll
  for (int w = TPR / 2; w > 0; w /= 2) {
    if (lane < w) partial[tid] += partial[tid + w];
    __syncthreads();
  }
  if (lane == 0 && row < p.m) gemv_store(p, row, partial[tid]);
}

template <typename T>
void launch_gemv(Stream stream, const GemvParams<T>& p) {
  if (p.k > 0 && !(p.a_sm == 1 && abs64(p.a_sk) > 1 && p.m >= 512)) {
    if (p.m < 512) {
      launch("foo::gemv", gemv_reduce_kernel<T, 256>, dim3(static_cast<unsigned>(p.m)), dim3(256), 0, stream, p);
    } else {
      launch("foo::gemv", gemv_reduce_kernel<T, 32>, dim3(static_cast<unsigned>((p.m + 7) / 8)), dim3(256), 0,
             stream, p);
    }
    return;
  }
  launch_independent("foo::gemv", gemv_row_per_thread_kernel<T>, blocks_for(p.m), dim3(256), stream, p);
}

}  // namespace

void gemm(Stream stream, const GemmArgs& args) {
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  dispatch<kFloatingTypes>(args.dtype, "foo::gemm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using acc_t = opmath_t<T>;
    GemmParams<T> p;
    p.a = static_cast<const T*>(args.a.data);
    p.b = static_cast<const T*>(args.b.data);
    p.c = static_cast<const T*>(args.c.data);
    p.d = static_cast<T*>(args.d.data);
    p.batch = args.batch;
    p.m = args.m;
    p.n = args.n;
    p.k = args.k;
    p.a_sb = args.a.batch_stride, p.a_sm = args.a.row_stride, p.a_sk = args.a.col_stride;
    p.b_sb = args.b.batch_stride, p.b_sk = args.b.row_stride, p.b_sn = args.b.col_stride;
    p.c_sb = args.c.batch_stride, p.c_sm = args.c.row_stride, p.c_sn = args.c.col_stride;
    p.d_sb = args.d.batch_stride, p.d_sm = args.d.row_stride, p.d_sn = args.d.col_stride;
    p.alpha = static_cast<acc_t>(args.alpha);
    p.beta = static_cast<acc_t>(args.beta);
    p.use_c = args.beta != 0.0;
    // Consecutive threads go along the index with the smaller stride (ties: the contiguous one).
    p.a_k_fast = p.a_sk == 1 || (p.a_sm != 1 && abs64(p.a_sk) <= abs64(p.a_sm));
    p.b_n_fast = p.b_sn == 1 || (p.b_sk != 1 && abs64(p.b_sn) <= abs64(p.b_sk));
    launch_gemm(stream, p);
  });
}

void gemv(Stream stream, const GemvArgs& args) {
  if (args.m == 0) return;
  dispatch<kFloatingTypes>(args.dtype, "foo::gemv", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using acc_t = opmath_t<T>;
    GemvParams<T> p;
    p.a = static_cast<const T*>(args.a);
    p.x = static_cast<const T*>(args.x);
    p.c = static_cast<const T*>(args.c);
    p.y = static_cast<T*>(args.y);
    p.m = args.m;
    p.k = args.k;
    p.a_sm = args.a_row_stride;
    p.a_sk = args.a_col_stride;
    p.x_s = args.x_stride;
    p.c_s = args.c_stride;
    p.y_s = args.y_stride;
    p.alpha = static_cast<acc_t>(args.alpha);
    p.beta = static_cast<acc_t>(args.beta);
    p.use_c = args.beta != 0.0;
    launch_gemv(stream, p);
  });
}

}  // namespace foo::kernels::FOO_TARGET
