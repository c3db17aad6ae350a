#pragma once
// Shared by the random ops of csrc/aten: reserving Philox counters from the foo generator, and
// running a fill on a tensor in place (kernels/layout.h) whatever its strides.
#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>

#include "aten/layout.h"
#include "kernels/dispatch.h"
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

// Runs fill(target, layout) on self in place, or, for a layout of too many dims, on a contiguous
// temporary that is then copied into self.
template <typename Fill>
at::Tensor& fill_in_place(at::Tensor& self, Fill&& fill) {
  if (auto layout = layout_of(self)) {
    fill(self, *layout);
  } else {
    auto tmp = at::empty(self.sizes(), self.options());
    fill(tmp, foo::kernels::Layout{});
    self.copy_(tmp);
  }
  return self;
}

// t itself when layout_of can describe it, else a contiguous copy; with its layout.
inline std::pair<at::Tensor, foo::kernels::Layout> readable_layout(const at::Tensor& t) {
  if (auto layout = layout_of(t)) return {t, *layout};
  return {t.contiguous(), foo::kernels::Layout{}};
}

inline foo::kernels::Stream current_kernel_stream(const at::Tensor& t) {
  return foo::runtime::current_native_stream(t.device().index());
}

}  // namespace foo::native
