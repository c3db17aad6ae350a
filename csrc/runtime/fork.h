#pragma once
// Fork safety, as in CUDA: a process forked after its parent started the foo driver cannot use
// the device. The child has the parent's driver state but none of its threads (sim stream workers,
// the CUDA runtime's), so any wait on the device would hang; it gets a clear error instead.
namespace foo::runtime {

// True in a child forked after the parent initialised foo (lazy_init succeeded).
bool in_bad_fork() noexcept;

// Throws, naming the 'spawn' start method, when in_bad_fork().
void check_not_in_bad_fork();

}  // namespace foo::runtime
