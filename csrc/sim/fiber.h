#pragma once
// Fibers: the execution contexts the emulator runs a block's threads on, so that a barrier can
// suspend an emulated thread in the middle of the kernel and resume it later.
//
// On x86-64 (System V) a context switch is a dozen instructions of hand-written assembly that
// saves the callee-saved registers on the old stack and swaps stack pointers: ~5-10 ns, where
// ucontext's swapcontext costs ~1 us because it makes a signal-mask system call on every switch
// (REFERENCES.md). Other architectures fall back to ucontext: correct, just slower.
#include <cstddef>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace foo::sim {

// Usable stack of one emulated thread. Kernel locals, calls and printf fit easily; a kernel with
// big local arrays (more than ~60 KiB of them) overflows into the guard page and crashes.
constexpr size_t kFiberStackBytes = 64 * 1024;

struct FiberContext {
#if defined(__x86_64__)
  void* sp = nullptr;  // everything else lives on the suspended fiber's own stack
#else
  ucontext_t uc;
#endif
};

// Prepares `ctx` so that switching to it calls entry(arg) on the stack that ends at `stack_top`.
// `entry` must never return: a finished fiber switches away for good.
void fiber_prepare(FiberContext* ctx, void* stack_top, size_t stack_bytes, void (*entry)(void*), void* arg);

#if defined(__x86_64__)
extern "C" void foo_sim_fiber_switch(void** save_sp, void* resume_sp);
// Saves the running context into `from` and resumes `to`; returns when something switches back.
inline void fiber_switch(FiberContext* from, FiberContext* to) { foo_sim_fiber_switch(&from->sp, to->sp); }
#else
void fiber_switch(FiberContext* from, FiberContext* to);
#endif

// Stacks for the fibers of one host thread, reused by every block that host thread runs, so a
// launch allocates nothing per emulated thread. Grows to the largest block seen; each stack has
// a PROT_NONE guard page below it so an overflow faults instead of corrupting its neighbour.
class StackPool {
 public:
  StackPool() = default;
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  void reserve(size_t count);  // throws std::runtime_error when the memory cannot be mapped
  size_t size() const { return stacks_.size(); }
  // Top (highest address, 16-byte aligned) of stack i. Tops are staggered by a few cache lines
  // so that the hot top frames of 1024 stacks 64 KiB apart do not all map to the same cache sets.
  void* top(size_t i) const { return stacks_[i]; }

 private:
  struct Region { void* base; size_t bytes; };
  std::vector<Region> regions_;
  std::vector<void*> stacks_;
};

}  // namespace foo::sim
