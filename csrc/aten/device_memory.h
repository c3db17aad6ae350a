#pragma once
// Moving tensor bytes between the host and the foo device, for copies and scalar reads.
#include <ATen/core/Tensor.h>

namespace foo::native {

// A CPU tensor with `src`'s sizes, strides and dtype whose bytes were copied from the device
// (the whole storage span `src` touches, so strides are kept). Waits for the producing work.
at::Tensor stage_to_cpu(const at::Tensor& src);

// Writes a CPU tensor (any dtype, any strides, broadcastable to dst) into the foo tensor `dst`.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& cpu_src);

}  // namespace foo::native
