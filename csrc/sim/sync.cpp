// Block-wide barriers. Defined here, out of line, for the reason given in emulation.h.
#include "sim/block_scheduler.h"
#include "sim/emulation.h"

using foo::sim::BlockScheduler;

void __syncthreads() { BlockScheduler::for_collective("__syncthreads").barrier(0, "__syncthreads"); }

int __syncthreads_count(int predicate) {
  return BlockScheduler::for_collective("__syncthreads_count").barrier(predicate, "__syncthreads_count");
}

int __syncthreads_and(int predicate) {
  BlockScheduler& s = BlockScheduler::for_collective("__syncthreads_and");
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  return s.barrier(predicate, "__syncthreads_and") == static_cast<int>(n);
}

int __syncthreads_or(int predicate) {
  return BlockScheduler::for_collective("__syncthreads_or").barrier(predicate, "__syncthreads_or") != 0;
}

void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
