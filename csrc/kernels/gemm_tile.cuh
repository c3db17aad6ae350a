#pragma once
// The register-tiled shared-memory GEMM core, shared by the matrix products (gemm.cu) and the
// implicit-GEMM convolutions (conv.cu). It computes, for every batch entry b < shape.batch,
//   D[b](row, col) = sum_k A[b](row, k) * B[b](k, col)       row < m, col < n, k < k
// and hands each finished element to an epilogue, which writes it wherever it belongs.
//
// Each block computes a BM x BN tile of D, walking k in steps of BK: its threads copy the BM x BK
// slice of A and the BK x BN slice of B into shared memory (converted to the accumulation type, A
// stored k-major so both are read along rows), then each thread accumulates a TM x TN register
// tile from them. The next slices are loaded into registers while the current ones are
// multiplied, so each k step has exactly two barriers (after the store, before the next store).
//
// Operands are policies, so A and B need not be strided matrices: a convolution's B is the
// im2col matrix of its input, gathered on the fly (no im2col buffer). An operand provides
//   using Cursor = ...;                                   what stays fixed while k moves
//   __device__ Cursor cursor(int64_t b, int64_t outer) const;  outer: the row (A) / column (B)
//   __device__ Acc load(const Cursor&, int64_t k) const;  element (b, outer, k); k < shape.k
//   bool k_fast;   the tile load runs k across consecutive threads (else the row/column): set it
//                  along the operand's smaller memory stride so global reads coalesce.
// An epilogue provides __device__ void store(int64_t b, int64_t row, int64_t col, Acc acc) const,
// called once per element of D (acc is 0 when shape.k == 0).
#include <cstdint>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace gemm_tile {

struct Shape {
  int64_t batch, m, n, k;
};

// The accumulator of a product of T: opmath_t<T> for floating types (float for 16-bit floats).
// Integers accumulate in unsigned 32-bit (8- to 32-bit types) or 64-bit (int64) arithmetic,
// which wraps modulo 2^bits by definition: a sum of products reduced modulo 2^bits does not depend
// on its order, so the value cast back to T equals the CPU's (which wraps in T as it goes) exactly,
// whatever the tile order, and no signed overflow (undefined behaviour) can happen.
template <typename T, bool = std::is_integral_v<T>>
struct AccImpl {
  using type = opmath_t<T>;
};
template <typename T>
struct AccImpl<T, true> {
  using type = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;
};
template <typename T>
using acc_t = typename AccImpl<T>::type;

// Tile shapes. Large: 128 x 128 x 8, 8 x 8 per thread (64 multiply-adds per shared load pair);
// small: 64 x 64 x 16, 4 x 4 per thread, for products too small to fill the device with large tiles.
// MinBlocks: blocks per multiprocessor the register budget must allow (nvcc's __launch_bounds__).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int MinBlocks_>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, MinBlocks = MinBlocks_;
  static constexpr int kThreads = (BM / TM) * (BN / TN);
};
using LargeTile = Tile<128, 128, 8, 8, 8, 1>;
using SmallTile = Tile<64, 64, 16, 4, 4, 2>;
// 8-byte accumulators (float64) always take the small tile, without the two-blocks register cap.
using WideTile = Tile<64, 64, 16, 4, 4, 1>;

template <typename Acc, class T, class A, class B, class E>
__global__ void __launch_bounds__(T::kThreads, T::MinBlocks) tiled_kernel(Shape s, A a, B b, E e) {
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, TM = T::TM, TN = T::TN;
  constexpr int kThreads = T::kThreads;
  constexpr int kALoads = BM * BK / kThreads;  // elements of A's tile each thread copies
  constexpr int kBLoads = BK * BN / kThreads;
  constexpr int kPad = 4;                      // keeps the k-major stores free of bank conflicts
  constexpr int RM = TM / 4, RN = TN / 4;      // a thread's tile: RM x RN blocks of 4 x 4 ...
  constexpr int SM = BM / RM, SN = BN / RN;    // ... spaced SM rows and SN columns apart
  static_assert(TM % 4 == 0 && TN % 4 == 0, "register tile is made of 4x4 blocks");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0, "tile loads must divide evenly");
  static_assert(SM == (BM / TM) * 4 && SN == (BN / TN) * 4, "thread grid must cover the tile");

  __shared__ __align__(16) Acc As[BK][BM + kPad];  // As[k][m]
  __shared__ __align__(16) Acc Bs[BK][BN + kPad];  // Bs[k][n]

  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM;
  const int64_t n_tiles = (s.n + BN - 1) / BN;

  // Where each of this thread's tile-load elements sits in the tile (fixed for the whole kernel).
  int a_row[kALoads], a_kk[kALoads], b_kk[kBLoads], b_col[kBLoads];
#pragma unroll
  for (int i = 0; i < kALoads; ++i) {
    const int idx = tid + i * kThreads;
    a_kk[i] = a.k_fast ? idx % BK : idx / BM;
    a_row[i] = a.k_fast ? idx / BK : idx % BM;
  }
#pragma unroll
  for (int i = 0; i < kBLoads; ++i) {
    const int idx = tid + i * kThreads;
    b_col[i] = b.k_fast ? idx / BK : idx % BN;
    b_kk[i] = b.k_fast ? idx % BK : idx / BN;
  }

  for (int64_t bz = blockIdx.z; bz < s.batch; bz += gridDim.z) {
    for (int64_t nt = blockIdx.y; nt < n_tiles; nt += gridDim.y) {
      const int64_t n0 = nt * BN;
      // Each tile-load element's cursor (rows/columns past the edge read nothing).
      typename A::Cursor a_cur[kALoads];
      typename B::Cursor b_cur[kBLoads];
      bool a_in[kALoads], b_in[kBLoads];
#pragma unroll
      for (int i = 0; i < kALoads; ++i) {
        const int64_t row = m0 + a_row[i];
        a_in[i] = row < s.m;
        a_cur[i] = a.cursor(bz, a_in[i] ? row : 0);
      }
#pragma unroll
      for (int i = 0; i < kBLoads; ++i) {
        const int64_t col = n0 + b_col[i];
        b_in[i] = col < s.n;
        b_cur[i] = b.cursor(bz, b_in[i] ? col : 0);
      }

      Acc ra[kALoads], rb[kBLoads];
      auto load = [&](int64_t k0) {
#pragma unroll
        for (int i = 0; i < kALoads; ++i) {
          const int64_t k = k0 + a_kk[i];
          ra[i] = (a_in[i] && k < s.k) ? a.load(a_cur[i], k) : Acc(0);
        }
#pragma unroll
        for (int i = 0; i < kBLoads; ++i) {
          const int64_t k = k0 + b_kk[i];
          rb[i] = (b_in[i] && k < s.k) ? b.load(b_cur[i], k) : Acc(0);
        }
      };

      Acc acc[TM][TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);

      load(0);
      for (int64_t k0 = 0; k0 < s.k; k0 += BK) {
#pragma unroll
        for (int i = 0; i < kALoads; ++i) As[a_kk[i]][a_row[i]] = ra[i];
#pragma unroll
        for (int i = 0; i < kBLoads; ++i) Bs[b_kk[i]][b_col[i]] = rb[i];
        __syncthreads();
        if (k0 + BK < s.k) load(k0 + BK);  // in flight while this slice is multiplied
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          Acc af[TM], bf[TN];
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

#pragma unroll
      for (int r = 0; r < RM; ++r)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = m0 + r * SM + ty * 4 + i;
          if (row >= s.m) continue;
#pragma unroll
          for (int q = 0; q < RN; ++q)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int64_t col = n0 + q * SN + tx * 4 + j;
              if (col < s.n) e.store(bz, row, col, acc[r * 4 + i][q * 4 + j]);
            }
        }
    }
  }
}

template <class T, typename Acc, class A, class B, class E>
void launch_tiled(const char* name, Stream stream, const Shape& s, const A& a, const B& b, const E& e) {
  const int64_t m_tiles = (s.m + T::BM - 1) / T::BM, n_tiles = (s.n + T::BN - 1) / T::BN;
  // gridDim.y and .z stop at 65535: the kernel loops over the rest.
  const dim3 grid(static_cast<unsigned>(m_tiles), capped_grid(n_tiles).x, capped_grid(s.batch).x);
  FOO_TARGET::launch(name, tiled_kernel<Acc, T, A, B, E>, grid, dim3(T::kThreads), 0, stream, s, a, b, e);
}

// Blocks that run at once on the device: the large tile is used when it still gives every
// multiprocessor a block.
inline int concurrent_blocks() {
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

// Launches the product with the tile that suits its size and accumulation type. m, n and batch
// must be nonzero (the caller returns early otherwise).
template <typename Acc, class A, class B, class E>
void launch_product(const char* name, Stream stream, const Shape& s, const A& a, const B& b, const E& e) {
  if constexpr (sizeof(Acc) > 4) {
    launch_tiled<WideTile, Acc>(name, stream, s, a, b, e);
  } else {
    const int64_t large_tiles =
        ((s.m + LargeTile::BM - 1) / LargeTile::BM) * ((s.n + LargeTile::BN - 1) / LargeTile::BN) * s.batch;
    // Large tiles need enough of them to fill the device, and rows and columns to fill them: a
    // skinny product (a convolution with few channels) would waste over half of each large tile.
    const bool fills_large = s.m > LargeTile::BM / 2 && s.n > LargeTile::BN / 2;
    if (large_tiles >= concurrent_blocks() && fills_large) launch_tiled<LargeTile, Acc>(name, stream, s, a, b, e);
    else launch_tiled<SmallTile, Acc>(name, stream, s, a, b, e);
  }
}

}  // namespace gemm_tile
}  // namespace foo::kernels::FOO_TARGET
