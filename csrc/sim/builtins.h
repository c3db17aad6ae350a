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

#if defined(FOO_SIM_EXTENSION)
// A kernel compiled into a separate shared object (a user's extension, docs/extensions.md) cannot
// see libtorch_foo's hidden built-ins below: it reads the same variables through functions that
// libtorch_foo exports (builtins_export.cpp). A call per read, so slower, but the same values.
namespace foo::sim {
uint3 exported_thread_idx();
uint3 exported_block_idx();
dim3 exported_block_dim();
dim3 exported_grid_dim();
}  // namespace foo::sim
#define threadIdx (::foo::sim::exported_thread_idx())
#define blockIdx (::foo::sim::exported_block_idx())
#define blockDim (::foo::sim::exported_block_dim())
#define gridDim (::foo::sim::exported_grid_dim())
#else
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

#endif

constexpr int warpSize = 32;
