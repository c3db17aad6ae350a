#include "sim/warp.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "sim/block_scheduler.h"

namespace foo::sim::detail {
namespace {

const char* const kNames[] = {"__syncwarp",      "__shfl_sync",   "__shfl_up_sync", "__shfl_down_sync",
                              "__shfl_xor_sync", "__ballot_sync", "__any_sync",     "__all_sync"};

// The lane lane L reads, per PTX shfl.sync: within L's segment of `width` lanes; idx wraps
// modulo width, up/down/xor that leave the segment (xor: only upwards) read L itself.
unsigned source_lane(const WarpSlot& s, unsigned lane) {
  const unsigned w = s.width, base = lane & ~(w - 1), arg = static_cast<unsigned>(s.arg);
  switch (s.op) {
    case kShflIdx:
      return base + (arg & (w - 1));
    case kShflUp:
      return lane - base >= arg ? lane - arg : lane;
    case kShflDown:
      return arg < w && lane - base + arg < w ? lane + arg : lane;
    case kShflXor: {
      const unsigned j = lane ^ arg;
      return j < base + w ? j : lane;
    }
    default:
      return lane;
  }
}

void complete(WarpSlot* lanes, unsigned group) {
  const unsigned first = static_cast<unsigned>(__builtin_ctz(group));
  const uint8_t op = lanes[first].op;
  if (op == kSyncwarp) return;
  if (op == kBallot || op == kAny || op == kAll) {
    unsigned votes = 0;
    for (unsigned g = group; g; g &= g - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(g));
      if (lanes[l].value) votes |= 1u << l;
    }
    const uint64_t r = op == kBallot ? votes : op == kAny ? votes != 0 : votes == group;
    for (unsigned g = group; g; g &= g - 1) lanes[__builtin_ctz(g)].result = r;
    return;
  }
  // Results first, then no lane's value is overwritten before another lane has read it.
  for (unsigned g = group; g; g &= g - 1) {
    const unsigned l = static_cast<unsigned>(__builtin_ctz(g));
    const unsigned src = source_lane(lanes[l], l);
    // Reading a lane that does not take part is undefined on a GPU; here it reads itself.
    lanes[l].result = (group >> src) & 1u ? lanes[src].value : lanes[l].value;
  }
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t bits, int arg, int width) {
  const char* what = kNames[op];
  BlockScheduler& s = BlockScheduler::for_collective(what);
  const unsigned lane = s.lane();
  if (!((mask >> lane) & 1u)) {
    throw std::runtime_error(s.where() + ": lane " + std::to_string(lane) + " calls " + what + " with mask " +
                             hex(mask) + ", which does not include the calling lane");
  }
  if (width < 1 || width > 32 || (width & (width - 1))) {
    throw std::runtime_error(s.where() + ": " + what + " with width " + std::to_string(width) +
                             "; width must be a power of 2 from 1 to 32");
  }
  const WarpSlot slot{op, static_cast<uint8_t>(width), arg, mask, bits, 0};
  return s.warp_rendezvous(slot, &complete, what);
}

}  // namespace foo::sim::detail

using foo::sim::BlockScheduler;
using namespace foo::sim::detail;

void __syncwarp(unsigned mask) { warp_collective(kSyncwarp, mask, 0, 0, 32); }
unsigned __ballot_sync(unsigned mask, int p) { return static_cast<unsigned>(warp_collective(kBallot, mask, p != 0, 0, 32)); }
int __any_sync(unsigned mask, int p) { return static_cast<int>(warp_collective(kAny, mask, p != 0, 0, 32)); }
int __all_sync(unsigned mask, int p) { return static_cast<int>(warp_collective(kAll, mask, p != 0, 0, 32)); }

unsigned __activemask() {
  const foo::sim::KernelLaunch* l = BlockScheduler::running_launch();
  if (!l) throw std::runtime_error("__activemask called outside a kernel");
  if (l->cooperative) return BlockScheduler::for_collective("__activemask").converge(__builtin_return_address(0));
  // Independent threads run alone; the warp's lanes are those that exist.
  const unsigned n = l->block.x * l->block.y * l->block.z;
  const unsigned t = (threadIdx.z * l->block.y + threadIdx.y) * l->block.x + threadIdx.x;
  const unsigned rest = n - (t & ~31u);
  return rest >= 32 ? 0xffffffffu : (1u << rest) - 1u;
}
