#pragma once
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/layout.h"

// Creation kernels: one thread per element, logical element i written at offset_of(layout, i).
//
// arange: element i of `n`, as the CPU's arange kernel computes it.
//   Integral dtypes: start + step * i in int64 (wrapping), truncated to the dtype.
//   Floating dtypes: in the CPU accumulate type A (double for float32/float64, float for
//   float16/bfloat16; start and step arrive already rounded to A): fma(step, i, start), except
//   where the CPU's vectorized loop produced the value: it splits [0, n) into chunks of `chunk`
//   elements (its parallel_for), and within a chunk runs blocks of 2 * `lanes` elements as
//   vectors of `lanes` whose lane k is fma(k, step, T(fma(step, j, start))), j the vector's first
//   index. lanes == 0: the plain formula everywhere. fused == false: a * b + c rounds twice
//   (a CPU build without FMA instructions).
FOO_DECLARE_KERNEL(void, arange_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t n,
                                       int64_t start_int, int64_t step_int, double start, double step,
                                       int64_t chunk, int64_t lanes, bool fused))

// linspace: element i of `steps` (>= 2), as the CPU computes it: start + step * i below
// steps / 2, end - step * (steps - i - 1) from there. Floating dtypes compute in their own type
// (float32 and float64 with one fused multiply-add; 16-bit floats round after each operation,
// i included, as c10::Half/BFloat16 arithmetic does); integral dtypes in double, truncated.
// start, end, step arrive as values of the dtype (start_int/end_int for integral dtypes), step
// as the host computed it.
FOO_DECLARE_KERNEL(void, linspace_fill, (Stream stream, DType dtype, void* out, const Layout& layout, int64_t steps,
                                         int64_t start_int, int64_t end_int, double start, double end, double step))
