#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/ops/reduce_plan.h"

// The reduction launcher (docs/kernels.md, "Reductions"): reduces the dense [outer, size, inner]
// input of `args` over `size` with `args.op`. `args.workspace` must hold
// reduce_workspace_bytes(outer, size, inner) bytes on the device when that is nonzero.
FOO_DECLARE_KERNEL(void, reduce, (Stream stream, const ReduceArgs& args))
