// The built-ins of the running emulated thread, for kernels outside libtorch_foo (extensions
// compiled with FOO_SIM_EXTENSION, see builtins.h): the variables are hidden per shared object,
// so an extension's own copies would never be written by the block scheduler.
#include "sim/builtins.h"

#define FOO_SIM_EXPORT __attribute__((visibility("default")))

namespace foo::sim {

FOO_SIM_EXPORT uint3 exported_thread_idx() { return threadIdx; }
FOO_SIM_EXPORT uint3 exported_block_idx() { return blockIdx; }
FOO_SIM_EXPORT dim3 exported_block_dim() { return blockDim; }
FOO_SIM_EXPORT dim3 exported_grid_dim() { return gridDim; }

}  // namespace foo::sim
