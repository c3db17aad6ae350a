#pragma once
// What an op file hands a kernel launcher (FOO_CALL_KERNEL) besides plain numbers: the stream to
// queue on and the data of tensors that may be absent. One definition for every file of aten/ops.
#include <ATen/core/Tensor.h>

#include "kernels/core/dispatch.h"
#include "runtime/stream.h"

namespace foo::native {

// The current stream of the device `t` lives on, as the driver's handle.
inline foo::kernels::Stream stream_of(const at::Tensor& t) {
  return foo::runtime::current_native_stream(t.device().index());
}

// The data of an optional argument (weight, bias, a gradient not asked for): null when undefined.
inline const void* ptr_or_null(const at::Tensor& t) { return t.defined() ? t.const_data_ptr() : nullptr; }
inline void* mutable_ptr_or_null(const at::Tensor& t) { return t.defined() ? t.mutable_data_ptr() : nullptr; }

}  // namespace foo::native
