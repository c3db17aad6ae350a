#pragma once
// The host threads that run a grid's blocks in parallel: a process-wide pool of helpers plus the
// thread that asks (a sim stream's worker), so every stream shares one set of cores.
#include <cstdint>

namespace foo::sim {

// Host threads that may run blocks at once, the caller included: TORCH_FOO_SIM_THREADS, else
// std::thread::hardware_concurrency(). Throws std::runtime_error when the variable is invalid.
unsigned sim_threads();

// Calls run(ctx, i) for every i in [0, count): on the calling thread and on up to `max_helpers`
// pool threads, in no particular order. Returns when every call has finished. If a call throws,
// calls not yet started are skipped and the first exception is rethrown here.
void parallel_for(uint64_t count, unsigned max_helpers, void (*run)(void* ctx, uint64_t i), void* ctx);

}  // namespace foo::sim
