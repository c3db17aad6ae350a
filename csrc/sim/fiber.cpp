#include "sim/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define FOO_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOO_SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FOO_SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FOO_SIM_TSAN 1
#endif
#endif
#if defined(FOO_SIM_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(FOO_SIM_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if defined(FOO_SIM_FIBER_ASM)
// foo_sim_fiber_switch(void** save_sp /*rdi*/, void* resume_sp /*rsi*/): pushes the System V
// callee-saved registers, stores rsp, loads the other fiber's rsp, pops its registers and returns
// into it. The caller-saved registers need no saving: the C++ caller already assumes the call
// clobbers them. MXCSR and the x87 control word are not switched: all fibers of a host thread
// share one floating-point environment, and kernels never change it.
//
// foo_sim_fiber_start is where a fresh fiber "returns" to on its first switch: its prepared stack
// holds r12 = arg and r13 = entry; entry never returns (ud2 traps if it does).
asm(R"(
  .text
  .globl foo_sim_fiber_switch
  .hidden foo_sim_fiber_switch
  .type foo_sim_fiber_switch, @function
  .p2align 4
foo_sim_fiber_switch:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size foo_sim_fiber_switch, .-foo_sim_fiber_switch

  .globl foo_sim_fiber_start
  .hidden foo_sim_fiber_start
  .type foo_sim_fiber_start, @function
  .p2align 4
foo_sim_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size foo_sim_fiber_start, .-foo_sim_fiber_start
)");
extern "C" void foo_sim_fiber_start();
#endif

namespace foo::sim {

#if defined(FOO_SIM_FIBER_ASM)
namespace {
void prepare_stack(FiberStack* stack);
}

void fiber_prepare(FiberContext* ctx, FiberStack* stack, void* stack_top, void (*entry)(void*), void* arg) {
  prepare_stack(stack);
  // Frame popped by foo_sim_fiber_switch, lowest address first: r15 r14 r13 r12 rbx rbp, then
  // the return address. After `ret` rsp is stack_top - 16, 16-byte aligned as the ABI wants
  // before foo_sim_fiber_start's call.
  auto* top = static_cast<uintptr_t*>(stack_top);
  uintptr_t* sp = top - 9;
  sp[0] = 0;                                             // r15
  sp[1] = 0;                                             // r14
  sp[2] = reinterpret_cast<uintptr_t>(entry);            // r13
  sp[3] = reinterpret_cast<uintptr_t>(arg);              // r12
  sp[4] = 0;                                             // rbx
  sp[5] = 0;                                             // rbp: ends frame-pointer walks
  sp[6] = reinterpret_cast<uintptr_t>(&foo_sim_fiber_start);
  sp[7] = 0;
  sp[8] = 0;
  ctx->sp = sp;
}
#else
namespace {
// makecontext passes int arguments only: split the pointers into halves.
void ucontext_trampoline(unsigned entry_hi, unsigned entry_lo, unsigned arg_hi, unsigned arg_lo) {
  auto join = [](unsigned hi, unsigned lo) { return (static_cast<uint64_t>(hi) << 32) | lo; };
  auto entry = reinterpret_cast<void (*)(void*)>(static_cast<uintptr_t>(join(entry_hi, entry_lo)));
  entry(reinterpret_cast<void*>(static_cast<uintptr_t>(join(arg_hi, arg_lo))));
}
}  // namespace

namespace {
void prepare_stack(FiberStack* stack);
}

void fiber_prepare(FiberContext* ctx, FiberStack* stack, void* stack_top, void (*entry)(void*), void* arg) {
  prepare_stack(stack);
  getcontext(&ctx->uc);
  ctx->uc.uc_stack.ss_sp = static_cast<char*>(stack_top) - kFiberStackBytes;
  ctx->uc.uc_stack.ss_size = kFiberStackBytes;
  ctx->uc.uc_link = nullptr;
  const uint64_t e = reinterpret_cast<uintptr_t>(entry), a = reinterpret_cast<uintptr_t>(arg);
  makecontext(&ctx->uc, reinterpret_cast<void (*)()>(&ucontext_trampoline), 4, unsigned(e >> 32), unsigned(e),
              unsigned(a >> 32), unsigned(a));
}

#if !defined(FOO_SIM_FIBER_SANITIZER)
void fiber_switch(FiberContext* from, FiberContext* to, const FiberStack*, bool) { swapcontext(&from->uc, &to->uc); }
#endif
#endif

namespace {
#if defined(FOO_SIM_FIBER_SANITIZER)
#if defined(FOO_SIM_ASAN)
// The host thread's own stack, learned when it first switches to a fiber.
thread_local const void* t_host_lo = nullptr;
thread_local size_t t_host_size = 0;
#endif
#if defined(FOO_SIM_TSAN)
thread_local void* t_host_tsan_fiber = nullptr;
#endif

// A stack may be reused after its last fiber was abandoned mid-kernel: forget its old frames.
void prepare_stack(FiberStack* stack) {
#if defined(FOO_SIM_ASAN)
  __asan_unpoison_memory_region(stack->lo, stack->size);
#endif
#if defined(FOO_SIM_TSAN)
  if (stack->tsan_fiber) __tsan_destroy_fiber(stack->tsan_fiber);
  stack->tsan_fiber = __tsan_create_fiber(0);
#endif
}
#else
void prepare_stack(FiberStack*) {}
#endif
}  // namespace

#if defined(FOO_SIM_FIBER_SANITIZER)
void fiber_started() {
#if defined(FOO_SIM_ASAN)
  const void* lo;
  size_t size;
  __sanitizer_finish_switch_fiber(nullptr, &lo, &size);
  // A host thread's first switch is always from its own stack into a new fiber.
  if (!t_host_lo) {
    t_host_lo = lo;
    t_host_size = size;
  }
#endif
}

void fiber_switch(FiberContext* from, FiberContext* to, const FiberStack* to_stack, bool from_dies) {
#if defined(FOO_SIM_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(from_dies ? nullptr : &fake_stack, to_stack ? to_stack->lo : t_host_lo,
                                 to_stack ? to_stack->size : t_host_size);
#else
  (void)from_dies;
#endif
#if defined(FOO_SIM_TSAN)
  if (!t_host_tsan_fiber) t_host_tsan_fiber = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to_stack ? to_stack->tsan_fiber : t_host_tsan_fiber, 0);
#endif
#if defined(FOO_SIM_FIBER_ASM)
  foo_sim_fiber_switch(&from->sp, to->sp);
#else
  swapcontext(&from->uc, &to->uc);
#endif
#if defined(FOO_SIM_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}
#endif

namespace {
constexpr size_t kColorBytes = 4096;  // room to stagger stack tops by up to 63 cache lines
// Each guard page splits a mapping, and a process may hold only vm.max_map_count (default
// 65530) mappings before every mmap fails, malloc's included. Many host threads running
// 1024-thread blocks would get there, so guards stop after this many, process-wide.
std::atomic<long> g_guard_budget{16384};
size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}
}  // namespace

StackPool::~StackPool() {
  for (const Region& r : regions_) munmap(r.base, r.bytes);
  g_guard_budget.fetch_add(guards_, std::memory_order_relaxed);
}

void StackPool::reserve(size_t count) {
  if (count <= stacks_.size()) return;
  const size_t page = page_size();
  const size_t usable = (kFiberStackBytes + kColorBytes + page - 1) / page * page;
  const size_t slot = usable + page;  // guard page at the low end of each slot
  const size_t n = count - stacks_.size();
  const size_t bytes = n * slot;
  // MAP_NORESERVE: only the pages a fiber touches (its top frames) ever become resident.
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    throw std::runtime_error("foo sim: cannot map " + std::to_string(bytes >> 10) + " KiB of fiber stacks: " +
                             std::strerror(errno));
  }
  regions_.push_back({base, bytes});
  for (size_t i = 0; i < n; ++i) {
    char* lo = static_cast<char*>(base) + i * slot;
    if (g_guard_budget.fetch_sub(1, std::memory_order_relaxed) > 0) {
      if (mprotect(lo, page, PROT_NONE) == 0) ++guards_;
    } else {
      g_guard_budget.fetch_add(1, std::memory_order_relaxed);
    }
    const size_t index = stacks_.size();
    stacks_.push_back(lo + slot - (index % 64) * 64);
    info_.push_back(FiberStack{lo + page, slot - page, nullptr});
  }
}

}  // namespace foo::sim
