#pragma once
// Host emulation of CUDA's execution model: what a kernel source (*.cu) sees when the sim target
// compiles it as C++ instead of nvcc. docs/emulation.md describes the model; in short:
//  - a block's threads are fibers on one host thread (csrc/sim/block_scheduler.h), so
//    __syncthreads and warp collectives suspend a thread mid-kernel; blocks run in parallel on
//    a pool of host threads (thread_pool.h);
//  - built-ins (threadIdx, ...) are thread_local and rewritten at every fiber switch;
//  - __shared__ is `static thread_local`: a block runs wholly on one host thread and a host
//    thread runs one block at a time, so the variable is exactly per block.
// Torch-free: csrc/sim depends on nothing of torch.
#include <cstddef>
#include <cstdint>

#include "sim/atomics.h"
#include "sim/builtins.h"
#include "sim/intrinsics.h"
#include "sim/launch.h"
#include "sim/warp.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __constant__
#define __shared__ static thread_local

// CUDA's `extern __shared__ T name[];` has no C++ equivalent; kernels write
// FOO_DYNAMIC_SHARED(T, name) instead (kernel.h gives the nvcc spelling): a T* to the block's
// dynamic shared memory, the launch's shared_bytes, 16-byte aligned.
#define FOO_DYNAMIC_SHARED(T, name) T* name = reinterpret_cast<T*>(::foo::sim::dynamic_shared_memory())

// Barriers and warp collectives are defined out of line (sync.cpp, warp.cpp), never inline: a
// call the compiler cannot see into may change any global, so after it returns the kernel
// re-reads threadIdx, which the scheduler rewrote while other fibers ran. Inline, the compiler
// could keep the previous thread's value in a register across the switch. (The address of a
// thread_local may be kept: fibers never move to another host thread.)
void __syncthreads();
int __syncthreads_count(int predicate);
int __syncthreads_and(int predicate);
int __syncthreads_or(int predicate);
void __threadfence();
void __threadfence_block();
