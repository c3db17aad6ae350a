#pragma once
// CUDA's vector types and built-in variables as the sim target sees them. The built-ins are
// thread_local: each host thread runs one block at a time, and the block scheduler rewrites
// threadIdx whenever it switches to another emulated thread (fiber) of that block.

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

constexpr int warpSize = 32;
