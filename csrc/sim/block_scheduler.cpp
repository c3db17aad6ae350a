#include "sim/block_scheduler.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "sim/checked.h"
#include "sim/launch_limits.h"

namespace foo::sim {
namespace {
// The scheduler running a block on this host thread, null between blocks.
thread_local BlockScheduler* t_active = nullptr;

unsigned lanes_below(unsigned n) { return n >= 32 ? 0xffffffffu : (1u << n) - 1u; }

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}
}  // namespace

BlockScheduler::BlockScheduler() : thread_idx_(&threadIdx) {}
BlockScheduler::~BlockScheduler() = default;

const KernelLaunch* BlockScheduler::running_launch() { return t_active ? t_active->launch_ : nullptr; }

unsigned char* BlockScheduler::dynamic_shared() { return t_active ? t_active->dynamic_shared_aligned_ : nullptr; }

BlockScheduler& BlockScheduler::for_collective(const char* what) {
  BlockScheduler* s = t_active;
  if (!s) throw std::runtime_error(std::string(what) + " called outside a kernel");
  if (!s->launch_->cooperative) {
    throw std::runtime_error(std::string("kernel ") + s->launch_->name + " was launched with launch_independent but calls " +
                             what + " (use launch() for kernels whose threads synchronise or communicate)");
  }
  return *s;
}

void BlockScheduler::run_block(const KernelLaunch& launch, uint3 block_index) {
  struct Activate {  // restores the host thread's state however the block ends
    explicit Activate(BlockScheduler* s) { t_active = s; }
    ~Activate() { t_active = nullptr; }
  } active(this);
  launch_ = &launch;
  blockIdx = block_index;
  gridDim = launch.grid;
  blockDim = launch.block;
  nthreads_ = launch.block.x * launch.block.y * launch.block.z;
  if (launch.shared_bytes && !dynamic_shared_) {
    dynamic_shared_.reset(new unsigned char[kMaxSharedMemoryPerBlock + 16]);
    const auto p = reinterpret_cast<uintptr_t>(dynamic_shared_.get());
    dynamic_shared_aligned_ = dynamic_shared_.get() + ((16 - p % 16) % 16);
  }
  if (checked::modes() == 0) {
    if (launch.cooperative) {
      run_cooperative();
    } else {
      run_independent();
    }
    return;
  }
  // Checked mode (sim/checked.h): the block's findings end it like an error of the kernel.
  struct Checked {
    Checked(const KernelLaunch& l, unsigned char* shared) { checked::block_begin(l, shared); }
    ~Checked() {
      if (!done) checked::block_abandon();
    }
    bool done = false;
  } check(launch, dynamic_shared_aligned_);
  if (launch.cooperative) {
    run_cooperative();
  } else {
    run_independent();
  }
  check.done = true;
  checked::block_end();  // throws the block's first finding
}

void BlockScheduler::run_independent() {
  // The hot loop of elementwise kernels: per emulated thread, one store and one indirect call.
  const dim3 b = launch_->block;
  auto* run = launch_->run_thread;
  const void* closure = launch_->closure;
  uint3* tid = thread_idx_;
  for (unsigned z = 0; z < b.z; ++z)
    for (unsigned y = 0; y < b.y; ++y)
      for (unsigned x = 0; x < b.x; ++x) {
        *tid = {x, y, z};
        run(closure);
      }
}

void BlockScheduler::run_cooperative() {
  const unsigned n = nthreads_;
  if (threads_.size() < n) {
    threads_.resize(n);
    ready_.resize(n);
    barrier_waiters_.resize(n);
    slots_.resize(n);
    free_stacks_.reserve(n);
  }
  stacks_.reserve(n);  // maps once per host thread; pages become resident only when used
  const dim3 b = launch_->block;
  if (b.x != tids_for_.x || b.y != tids_for_.y || b.z != tids_for_.z) {
    unsigned i = 0;
    for (unsigned z = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y)
        for (unsigned x = 0; x < b.x; ++x) threads_[i++].tid = {x, y, z};
    tids_for_ = b;
  }
  for (unsigned i = 0; i < n; ++i) {
    threads_[i].state = kNotStarted;
    ready_[i] = static_cast<uint16_t>(i);
  }
  ready_head_ = 1;
  ready_count_ = n - 1;
  barrier_arrived_ = 0;
  barrier_sum_ = 0;
  for (unsigned w = 0; w < 32; ++w) {
    waiting_[w] = exited_[w] = converging_[w] = 0;
    runnable_[w] = w * 32 < n ? lanes_below(n - w * 32) : 0;
  }
  free_stacks_.clear();
  fresh_stacks_ = 1;
  starting_stack_ = 0;
  live_ = n;
  current_ = 0;
  error_ = nullptr;
  threads_[0].state = kRunnable;
  threads_[0].stack = 0;
  *thread_idx_ = threads_[0].tid;
  fiber_prepare(&threads_[0].ctx, stacks_.stack(0), stacks_.top(0), &BlockScheduler::fiber_entry, this);
  fiber_switch(&host_ctx_, &threads_[0].ctx, stacks_.stack(0));
  // Back on the host stack: every thread exited, or the block failed (then the other fibers are
  // abandoned mid-kernel, their destructors never run; the stacks are reused by the next block).
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void BlockScheduler::fiber_entry(void* self) {
  fiber_started();
  static_cast<BlockScheduler*>(self)->fiber_main();
}

void BlockScheduler::fiber_main() {
  const unsigned stack = starting_stack_;
  for (;;) {  // one emulated thread per iteration: current_, already marked runnable
    {
      std::exception_ptr failure;
      try {
        launch_->run_thread(launch_->closure);
      } catch (...) {
        failure = std::current_exception();
      }
      if (failure) {
        error_ = std::move(failure);  // nothing may stay on this stack: it is never unwound
        leave_block();
      }
    }
    threads_[current_].state = kExited;
    exited_[current_ >> 5] |= 1u << (current_ & 31);
    if (--live_ == 0) leave_block();
    stop_running(current_);
    if (ready_count_ == 0) {
      error_ = std::make_exception_ptr(std::runtime_error(deadlock_report()));
      leave_block();
    }
    const unsigned next = pop_ready();
    current_ = next;
    *thread_idx_ = threads_[next].tid;
    if (threads_[next].state == kNotStarted) {  // run it right here, on this fiber
      threads_[next].state = kRunnable;
      threads_[next].stack = stack;
      continue;
    }
    // A suspended thread owns its own fiber: this one is done, its stack free for the next.
    free_stacks_.push_back(static_cast<uint16_t>(stack));
    fiber_switch(&dead_ctx_, &threads_[next].ctx, stacks_.stack(threads_[next].stack), true);
    __builtin_trap();  // a finished fiber is never resumed
  }
}

void BlockScheduler::leave_block() {
  fiber_switch(&dead_ctx_, &host_ctx_, nullptr, true);
  __builtin_trap();
}

unsigned BlockScheduler::pop_ready() {
  const unsigned t = ready_[ready_head_];
  ready_head_ = ready_head_ + 1 == nthreads_ ? 0 : ready_head_ + 1;
  --ready_count_;
  return t;
}

void BlockScheduler::wait_here(State state, const char* what) {
  const unsigned me = current_;
  threads_[me].state = state;
  threads_[me].waiting_in = what;
  stop_running(me);
  // Every other thread waits or has exited: nothing can ever wake this one.
  if (ready_count_ == 0) throw std::runtime_error(deadlock_report());
  const unsigned next = pop_ready();
  EmuThread& t = threads_[next];
  if (t.state == kNotStarted) {  // it needs a fiber of its own: the most recently freed stack
    t.state = kRunnable;
    if (free_stacks_.empty()) {
      starting_stack_ = fresh_stacks_++;
    } else {
      starting_stack_ = free_stacks_.back();
      free_stacks_.pop_back();
    }
    t.stack = starting_stack_;
    fiber_prepare(&t.ctx, stacks_.stack(t.stack), stacks_.top(t.stack), &BlockScheduler::fiber_entry, this);
  }
  current_ = next;
  *thread_idx_ = t.tid;
  fiber_switch(&threads_[me].ctx, &t.ctx, stacks_.stack(t.stack));
  // Resumed: whoever switched back here has set current_ and threadIdx to this thread.
}

int BlockScheduler::barrier(int predicate, const char* what) {
  barrier_sum_ += predicate != 0;
  if (barrier_arrived_ + 1 == nthreads_) {
    // The last arrival releases everyone and runs on without a switch. No thread was runnable
    // (all others waited here), so the waiters, in arrival order, become the whole ready ring.
    barrier_result_ = barrier_sum_;
    barrier_sum_ = 0;
    if (checked::modes()) checked::barrier_completed();
    ready_.swap(barrier_waiters_);
    ready_head_ = 0;
    ready_count_ = barrier_arrived_;
    for (unsigned k = 0; k < barrier_arrived_; ++k) {
      const unsigned t = ready_[k];
      threads_[t].state = kRunnable;
      runnable_[t >> 5] |= 1u << (t & 31);
    }
    barrier_arrived_ = 0;
    return barrier_result_;
  }
  barrier_waiters_[barrier_arrived_++] = static_cast<uint16_t>(current_);
  wait_here(kAtBarrier, what);
  return barrier_result_;  // read before this thread can reach the next barrier
}

void BlockScheduler::make_runnable(unsigned t) {  // t was suspended
  threads_[t].state = kRunnable;
  runnable_[t >> 5] |= 1u << (t & 31);
  unsigned tail = ready_head_ + ready_count_;
  if (tail >= nthreads_) tail -= nthreads_;
  ready_[tail] = static_cast<uint16_t>(t);
  ++ready_count_;
}

void BlockScheduler::stop_running(unsigned t) {
  const unsigned w = t >> 5;
  runnable_[w] &= ~(1u << (t & 31));
  if (!runnable_[w] && converging_[w]) release_converged(w);
}

void BlockScheduler::release_converged(unsigned w) {
  // Lanes that called __activemask at the same site form one mask.
  unsigned rest = converging_[w];
  converging_[w] = 0;
  while (rest) {
    const void* site = threads_[w * 32 + __builtin_ctz(rest)].site;
    unsigned mask = 0;
    for (unsigned r = rest; r; r &= r - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(r));
      if (threads_[w * 32 + l].site == site) mask |= 1u << l;
    }
    rest &= ~mask;
    for (unsigned m = mask; m; m &= m - 1) {
      const unsigned t = w * 32 + static_cast<unsigned>(__builtin_ctz(m));
      threads_[t].converged = mask;
      if (t == current_) {
        threads_[t].state = kRunnable;  // runs on without a switch
        runnable_[w] |= 1u << (t & 31);
      } else {
        make_runnable(t);
      }
    }
  }
}

unsigned BlockScheduler::converge(const void* site) {
  const unsigned me = current_, w = me >> 5;
  EmuThread& t = threads_[me];
  t.site = site;
  converging_[w] |= 1u << (me & 31);
  runnable_[w] &= ~(1u << (me & 31));
  if (!runnable_[w]) {
    release_converged(w);
    return t.converged;
  }
  wait_here(kConverging, "__activemask");
  return t.converged;
}

uint64_t BlockScheduler::warp_rendezvous(const WarpSlot& slot, WarpCompleteFn complete, const char* what) {
  const unsigned me = current_, lane = me & 31, w = me >> 5;
  WarpSlot* lanes = &slots_[w * 32];
  const unsigned exists = lanes_below(nthreads_ - w * 32);
  const unsigned group = slot.mask & exists;
  lanes[lane] = slot;
  Pending& p = pending_[w];
  if (!waiting_[w]) {
    p = {group, slot.op, true};
  } else if (!(p.uniform && p.group == group && p.op == slot.op)) {
    check_same_collective(slot, group, what);
    p.uniform = false;
  }
  waiting_[w] |= 1u << lane;
  if ((waiting_[w] & group) == group) {
    complete(lanes, group);
    if (checked::modes()) checked::warp_synchronised(w);
    waiting_[w] &= ~group;
    for (unsigned g = group & ~(1u << lane); g; g &= g - 1) make_runnable(w * 32 + static_cast<unsigned>(__builtin_ctz(g)));
    return lanes[lane].result;
  }
  wait_here(kAtWarp, what);
  return lanes[lane].result;  // written by the completing lane before this one became runnable
}

void BlockScheduler::check_same_collective(const WarpSlot& slot, unsigned group, const char* what) const {
  // Lanes that already wait and share a lane with this call must be in the same collective with
  // the same mask; anything else is undefined on a GPU, so say so instead of guessing.
  const unsigned me = current_, lane = me & 31, w = me >> 5;
  const WarpSlot* lanes = &slots_[w * 32];
  const unsigned exists = lanes_below(nthreads_ - w * 32);
  for (unsigned others = waiting_[w]; others; others &= others - 1) {
    const unsigned o = static_cast<unsigned>(__builtin_ctz(others));
    const WarpSlot& s = lanes[o];
    if (!((group >> o) & 1u) && !((s.mask >> lane) & 1u)) continue;
    if (s.op != slot.op || (s.mask & exists) != group) {
      throw std::runtime_error(where() + ": lane " + std::to_string(lane) + " of warp " + std::to_string(w) +
                               " calls " + what + " with mask " + hex(slot.mask) + " while lane " + std::to_string(o) +
                               " waits in " + threads_[w * 32 + o].waiting_in + " with mask " + hex(s.mask) +
                               " (lanes named in a mask must call the same collective with the same mask)");
    }
  }
}

std::string BlockScheduler::where() const {
  return std::string("kernel ") + launch_->name + ", block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) +
         "," + std::to_string(blockIdx.z) + ")";
}

std::string BlockScheduler::deadlock_report() const {
  const std::string block = "block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
                            std::to_string(blockIdx.z) + ")";
  const unsigned exited = nthreads_ - live_;
  unsigned at_warp = 0;
  const char* barrier_name = "__syncthreads";
  for (unsigned t = 0; t < nthreads_; ++t) {
    if (threads_[t].state == kAtWarp) ++at_warp;
    if (threads_[t].state == kAtBarrier) barrier_name = threads_[t].waiting_in;
  }
  std::string msg = std::string("kernel ") + launch_->name + ": deadlock: ";
  if (barrier_arrived_ > 0) {
    msg += std::string(barrier_name) + " reached by " + std::to_string(barrier_arrived_) + " of " +
           std::to_string(nthreads_) + " threads of " + block;
    if (exited) msg += "; " + std::to_string(exited) + " exited without reaching it";
    if (at_warp) msg += "; " + std::to_string(at_warp) + " wait in warp collectives";
    return msg + " (a barrier in divergent code never completes)";
  }
  for (unsigned w = 0; w * 32 < nthreads_; ++w) {
    if (!waiting_[w]) continue;
    const unsigned first = static_cast<unsigned>(__builtin_ctz(waiting_[w]));
    const WarpSlot& s = slots_[w * 32 + first];
    const unsigned group = s.mask & lanes_below(nthreads_ - w * 32);
    const unsigned missing = group & ~waiting_[w];
    msg += std::string(threads_[w * 32 + first].waiting_in) + " with mask " + hex(s.mask) + " in warp " +
           std::to_string(w) + " of " + block + " waits for lanes " + hex(missing);
    if ((missing & exited_[w]) == missing) {
      msg += ", which exited";
    } else {
      msg += ", which wait elsewhere or exited";
    }
    return msg + " (a warp collective in divergent code never completes)";
  }
  return msg + "no thread can run";  // unreachable: someone waits
}

}  // namespace foo::sim
