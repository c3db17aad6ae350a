// Stream compaction (compact.h). A block handles tiles of kCompactTile elements, kPerThread
// consecutive elements per thread: it counts its selected elements (block scan), and in the
// write pass numbers them from the tile's offset plus the count of the threads before it. The
// tile offsets are an exclusive scan by one block between the two passes.
#include <cstdint>

#include "kernels/core/block_scan.h"
#include "kernels/ops/compact.h"
#include "kernels/core/dtype.h"
#include "kernels/core/element_bits.h"
#include "kernels/core/kernel.h"

namespace foo::kernels::FOO_TARGET {
namespace {

using namespace scan_detail;

constexpr unsigned kThreads = 256;
constexpr int kPerThread = static_cast<int>(kCompactTile / kThreads);
constexpr int64_t kMaxBlocks = 4096;
static_assert(kPerThread * kThreads == kCompactTile, "a tile is one block's elements");

template <typename F>
__device__ __forceinline__ bool selected(const FlagTensor& flags, int64_t i) {
  return cast<bool>(static_cast<const F*>(flags.data)[offset_of(flags.layout, i)]);
}

// Selected elements among this thread's share of `tile`.
template <typename F>
__device__ __forceinline__ int64_t count_mine(const FlagTensor& flags, int64_t tile) {
  const int64_t first = tile * kCompactTile + static_cast<int64_t>(threadIdx.x) * kPerThread;
  int64_t n = 0;
  for (int j = 0; j < kPerThread; ++j) {
    if (first + j < flags.numel && selected<F>(flags, first + j)) ++n;
  }
  return n;
}

template <typename F>
__global__ void count_tiles(FlagTensor flags, int64_t* offsets) {
  __shared__ int64_t scratch[kWarp];
  const int64_t tiles = compact_tiles(flags.numel);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // uniform over the block
    int64_t total = 0;
    block_exclusive_sum(count_mine<F>(flags, tile), scratch, &total);
    if (threadIdx.x == 0) offsets[tile] = total;
  }
}

// One block: counts -> exclusive offsets, offsets[tiles] = the total.
__global__ void scan_tile_counts(int64_t* offsets, int64_t tiles) {
  __shared__ int64_t scratch[kWarp];
  int64_t carry = 0;
  for (int64_t base = 0; base < tiles; base += blockDim.x) {
    const int64_t k = base + threadIdx.x;
    int64_t total = 0;
    const int64_t before = block_exclusive_sum(k < tiles ? offsets[k] : 0, scratch, &total);
    if (k < tiles) offsets[k] = carry + before;
    carry += total;
  }
  if (threadIdx.x == 0) offsets[tiles] = carry;
}

template <typename E>
__device__ __forceinline__ E* element(void* base, const Layout& layout, int64_t i) {
  return static_cast<E*>(base) + offset_of(layout, i);
}

template <typename F, typename E>
__global__ void write_tiles(FlagTensor flags, const int64_t* offsets, CompactWrite w) {
  __shared__ int64_t scratch[kWarp];
  const int64_t tiles = compact_tiles(flags.numel);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // uniform over the block
    int64_t total = 0;
    int64_t k = offsets[tile] + block_exclusive_sum(count_mine<F>(flags, tile), scratch, &total);
    const int64_t first = tile * kCompactTile + static_cast<int64_t>(threadIdx.x) * kPerThread;
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t i = first + j;
      if (i >= flags.numel || !selected<F>(flags, i)) continue;
      if (w.op == CompactOp::Nonzero) {
        int64_t* row = static_cast<int64_t*>(w.out) + k * w.ndim;
        int64_t rest = i;
        for (int d = w.ndim - 1; d >= 0; --d) {
          const int64_t size = w.sizes[d], q = rest / size;
          row[d] = rest - q * size;
          rest = q;
        }
      } else if (w.op == CompactOp::Select) {
        static_cast<E*>(w.out)[k] = *element<E>(w.data, w.data_layout, i);
      } else {
        *element<E>(w.data, w.data_layout, i) = static_cast<const E*>(w.out)[k];
      }
      ++k;
    }
  }
}

dim3 tile_grid(int64_t tiles) {
  return dim3(static_cast<unsigned>(tiles < 1 ? 1 : tiles > kMaxBlocks ? kMaxBlocks : tiles));
}

// Calls f(TypeTag<F>{}) with F the type flags are read as: any dtype for nonzero, masks (bool or
// uint8) as bytes.
template <typename Fn>
void dispatch_flags(const FlagTensor& flags, const char* name, Fn&& f) {
  if (flags.dtype == DType::Bool || flags.dtype == DType::UInt8) return f(TypeTag<uint8_t>{});
  dispatch<kAllTypes>(flags.dtype, name, f);
}

}  // namespace

void compact_count(Stream stream, const FlagTensor& flags, int64_t* offsets) {
  const int64_t tiles = compact_tiles(flags.numel);
  dispatch_flags(flags, "nonzero", [&](auto tag) {
    using F = typename decltype(tag)::type;
    if (tiles > 0) launch("compact_count", count_tiles<F>, tile_grid(tiles), dim3(kThreads), 0, stream, flags, offsets);
  });
  launch("compact_scan", scan_tile_counts, dim3(1), dim3(1024), 0, stream, offsets, tiles);
}

void compact_write(Stream stream, const FlagTensor& flags, const int64_t* offsets, const CompactWrite& w) {
  const int64_t tiles = compact_tiles(flags.numel);
  if (tiles == 0) return;
  if (w.op == CompactOp::Nonzero) {
    dispatch_flags(flags, "nonzero", [&](auto tag) {
      using F = typename decltype(tag)::type;
      launch("nonzero", write_tiles<F, uint8_t>, tile_grid(tiles), dim3(kThreads), 0, stream, flags, offsets, w);
    });
    return;
  }
  const char* name = w.op == CompactOp::Select ? "masked_select" : "masked_scatter_";
  auto run = [&](auto bits) {
    using E = decltype(bits);
    launch(name, write_tiles<uint8_t, E>, tile_grid(tiles), dim3(kThreads), 0, stream, flags, offsets, w);
  };
  dispatch_element_size(w.element_size, name, run);
}

}  // namespace foo::kernels::FOO_TARGET
