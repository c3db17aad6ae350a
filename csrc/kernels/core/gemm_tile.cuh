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

#include "kernels/core/dtype.h"
#include "kernels/core/kernel.h"
#if !defined(__CUDACC__)
#include "sim/fast_paths.h"
#endif

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

// Small products: a thread per element of D, no shared memory and no barrier, so on sim it runs
// as an independent launch (no fibers) and an 8x8 matmul costs about a launch. Each element sums
// its k products in the tiled kernel's order (k ascending, one multiply-add each, in Acc), so
// results are bit-identical to the tiled path on both targets.
template <typename Acc, class A, class B, class E>
__global__ void small_product_kernel(Shape s, A a, B b, E e) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= s.batch * s.m * s.n) return;
  const int64_t col = i % s.n, row = i / s.n % s.m, bz = i / (s.n * s.m);
  const typename A::Cursor ac = a.cursor(bz, row);
  const typename B::Cursor bc = b.cursor(bz, col);
  Acc acc(0);
  for (int64_t k = 0; k < s.k; ++k) acc += a.load(ac, k) * b.load(bc, k);
  e.store(bz, row, col, acc);
}

// The sim target's product above the small path: a thread per run of kPanelCols adjacent
// elements of a row of D (kPanelRows rows), no shared memory and no barrier, so it runs as an
// independent launch (no fibers). Each element sums its k products in the tiled kernel's order (k
// ascending, one multiply-add each, in Acc), so results are bit-identical to the tiled path. On sim
// the tiled kernel pays fiber switches at two barriers per k step and its 8x8 register tile (64
// accumulators) spills from the host's 16 SSE registers; 1 x 16 accumulators are four registers and
// the update over them vectorises (4x8, 2x16, 1x32 and 4x4 measured 2-3x slower: GCC's SLP shuffles
// the multi-row shapes). On a GPU this would read each operand element many times from global
// memory instead of once per tile from shared memory, so cuda keeps the tiled kernel.
constexpr int kPanelRows = 1, kPanelCols = 16;

// Whether an operand's neighbouring rows (A) / columns (B) are adjacent in memory, so that a run of
// them at one k is one contiguous load: operands that can say so provide
//   bool outer_adjacent() const;  and  template <int N> void load_adjacent(Cursor, int64_t k, Acc (&)[N]) const;
template <class Op, class = void>
struct HasAdjacentOuter : std::false_type {};
template <class Op>
struct HasAdjacentOuter<Op, std::void_t<decltype(std::declval<const Op&>().outer_adjacent())>> : std::true_type {};

template <typename Acc, class A, class B, class E>
__global__ void panel_product_kernel(Shape s, A a, B b, E e) {
  const int64_t row_panels = (s.m + kPanelRows - 1) / kPanelRows, col_panels = (s.n + kPanelCols - 1) / kPanelCols;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= s.batch * row_panels * col_panels) return;
  const int64_t row0 = i % row_panels * kPanelRows, col0 = i / row_panels % col_panels * kPanelCols;
  const int64_t bz = i / (row_panels * col_panels);
  // Rows and columns past the edge read row/column 0 (valid memory) and are not stored.
  typename A::Cursor ac[kPanelRows];
  typename B::Cursor bc[kPanelCols];
  for (int r = 0; r < kPanelRows; ++r) ac[r] = a.cursor(bz, row0 + r < s.m ? row0 + r : 0);
  for (int c = 0; c < kPanelCols; ++c) bc[c] = b.cursor(bz, col0 + c < s.n ? col0 + c : 0);
  Acc acc[kPanelRows][kPanelCols];
  for (int r = 0; r < kPanelRows; ++r)
    for (int c = 0; c < kPanelCols; ++c) acc[r][c] = Acc(0);
  auto multiply = [&](auto load_b) {
    for (int64_t k = 0; k < s.k; ++k) {
      Acc af[kPanelRows], bf[kPanelCols];
      for (int r = 0; r < kPanelRows; ++r) af[r] = a.load(ac[r], k);
      load_b(bf, k);
      for (int r = 0; r < kPanelRows; ++r)
        for (int c = 0; c < kPanelCols; ++c) acc[r][c] += af[r] * bf[c];
    }
  };
  bool multiplied = false;
  if constexpr (HasAdjacentOuter<B>::value) {
    if (b.outer_adjacent() && col0 + kPanelCols <= s.n) {
      // The panel's columns are adjacent in memory: one contiguous (vector) load per k.
      multiply([&](Acc(&bf)[kPanelCols], int64_t k) { b.load_adjacent(bc[0], k, bf); });
      multiplied = true;
    }
  }
  if (!multiplied) {
    multiply([&](Acc(&bf)[kPanelCols], int64_t k) {
      for (int c = 0; c < kPanelCols; ++c) bf[c] = b.load(bc[c], k);
    });
  }
  for (int r = 0; r < kPanelRows && row0 + r < s.m; ++r)
    for (int c = 0; c < kPanelCols && col0 + c < s.n; ++c) e.store(bz, row0 + r, col0 + c, acc[r][c]);
}

// Whether products above the small path run panel_product_kernel: a sim-only path
// (sim/fast_paths.h), on unless switched off; tests/test_gemm.py and test_cnn.py switch it off,
// so the tiled kernel cuda runs keeps being checked on sim: its barriers, shared memory and tile
// edges.
inline bool panel_products() {
#if defined(__CUDACC__)
  return false;
#else
  return foo::sim::sim_only_paths();
#endif
}

// Up to this many multiply-adds a product takes the small path: below it a tile's barriers and
// shared-memory staging cost more than they save (a 32x32x32 product, or a batch of small ones).
constexpr int64_t kSmallProductMacs = int64_t{1} << 15;

// Launches the product with the tile that suits its size and accumulation type. m, n and batch
// must be nonzero (the caller returns early otherwise).
template <typename Acc, class A, class B, class E>
void launch_product(const char* name, Stream stream, const Shape& s, const A& a, const B& b, const E& e) {
  const int64_t outputs = s.batch * s.m * s.n;
  if (outputs * (s.k > 0 ? s.k : 1) <= kSmallProductMacs) {
    FOO_TARGET::launch_independent(name, small_product_kernel<Acc, A, B, E>, blocks_for(outputs, threads_for(outputs)),
                       dim3(threads_for(outputs)), stream, s, a, b, e);
    return;
  }
  if (panel_products()) {
    const int64_t panels = s.batch * ((s.m + kPanelRows - 1) / kPanelRows) * ((s.n + kPanelCols - 1) / kPanelCols);
    FOO_TARGET::launch_independent(name, panel_product_kernel<Acc, A, B, E>, blocks_for(panels, threads_for(panels)),
                                   dim3(threads_for(panels)), stream, s, a, b, e);
    return;
  }
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
