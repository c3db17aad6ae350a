#pragma once
// Runs one block of a kernel on the calling host thread. Internal to csrc/sim.
//
// Cooperative blocks: the block's threads are scheduled round-robin on fibers. A thread runs
// until it waits (barrier, warp collective, __activemask) or exits, then control passes straight
// to the next runnable thread, fiber to fiber. A fiber (stack) is bound to a thread only while
// that thread is suspended mid-kernel: a thread that exits hands its fiber to the next thread
// that has not started yet, which runs on it without any switch. So a kernel without barriers
// runs its whole block on one hot stack, and only suspended threads occupy stacks.
// Independent blocks: each thread runs straight through on the host stack.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sim/builtins.h"
#include "sim/fiber.h"
#include "sim/launch.h"  // KernelLaunch

namespace foo::sim {

// One warp-collective arrival: what the lane passes in, and the result it is handed back.
struct WarpSlot {
  uint8_t op;
  uint8_t width;
  int arg;             // srcLane, delta or lane mask, per op
  unsigned mask;       // the lanes that must take part
  uint64_t value;      // the lane's operand, bit-copied
  uint64_t result;
};
// Fills `result` of every lane in `group` (all arrived; lanes[i] is lane i of the warp).
using WarpCompleteFn = void (*)(WarpSlot* lanes, unsigned group);

class BlockScheduler {
 public:
  BlockScheduler();
  ~BlockScheduler();
  BlockScheduler(const BlockScheduler&) = delete;
  BlockScheduler& operator=(const BlockScheduler&) = delete;

  // Runs block `block_index` of `launch` to completion; rethrows a kernel's exception, and
  // reports a deadlock as std::runtime_error. One block at a time per host thread.
  void run_block(const KernelLaunch& launch, uint3 block_index);

  // The scheduler of the calling host thread when it runs a cooperative block; otherwise throws
  // the error explaining why `what` (e.g. "__syncthreads") cannot be used here.
  static BlockScheduler& for_collective(const char* what);
  // The launch the calling host thread runs, or null outside a kernel.
  static const KernelLaunch* running_launch();
  static unsigned char* dynamic_shared();

  // Waits until every thread of the block has arrived; returns the number of threads that
  // passed a nonzero predicate (__syncthreads_count).
  int barrier(int predicate, const char* what);
  // Suspends the calling lane until every existing lane of slot.mask has arrived, then returns
  // this lane's result. `complete` runs once per rendezvous, in the last lane to arrive.
  uint64_t warp_rendezvous(const WarpSlot& slot, WarpCompleteFn complete, const char* what);
  // __activemask: suspends the calling lane until no lane of its warp can run on (each waits
  // somewhere or exited), then returns the lanes that called from the same site: the emulator's
  // stand-in for "the lanes a GPU would have converged here".
  unsigned converge(const void* site);

  unsigned lane() const { return current_ & 31u; }
  std::string where() const;  // "kernel <name>, block (x,y,z)", for error messages

 private:
  enum State : uint8_t { kNotStarted, kRunnable, kAtBarrier, kAtWarp, kConverging, kExited };
  struct EmuThread {
    FiberContext ctx;        // valid while suspended
    unsigned stack;          // the stack its fiber runs on, once started
    uint3 tid;
    State state;
    const char* waiting_in;  // the collective's name, for deadlock reports
    const void* site;        // where it called __activemask
    unsigned converged;      // __activemask's result
  };

  void run_cooperative();
  void run_independent();
  static void fiber_entry(void* self);
  [[noreturn]] void fiber_main();
  [[noreturn]] void leave_block();     // back to the host stack, from a fiber never resumed
  unsigned pop_ready();
  void make_runnable(unsigned t);      // appends t to the ready ring
  void stop_running(unsigned t);       // t waits or exited: may complete a convergence
  void release_converged(unsigned w);
  void wait_here(State state, const char* what);  // suspends the current thread
  void check_same_collective(const WarpSlot& slot, unsigned group, const char* what) const;
  std::string deadlock_report() const;

  const KernelLaunch* launch_ = nullptr;
  unsigned nthreads_ = 0;
  unsigned live_ = 0;
  unsigned current_ = 0;
  dim3 tids_for_{0, 0, 0};  // block shape threads_[].tid was computed for
  std::vector<EmuThread> threads_;
  StackPool stacks_;
  std::vector<uint16_t> free_stacks_;  // stacks of fibers that finished, most recent last
  unsigned fresh_stacks_ = 0;          // stacks handed out in this block so far
  unsigned starting_stack_ = 0;        // handed from the preparer to a new fiber
  FiberContext host_ctx_;
  FiberContext dead_ctx_;  // where a finished fiber's last switch saves a context nobody resumes
  std::exception_ptr error_;
  uint3* thread_idx_;      // &threadIdx of this host thread, cached: rewritten at every switch

  // Runnable threads, FIFO (a ring of capacity nthreads_); not-started threads included.
  std::vector<uint16_t> ready_;
  unsigned ready_head_ = 0, ready_count_ = 0;
  // __syncthreads: threads waiting, in arrival order; becomes the ready ring when complete.
  std::vector<uint16_t> barrier_waiters_;
  unsigned barrier_arrived_ = 0;
  int barrier_sum_ = 0, barrier_result_ = 0;
  // Warp collectives: per lane its arrival; per warp (bit = lane) who waits, exited, can run.
  std::vector<WarpSlot> slots_;
  unsigned waiting_[32] = {};
  unsigned exited_[32] = {};
  unsigned runnable_[32] = {};    // running, in the ready ring, or not started
  unsigned converging_[32] = {};  // waiting in __activemask
  // While every waiting lane of a warp is in one collective (the usual case) its op and group
  // are kept here, so an arrival checks consistency in O(1) instead of against each lane.
  struct Pending {
    unsigned group;
    uint8_t op;
    bool uniform;
  };
  Pending pending_[32] = {};

  std::unique_ptr<unsigned char[]> dynamic_shared_;  // kMaxSharedMemoryPerBlock, 16-byte aligned
  unsigned char* dynamic_shared_aligned_ = nullptr;
};

}  // namespace foo::sim
