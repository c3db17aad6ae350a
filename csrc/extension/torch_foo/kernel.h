#pragma once
// torch_foo/kernel.h — include it from an extension's kernel source (.cu). docs/extensions.md.
//
// The same .cu file is compiled twice: as host C++ against the emulation of CUDA's execution
// model for the sim target (always), and by nvcc for the cuda target (when nvcc is present).
// FOO_TARGET names the target being compiled (sim | cuda): put the host launchers in
// `namespace <yours>::FOO_TARGET` and declare them for the host side with FOO_DECLARE_KERNEL_IN
// (torch_foo/extension.h). Inside, write CUDA as usual, except:
//   - launch through torch_foo::launch / launch_independent, never <<<...>>>;
//   - dynamic shared memory is FOO_DYNAMIC_SHARED(T, name), not `extern __shared__ T name[]`.
#include "kernels/core/block_reduce.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/elementwise.cuh"
#include "kernels/core/formulas.cuh"
#include "kernels/core/kernel.h"
#include "kernels/core/math.cuh"

namespace torch_foo {
// launch, launch_independent, blocks_for, launch_elementwise, warp/block reductions
// (kernels/core/block_reduce.h), and the math shim of the target compiled: math::exp/log/tanh/...
// (kernels/core/math.cuh) and the helpers the manifest's pointwise formulas call (kernels/core/formulas.cuh).
using namespace ::foo::kernels::FOO_TARGET;
// Stream, DType, half_t, bfloat16_t, opmath_t, cast, dispatch<Types>(...).
using namespace ::foo::kernels;
}  // namespace torch_foo
