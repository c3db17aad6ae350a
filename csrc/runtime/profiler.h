#pragma once
// torch.profiler on foo (runtime/profiler.cpp).

namespace foo::runtime {

// Whether foo's device kernels reach torch.profiler's Kineto traces (ProfilerActivity.PrivateUse1):
// the build found torch's PrivateUse1 Kineto registry (torch/csrc/profiler/standalone/
// privateuse1_profiler.h; torch 2.11 has none, 2.13 has). Without it only the legacy
// use_device="foo" path times foo's ops, and a Kineto profile holds no foo kernels.
bool profiler_traces_device_kernels();

}  // namespace foo::runtime
