#pragma once
// Device checks the generated wrappers (generated/RegisterFoo.cpp, FooCustomOps.cpp) run before
// calling a kernel: the error names the op and the argument at fault.
#include <optional>

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/IListRef.h>
#include <c10/core/Device.h>

#include "aten/core/call_counts.h"  // FOO_COUNT_CALL, the wrappers' first statement

namespace foo::native {

// Every tensor argument must be on the foo device, all on the same one (a 0-dim CPU
// tensor is accepted where it stands for a scalar); `common` records that device.
inline void check_device(const char* op, const char* arg, const at::Tensor& t,
                                   ::std::optional<c10::Device>& common, bool cpu_scalar_ok) {
  if (!t.defined()) {
    return;
  }
  const c10::Device d = t.device();
  if (d.type() != c10::DeviceType::PrivateUse1) {
    // Starts with PyTorch's own wording, which callers (and PyTorch's OpInfo error tests) match.
    TORCH_CHECK(cpu_scalar_ok && d.is_cpu() && t.dim() == 0, op,
                ": Expected all tensors to be on the same device, but argument '", arg, "' is on ", d,
                " (foo ops take foo tensors; a CPU tensor only as a 0-dim scalar)");
    return;
  }
  if (!common.has_value()) {
    common = d;
    return;
  }
  TORCH_CHECK(d == *common, op, ": Expected all tensors to be on the same device, but found at least two devices, ",
              *common, " and ", d, "! (argument '", arg, "' is on ", d, ")");
}

inline void check_device(const char* op, const char* arg, const ::std::optional<at::Tensor>& t,
                                   ::std::optional<c10::Device>& common, bool cpu_scalar_ok) {
  if (t.has_value()) {
    check_device(op, arg, *t, common, cpu_scalar_ok);
  }
}

inline void check_device(const char* op, const char* arg, at::TensorList ts,
                                   ::std::optional<c10::Device>& common, bool cpu_scalar_ok) {
  for (const at::Tensor& t : ts) {
    check_device(op, arg, t, common, cpu_scalar_ok);
  }
}

inline void check_device(const char* op, const char* arg, const at::ITensorListRef& ts,
                                   ::std::optional<c10::Device>& common, bool cpu_scalar_ok) {
  for (const at::Tensor& t : ts) {
    check_device(op, arg, t, common, cpu_scalar_ok);
  }
}

inline void check_device(const char* op, const char* arg,
                                   const c10::List<::std::optional<at::Tensor>>& ts,
                                   ::std::optional<c10::Device>& common, bool cpu_scalar_ok) {
  for (size_t i = 0; i < ts.size(); ++i) {
    check_device(op, arg, ts.get(i), common, cpu_scalar_ok);
  }
}

// An index argument of advanced indexing (index, index_put_): CPU index tensors are accepted, as on
// CUDA, and the kernel moves them to the device; foo ones must be on the common device.
inline void check_device_or_cpu(const char* op, const char* arg, const c10::List<::std::optional<at::Tensor>>& ts,
                                ::std::optional<c10::Device>& common) {
  for (size_t i = 0; i < ts.size(); ++i) {
    const ::std::optional<at::Tensor> t = ts.get(i);
    if (t.has_value() && t->defined() && !t->device().is_cpu()) {
      check_device(op, arg, *t, common, false);
    }
  }
}

// For ops that copy across devices: remember the first foo device, check nothing.
inline void note_device(const at::Tensor& t, ::std::optional<c10::Device>& common) {
  if (!common.has_value() && t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
    common = t.device();
  }
}

}  // namespace foo::native
