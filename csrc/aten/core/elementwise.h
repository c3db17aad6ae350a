#pragma once
// Host half of the elementwise launcher: at::TensorIterator decides shapes, broadcasting, type
// promotion and output allocation; this turns a built iterator into the kernel's plain geometry.
#include <ATen/TensorIterator.h>

#include <c10/util/FunctionRef.h>

#include <functional>  // callers may rely on it from here

#include "aten/core/kernel_dtype.h"
#include "kernels/core/dispatch.h"
#include "kernels/core/geometry.h"

namespace foo::native {

// The kernel launch a caller passes for its iterator: a reference to the caller's lambda (no heap
// block per call, as a std::function capturing more than two pointers would take). Only valid
// during the run_elementwise call it is passed to.
using ElementwiseLaunch = c10::function_ref<void(foo::kernels::Stream, const foo::kernels::ElementwiseGeometry&)>;

// Runs `launch` over iter (operand 0 the output) once every input has the dtype the kernel reads
// (`input_dtypes`, one per input) and the output the dtype it writes (`output_dtype`). Inputs of
// another dtype are cast on the device first and a mismatched output gets a temporary that is
// cast back, so kernels stay single-typed; host scalar inputs travel by value, in the kernel's
// compute type: rounded to their input dtype first, except inputs i with bit i set in
// `unrounded_inputs` (x_half * 0.3 multiplies by 0.3f, as the CPU's mul does).
void run_elementwise(const at::TensorIteratorBase& iter, at::ScalarType output_dtype,
                     c10::ArrayRef<at::ScalarType> input_dtypes, ElementwiseLaunch launch,
                     uint32_t unrounded_inputs = 0);

// Same, with every operand in the iterator's common dtype.
void run_elementwise(const at::TensorIteratorBase& iter, ElementwiseLaunch launch);

// Tests force the 64-bit indexing path with TORCH_FOO_FORCE_64BIT_INDEXING=1.
bool force_64bit_indexing();

}  // namespace foo::native
