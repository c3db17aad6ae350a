#pragma once
// Checked mode of the sim device: a compute-sanitizer for kernels run by the emulator
// (docs/emulation.md, "Checked mode"). Switched on per process by TORCH_FOO_SIM_CHECK
// (memcheck, racecheck, initcheck, a comma-separated list, or `all`), read once.
//
// How accesses are seen: kernel sources compiled with FOO_SIM_CHECKED (torch_foo built with
// FOO_SIM_SANITIZE=ON, an extension built with load(..., sim_check=True)) carry GCC's
// -fsanitize=kernel-address instrumentation in its out-of-line form: every load and store of a
// kernel calls __asan_{load,store}<N>_noabort(address), which this file defines (libtorch_foo
// exports them). Nothing else of ASan is used: no runtime, no interceptors, no shadow mapping
// of the whole address space. The hooks classify the address:
//  - device memory: in checked mode the sim driver allocates from one reserved arena with
//    redzones between allocations, never reusing an address; a shadow byte per 8 bytes says how
//    many leading bytes are addressable (memcheck), a bit per byte whether it was written
//    (initcheck). The caching allocator narrows a block to the bytes the tensor asked for when it
//    hands it out and poisons it again when it takes it back, so a freed tensor stays poisoned
//    until its block is reused;
//  - shared memory of the running block (the launch's dynamic shared memory, the kernel module's
//    thread-local `__shared__` variables): racecheck keeps, per byte, the last writer and readers
//    with the barrier interval they accessed in.
// A finding does not stop the access (the redzones make stray writes harmless); the first one of
// a block is kept with the kernel, block and thread indices and the code address, and the block
// then fails with it: it becomes the stream's sticky error, raised by the next synchronize.
#include <cstddef>
#include <cstdint>

namespace foo::sim {
struct KernelLaunch;
}

namespace foo::sim::checked {

enum Mode : unsigned { kMemcheck = 1, kRacecheck = 2, kInitcheck = 4 };

// The checks TORCH_FOO_SIM_CHECK asked for (0: checked mode off). Never throws.
unsigned modes();
// Throws std::invalid_argument when TORCH_FOO_SIM_CHECK holds something unknown (the sim driver
// calls it when it starts, so the mistake is reported instead of silently checking nothing).
void validate_setting();

// Device memory. The arena is used when memcheck or initcheck is on.
bool arena_active();
void* arena_allocate(size_t bytes);  // 256-byte aligned; nullptr when the arena is exhausted
void arena_release(void* p);
bool in_arena(const void* p);
// The caching allocator hands [p, p + requested) of a block it owns to a tensor / takes it back,
// in the order of the block's stream (a host task queued there). No-ops outside the arena.
void on_hand_out(void* p, size_t requested);
void on_take_back(void* p);
// The driver wrote [p, p + bytes) (a copy or memset, when its stream runs it): initialised.
void mark_written(void* p, size_t bytes);

// The block scheduler, around each block and at each synchronisation point.
void block_begin(const KernelLaunch& launch, unsigned char* dynamic_shared);
// Ends the block's checks; throws std::runtime_error with the block's first report, if any.
void block_end();
void block_abandon();  // the block failed otherwise: forget its findings
void barrier_completed();
void warp_synchronised(unsigned warp);

}  // namespace foo::sim::checked

// Atomics (sim/atomics.h) are not instrumented; in checked kernels they call this instead, so
// they are bounds-checked but never count as racing with each other.
extern "C" void foo_sim_check_atomic(const void* p, size_t bytes);
