#pragma once
// Shared by the random ops of csrc/aten: reserving Philox counters from the foo generator.
#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>

#include "aten/core/layout.h"
#include "kernels/core/dispatch.h"
#include "runtime/generator.h"
#include "runtime/stream.h"

namespace foo::native {

// Reserves `count` Philox counters of `generator` (or the default generator of `device`) for one
// launch and returns where they start.
inline foo::runtime::PhiloxState reserve_philox(c10::DeviceIndex device, std::optional<at::Generator> generator,
                                                uint64_t count) {
  auto* gen = at::get_generator_or_default<foo::runtime::FooGeneratorImpl>(generator,
                                                                            foo::runtime::default_generator(device));
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return gen->reserve(count);
}

inline foo::kernels::Stream current_kernel_stream(const at::Tensor& t) {
  return foo::runtime::current_native_stream(t.device().index());
}

}  // namespace foo::native
