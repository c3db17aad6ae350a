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

// Defined here, constant-initialised and hidden, so that a kernel reads them without a
// thread_local init-wrapper call and with one __tls_get_addr for all four (local-dynamic TLS)
// instead of one per variable: that is most of an elementwise kernel's cost per thread. Hidden
// means per shared object: kernels must be linked into the same one as csrc/sim (libtorch_foo).
#define FOO_SIM_BUILTIN __attribute__((visibility("hidden")))
inline thread_local uint3 threadIdx FOO_SIM_BUILTIN{0, 0, 0};
inline thread_local uint3 blockIdx FOO_SIM_BUILTIN{0, 0, 0};
inline thread_local dim3 blockDim FOO_SIM_BUILTIN{1, 1, 1};
inline thread_local dim3 gridDim FOO_SIM_BUILTIN{1, 1, 1};
#undef FOO_SIM_BUILTIN

constexpr int warpSize = 32;
