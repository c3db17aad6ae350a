#pragma once
// Device-side timing of kernel launches, for the profiler. Torch-free; the torch-facing glue that
// hands the records to torch.profiler is runtime/profiler.cpp.
//
// While a session runs, the launch API's hook (kernels/core/launch_trace.h, defined in
// kernel_trace.cpp) brackets every kernel with two timing events on the kernel's own stream, so
// the device stamps them right before and after the kernel: on sim the stream's worker thread
// runs the markers around the kernel task, on cuda they are CUDA events.
#include <cstdint>
#include <string>
#include <vector>

namespace foo::runtime::kernel_trace {

// One traced kernel. Times are nanoseconds of the system clock (CLOCK_REALTIME), the clock of
// c10::getTime() that the profiler's CPU events use.
struct KernelRecord {
  std::string name;
  int device = 0;
  int stream = 0;             // the stream's number on its device, in order of first use
  uint64_t correlation = 0;   // the profiler's id of the op that launched it; 0: none
  int64_t launch_begin_ns = 0, launch_end_ns = 0;  // the launch call, on the host
  int64_t start_ns = 0, end_ns = 0;                // the kernel, on the device
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
};

// The profiler session: start() forgets earlier records and turns tracing on; stop() turns it
// off; collect() waits until the traced kernels ran and returns them (once). Failures to time a
// kernel (its stream hit an error) are appended to *errors instead of throwing.
void start();
void stop();
std::vector<KernelRecord> collect(std::vector<std::string>* errors);

// The op being run by the calling thread, as the profiler announces it around every op; the
// innermost one is what a kernel launched now is attributed to.
void push_correlation(uint64_t id);
void pop_correlation();

}  // namespace foo::runtime::kernel_trace
