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

// FOO_SIM_FIBER_UCONTEXT forces the portable path (to test it on x86-64).
#if defined(__x86_64__) && !defined(FOO_SIM_FIBER_UCONTEXT)
#define FOO_SIM_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FOO_SIM_FIBER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FOO_SIM_FIBER_SANITIZER 1
#endif
#endif

namespace foo::sim {

// Usable stack of one emulated thread. Kernel locals, calls and printf fit easily; a kernel with
// big local arrays (more than ~60 KiB of them) overflows into the guard page and crashes.
constexpr size_t kFiberStackBytes = 64 * 1024;

struct FiberContext {
#if defined(FOO_SIM_FIBER_ASM)
  void* sp = nullptr;  // everything else lives on the suspended fiber's own stack
#else
  ucontext_t uc;
#endif
};

// One fiber stack as the sanitizers need to know it (ASan: its bounds; TSan: its fiber object).
// Without a sanitizer it is never read.
struct FiberStack {
  char* lo = nullptr;
  size_t size = 0;
  void* tsan_fiber = nullptr;
};

// Prepares `ctx` so that switching to it calls entry(arg) on `stack`. `entry` must call
// fiber_started() first and never return: a finished fiber switches away for good.
void fiber_prepare(FiberContext* ctx, FiberStack* stack, void* stack_top, void (*entry)(void*), void* arg);

#if defined(FOO_SIM_FIBER_ASM)
extern "C" void foo_sim_fiber_switch(void** save_sp, void* resume_sp);
#endif

#if defined(FOO_SIM_FIBER_SANITIZER)
// Saves the running context into `from` and resumes `to`, which runs on `to_stack` (null: the
// host thread's own stack); returns when something switches back. `from_dies`: the running
// fiber is never resumed.
void fiber_switch(FiberContext* from, FiberContext* to, const FiberStack* to_stack, bool from_dies = false);
void fiber_started();
#elif defined(FOO_SIM_FIBER_ASM)
inline void fiber_switch(FiberContext* from, FiberContext* to, const FiberStack*, bool = false) {
  foo_sim_fiber_switch(&from->sp, to->sp);
}
inline void fiber_started() {}
#else
void fiber_switch(FiberContext* from, FiberContext* to, const FiberStack*, bool = false);
inline void fiber_started() {}
#endif

// Stacks for the fibers of one host thread, reused by every block that host thread runs, so a
// launch allocates nothing per emulated thread. Grows to the largest block seen; each stack has
// a PROT_NONE guard page below it so an overflow faults instead of corrupting its neighbour
// (the first 16384 stacks of the process: mappings are a limited resource).
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
  FiberStack* stack(size_t i) { return &info_[i]; }

 private:
  struct Region { void* base; size_t bytes; };
  std::vector<Region> regions_;
  std::vector<void*> stacks_;
  std::vector<FiberStack> info_;
  long guards_ = 0;
};

}  // namespace foo::sim
