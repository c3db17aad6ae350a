#pragma once
// Reading a foo tensor's bytes on the host, for scalar reads.
#include <ATen/core/Tensor.h>

namespace foo::native {

// A CPU tensor with `src`'s sizes, strides and dtype whose bytes were copied from the device
// (the whole storage span `src` touches, so strides are kept). Waits for the producing work: `why`
// names the wait for torch.foo.set_sync_debug_mode's report (runtime/sync_debug.h).
at::Tensor stage_to_cpu(const at::Tensor& src, const char* why);

}  // namespace foo::native
