#pragma once
// The reduction launcher's interface, shared by the kernel source (reduce.cu) and the host side
// (csrc/aten/ops/reduce.cpp through kernels/ops/reduce.h): what to reduce, and how the work is split —
// the host needs the split to size the workspace it allocates. Plain C++: no CUDA, no ATen.
#include <cstdint>

#include "kernels/core/dtype.h"

namespace foo::kernels {

enum class ReduceOp : int8_t {
  Sum,     // sum in the accumulation type (int64 for integral outputs, float for 16-bit floats)
  Mean,    // sum / size
  Max,     // amax: NaN propagates
  Min,     // amin
  ArgMax,  // index of the first maximum (the first NaN wins); values optionally
  ArgMin,
  Var,     // Welford; m2 / max(0, n - correction); optionally the mean too
  Std,     // sqrt(var); optionally the mean too
  All,     // every element nonzero (NaN is nonzero); out_dtype Bool, or UInt8 for uint8 input
  Any,     // some element nonzero
  Norm,    // vector p-norm of `ord`: sum |x|^ord ^ (1/ord); 0: count of nonzeros; +-inf: max/min |x|
  Prod,    // product in out_dtype (== in_dtype; float for 16-bit floats); integers wrap; bool: all
};

// The input is a dense [outer, size, inner] array (element (o, k, i) at (o * size + k) * inner + i)
// reduced over `size`: output element o * inner + i. inner == 1 is the row case.
struct ReduceArgs {
  ReduceOp op;
  DType in_dtype;
  DType out_dtype;  // of `out`; ArgMax/ArgMin: of the values written to `out` (if any)
  const void* in;
  void* out;         // ArgMax/ArgMin: may be null (indices only)
  int64_t* indices;  // ArgMax/ArgMin only
  void* means;       // Var/Std: may receive the mean too (var_mean, std_mean), of out_dtype; else null
  int64_t outer, size, inner;
  double correction;  // Var/Std
  double ord;         // Norm
  void* workspace;    // reduce_workspace_bytes(...) bytes, or null when that is 0
};

enum class ReduceKernel : int8_t {
  Warp,    // one warp per output, for short reductions (size <= kWarpMaxSize)
  Block,   // one block per output (or per chunk of it), warp shuffles + shared memory across warps
  Column,  // inner >= kColumnMinInner: a block covers 32 adjacent outputs, threads split `size`
};

constexpr int kReduceThreads = 256;        // threads of every reduction block
constexpr int kColumnWidth = 32;           // Column: outputs per block (blockDim.x)
constexpr int kColumnHeight = 8;           // Column: threads along `size` (blockDim.y)
constexpr int64_t kWarpMaxSize = 512;      // Warp kernel up to this reduction size
constexpr int64_t kColumnMinInner = 16;    // Column kernel from this inner extent on
constexpr int64_t kBlockChunk = 16384;     // Block: at most this many elements per block (64 a thread)
constexpr int64_t kColumnChunk = 2048;     // Column: at most this many elements per column and block
constexpr int64_t kTargetBlocks = 1024;    // split long reductions until about this many blocks exist
constexpr int64_t kMaxGridBlocks = 4096;   // grid cap: kernels are grid-stride loops over their work
constexpr int64_t kReduceAccBytes = 32;    // upper bound of sizeof(accumulator) of every op

struct ReducePlan {
  ReduceKernel kernel;
  int64_t splits;  // > 1: each output's reduction is cut into `splits` chunks, combined by a 2nd pass
  int64_t blocks;  // grid of the first pass
};

inline int64_t reduce_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t reduce_min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t reduce_max(int64_t a, int64_t b) { return a > b ? a : b; }

// How finely a plan splits. The defaults suit a GPU, which needs ~1024 blocks to fill. The sim
// target runs blocks on a few host threads and pays a fiber switch per thread and collective, so
// it asks for fewer, longer chunks (reduce.cu). The host sizes the workspace with the defaults:
// a tuning may only lower target_blocks and raise block_chunk (never more splits).
struct ReduceTuning {
  int64_t target_blocks = kTargetBlocks;
  int64_t block_chunk = kBlockChunk;
};

// Splitting bounds the elements one thread folds sequentially (for precision: a float sum of
// 10^6 elements stays a tree of short sums) and gives few long reductions enough blocks.
inline ReducePlan plan_reduction(int64_t outer, int64_t size, int64_t inner, ReduceTuning t = {}) {
  const int64_t outputs = outer * inner;
  ReducePlan p{ReduceKernel::Warp, 1, 1};
  if (outputs == 0) return p;
  if (inner >= kColumnMinInner) {
    const int64_t tiles = reduce_ceil_div(outputs, kColumnWidth);
    int64_t splits = reduce_ceil_div(size, kColumnChunk);
    if (tiles < t.target_blocks) {
      splits = reduce_max(splits, reduce_min(reduce_ceil_div(t.target_blocks, tiles), reduce_ceil_div(size, 256)));
    }
    p = {ReduceKernel::Column, reduce_max(splits, 1), 0};
    p.blocks = reduce_min(tiles * p.splits, kMaxGridBlocks);
  } else if (size <= kWarpMaxSize) {
    p = {ReduceKernel::Warp, 1, reduce_min(reduce_ceil_div(outputs, kReduceThreads / 32), kMaxGridBlocks)};
  } else {
    int64_t splits = reduce_ceil_div(size, t.block_chunk);
    if (outputs < t.target_blocks) {
      splits = reduce_max(splits, reduce_min(reduce_ceil_div(t.target_blocks, outputs), reduce_ceil_div(size, 2048)));
    }
    p = {ReduceKernel::Block, reduce_max(splits, 1), 0};
    p.blocks = reduce_min(outputs * p.splits, kMaxGridBlocks);
  }
  return p;
}

// Bytes of workspace the launcher needs (the partial accumulators of split reductions).
inline int64_t reduce_workspace_bytes(int64_t outer, int64_t size, int64_t inner) {
  const ReducePlan p = plan_reduction(outer, size, inner);
  return p.splits > 1 ? outer * inner * p.splits * kReduceAccBytes : 0;
}

}  // namespace foo::kernels
