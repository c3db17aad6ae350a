// Checked mode of the sim device (see checked.h and docs/emulation.md, "Checked mode").
#include "sim/checked.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "sim/builtins.h"
#include "sim/launch.h"
#include "sim/launch_limits.h"

namespace foo::sim::checked {
namespace {

// ---------------------------------------------------------------------------------------------
// The setting
// ---------------------------------------------------------------------------------------------
struct Setting {
  unsigned modes = 0;
  std::string error;
};

Setting parse_setting() {
  Setting s;
  const char* v = std::getenv("TORCH_FOO_SIM_CHECK");
  if (!v || !*v) return s;
  const std::string all(v);
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    std::string word = all.substr(start, end - start);
    word.erase(0, word.find_first_not_of(" \t"));
    word.erase(word.find_last_not_of(" \t") + 1);
    if (word == "memcheck") {
      s.modes |= kMemcheck;
    } else if (word == "racecheck") {
      s.modes |= kRacecheck;
    } else if (word == "initcheck") {
      s.modes |= kInitcheck;
    } else if (word == "all" || word == "1") {
      s.modes |= kMemcheck | kRacecheck | kInitcheck;
    } else if (word == "0" || word == "off" || word == "none") {
    } else {
      s.modes = 0;
      s.error = "TORCH_FOO_SIM_CHECK='" + all +
                "' is invalid: expected a comma-separated list of memcheck, racecheck, initcheck, or all";
      return s;
    }
    start = end + 1;
  }
  return s;
}

const Setting& setting() {
  static const Setting s = parse_setting();
  return s;
}


// ---------------------------------------------------------------------------------------------
// The arena: all device memory of the sim driver in checked mode
// ---------------------------------------------------------------------------------------------
constexpr size_t kArenaBytes = size_t{1} << 40;      // address space, never reused
constexpr size_t kCommitStep = size_t{64} << 20;     // made accessible in steps
constexpr size_t kRedzone = 4096;                    // at least this much between allocations
constexpr size_t kAlign = 256;                       // as cudaMalloc

struct Allocation {
  size_t bytes = 0;        // the driver allocation
  size_t requested = 0;    // what the tensor using it asked for (<= bytes)
  bool live = true;        // handed out
  bool released = false;   // returned to the driver (else, when not live: cached by the allocator)
  uint64_t unchecked = 0;  // g_unchecked_blocks when handed out (initcheck)
};

std::atomic<uintptr_t> g_lo{0}, g_span{0};
uint8_t* g_shadow = nullptr;   // per 8 bytes: how many leading bytes are addressable (0..8)
uint8_t* g_written = nullptr;  // per byte a bit: written since handed out (initcheck)
std::mutex g_mu;
std::map<uintptr_t, Allocation> g_allocs;  // by offset in the arena
size_t g_cursor = 0, g_committed = 0;
bool g_arena_failed = false;
// Blocks run by kernels compiled without instrumentation: they may write device memory unseen,
// so initcheck trusts memory they could have written (see uninitialised_read).
std::atomic<uint64_t> g_unchecked_blocks{0};

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// Zeroes [p, p + n): memset at the edges, whole pages handed back to the kernel (they read as
// zero again and hold no memory).
void zero_range(uint8_t* p, size_t n) {
  const size_t page = page_size();
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (a + page - 1) / page * page, last = (a + n) / page * page;
  if (n < 4 * page || first >= last) {
    std::memset(p, 0, n);
    return;
  }
  std::memset(p, 0, first - a);
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  std::memset(reinterpret_cast<void*>(last), 0, a + n - last);
}

// Shadow of [off, off + n) (off 8-aligned): addressable; the granules up to `limit` poisoned.
void unpoison(size_t off, size_t n, size_t limit) {
  std::memset(g_shadow + off / 8, 8, n / 8);
  size_t g = off / 8 + n / 8;
  if (n % 8) g_shadow[g++] = static_cast<uint8_t>(n % 8);
  const size_t end = (off + limit + 7) / 8;
  if (end > g) zero_range(g_shadow + g, end - g);
}

bool init_arena() {  // holds g_mu
  if (g_span.load(std::memory_order_relaxed)) return true;
  if (g_arena_failed) return false;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* base = mmap(nullptr, kArenaBytes, PROT_NONE, flags, -1, 0);
  void* shadow = mmap(nullptr, kArenaBytes / 8, PROT_NONE, flags, -1, 0);
  void* written = mmap(nullptr, kArenaBytes / 8, PROT_NONE, flags, -1, 0);
  if (base == MAP_FAILED || shadow == MAP_FAILED || written == MAP_FAILED) {
    g_arena_failed = true;
    return false;
  }
  g_shadow = static_cast<uint8_t*>(shadow);
  g_written = static_cast<uint8_t*>(written);
  g_lo.store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);
  g_span.store(kArenaBytes, std::memory_order_release);
  return true;
}

bool commit(size_t end) {  // holds g_mu
  if (end <= g_committed) return true;
  const size_t to = std::min(kArenaBytes, (end + kCommitStep - 1) / kCommitStep * kCommitStep);
  const size_t n = to - g_committed;
  char* base = reinterpret_cast<char*>(g_lo.load(std::memory_order_relaxed));
  if (mprotect(base + g_committed, n, PROT_READ | PROT_WRITE) != 0 ||
      mprotect(g_shadow + g_committed / 8, n / 8, PROT_READ | PROT_WRITE) != 0 ||
      mprotect(g_written + g_committed / 8, n / 8, PROT_READ | PROT_WRITE) != 0) {
    return false;
  }
  g_committed = to;
  return true;
}

// The allocation at or before `off` and the one after it. Holds g_mu.
std::pair<const std::pair<const uintptr_t, Allocation>*, const std::pair<const uintptr_t, Allocation>*> neighbours(
    uintptr_t off) {
  auto it = g_allocs.upper_bound(off);
  const std::pair<const uintptr_t, Allocation>* after = it == g_allocs.end() ? nullptr : &*it;
  const std::pair<const uintptr_t, Allocation>* before = it == g_allocs.begin() ? nullptr : &*std::prev(it);
  return {before, after};
}

// ---------------------------------------------------------------------------------------------
// Per host thread: the block being checked
// ---------------------------------------------------------------------------------------------
// Per byte of shared memory: the last write and up to two reads of the current barrier interval
// (stamp), each with the accessing thread and its warp's collective count (wstamp).
struct RaceRecord {
  uint32_t w_stamp, w_wstamp, r_stamp, r_wstamp, r2_stamp, r2_wstamp;
  uint16_t w_tid, r_tid, r2_tid;
};

struct TlsRange {
  struct link_map* module = nullptr;
  size_t size = 0;
  uintptr_t lo = 0;  // this host thread's block of the module's thread-locals (0: unknown)
  RaceRecord* shadow = nullptr;  // calloc'd: pages of it become resident only when touched
  ~TlsRange() { std::free(shadow); }
};

struct BlockState {
  const KernelLaunch* launch = nullptr;
  unsigned modes = 0;
  uintptr_t dyn_lo = 0, dyn_hi = 0, dyn_max = 0;
  TlsRange* tls = nullptr;
  std::unique_ptr<RaceRecord[]> dyn_shadow;
  std::unordered_map<struct link_map*, std::unique_ptr<TlsRange>> modules;
  std::unordered_map<const void*, TlsRange*> kernels;  // by run_thread: its module's range
  uint32_t counter = 0, stamp = 0;
  uint32_t warp_stamp[32] = {};
  std::string report;
  unsigned findings = 0;
};

thread_local BlockState* t_block = nullptr;  // non-null while a checked block runs

BlockState& state() {
  static thread_local BlockState s;
  return s;
}

// Size of a module's thread-local segment (PT_TLS), found once per module.
size_t tls_size(struct link_map* module) {
  static std::mutex mu;
  static std::unordered_map<struct link_map*, size_t> sizes;
  std::lock_guard<std::mutex> lk(mu);
  auto it = sizes.find(module);
  if (it != sizes.end()) return it->second;
  struct Query {
    ElfW(Addr) addr;
    size_t size;
  } q{module->l_addr, 0};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        if (info->dlpi_addr != q->addr) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_TLS) q->size = info->dlpi_phdr[i].p_memsz;
        }
        return 1;
      },
      &q);
  sizes.emplace(module, q.size);
  return q.size;
}

// This host thread's block of a module's thread-locals, allocated now if the thread never touched
// one (glibc allocates them lazily, on the first access through __tls_get_addr).
struct TlsIndex {
  unsigned long module, offset;
};
extern "C" void* __tls_get_addr(TlsIndex* index);

void locate_tls(TlsRange& t) {
  size_t id = 0;
  if (!t.module || !t.size || dlinfo(t.module, RTLD_DI_TLS_MODID, &id) != 0 || id == 0) return;
  TlsIndex index{id, 0};
  t.lo = reinterpret_cast<uintptr_t>(__tls_get_addr(&index));
  if (t.lo) t.shadow = static_cast<RaceRecord*>(std::calloc(t.size, sizeof(RaceRecord)));
  if (!t.shadow) t.lo = 0;
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------
std::string hex(uintptr_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string triple(unsigned x, unsigned y, unsigned z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

unsigned linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

std::string thread_name(unsigned tid) {
  const unsigned bx = blockDim.x, by = blockDim.y;
  return "thread " + triple(tid % bx, tid / bx % by, tid / (bx * by));
}

// "; code: <function> at <file>:<line> (<module>+0x...)": the function from the dynamic symbol table,
// the line from addr2line when the code has line tables (-g1, as checked builds compile).
std::string code_at(void* pc) {
  Dl_info info{};
  if (!pc || !dladdr(pc, &info) || !info.dli_fname) return "";
  const uintptr_t off = reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1;
  std::string out;
  if (info.dli_sname) {
    int status = 0;
    char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    out = std::string(" ") + (status == 0 && d ? d : info.dli_sname);
    std::free(d);
  }
  const char* slash = std::strrchr(info.dli_fname, '/');
  const std::string module = slash ? slash + 1 : info.dli_fname;
  std::string line;
  if (!std::getenv("TORCH_FOO_SIM_CHECK_NO_LINES") && std::strchr(info.dli_fname, '\'') == nullptr) {
    const std::string cmd = "addr2line -e '" + std::string(info.dli_fname) + "' " + hex(off) + " 2>/dev/null";
    if (FILE* f = popen(cmd.c_str(), "r")) {
      char buf[1024];
      if (std::fgets(buf, sizeof buf, f)) {
        line = buf;
        while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
        if (line.rfind("??", 0) == 0) line.clear();
        const size_t disc = line.find(" (discriminator");
        if (disc != std::string::npos) line.erase(disc);
      }
      pclose(f);
    }
  }
  if (!line.empty()) out += " at " + line;
  return "; code:" + out + " (" + module + "+" + hex(off) + ")";
}

std::string where(const BlockState& b, unsigned tid) {
  return "kernel " + std::string(b.launch->name) + ", block " + triple(blockIdx.x, blockIdx.y, blockIdx.z) + ", " +
         thread_name(tid);
}

const char* verb(bool write) { return write ? "write" : "read"; }

void report_global(BlockState& b, uintptr_t off, size_t n, bool write, void* pc) {
  if (b.findings++) return;
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  std::string what;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto [before, after] = neighbours(off);
    auto describe = [&](const std::pair<const uintptr_t, Allocation>& a) {
      return std::to_string(a.second.live ? a.second.requested : a.second.bytes) + "-byte allocation at " +
             hex(lo + a.first);
    };
    if (before && off < before->first + before->second.bytes && !before->second.live) {
      what = std::to_string(off - before->first) + " bytes inside a " + describe(*before) + " that was freed" +
             (before->second.released ? "" : " (its block is cached by the allocator)") + ": use after free";
    } else if (before && off < before->first + before->second.requested) {
      what = std::to_string(off + n - (before->first + before->second.requested)) +
             " bytes of it past the end of the " + describe(*before) + " (it starts at byte " +
             std::to_string(off - before->first) + ")";
    } else {
      // The nearer of the allocation that ends before the address and the one that starts after.
      const uintptr_t past = before ? off - (before->first + before->second.requested) : ~uintptr_t{0};
      const uintptr_t ahead = after ? after->first - off : ~uintptr_t{0};
      if (before && past <= ahead) {
        what = std::to_string(past) + " bytes past the end of the " + describe(*before) +
               (before->second.live ? "" : ", which was freed");
      } else if (after) {
        what = std::to_string(ahead) + " bytes before the " + describe(*after) +
               (after->second.live ? "" : ", which was freed");
      } else {
        what = "no allocation near it";
      }
    }
  }
  b.report = "foo sim memcheck: invalid " + std::string(verb(write)) + " of " + std::to_string(n) +
             " bytes at " + hex(lo + off) + " in " + where(b, linear_tid()) + ": " + what + code_at(pc);
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------
void uninitialised_read(BlockState& b, uintptr_t off, size_t n, void* pc) {
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  std::string what;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto [before, after] = neighbours(off);
    (void)after;
    if (!before || off >= before->first + before->second.bytes) return;
    Allocation& a = g_allocs.at(before->first);
    const uint64_t unchecked = g_unchecked_blocks.load(std::memory_order_relaxed);
    if (a.unchecked != unchecked) {
      // A kernel compiled without instrumentation ran since the block was handed out and may
      // have written it: trust the whole block from here on.
      a.unchecked = unchecked;
      const size_t first = before->first;
      std::memset(g_written + (first + 7) / 8, 0xff, a.requested / 8);
      for (size_t i = first + a.requested / 8 * 8; i < first + a.requested; ++i) g_written[i / 8] |= 1u << (i % 8);
      return;
    }
    what = std::to_string(off - before->first) + " bytes into the " + std::to_string(a.requested) +
           "-byte allocation at " + hex(lo + before->first) + ", never written since it was allocated";
  }
  if (b.findings++) return;
  b.report = "foo sim initcheck: read of " + std::to_string(n) + " uninitialised bytes at " + hex(lo + off) +
             " in " + where(b, linear_tid()) + ": " + what + code_at(pc);
}

// Leading bytes of [off, off + n) that are addressable.
size_t addressable_prefix(uintptr_t off, size_t n) {
  size_t k = 0;
  while (k < n && (off + k) % 8 < g_shadow[(off + k) >> 3]) ++k;
  return k;
}

// An access to device memory, `off` bytes into the arena.
void global_access(uintptr_t off, size_t n, bool write, bool atomic, void* pc) {
  BlockState* b = t_block;
  if (!b) return;  // instrumented host code outside a kernel
  if (b->modes & kMemcheck) {
    for (uintptr_t p = off, end = off + n; p < end;) {
      const unsigned in = p & 7;
      const size_t take = std::min<size_t>(8 - in, end - p);
      const uint8_t s = g_shadow[p >> 3];
      if (in + take > s) {
        // A naturally aligned access of up to 16 bytes that starts inside the tensor stays inside
        // its allocation on every device (blocks are 512-byte multiples, cudaMalloc's 256-byte
        // aligned): what sub-word atomics and vector loads over a tensor's tail rely on
        // (kernels/core/atomic_ops.h). Only its bytes inside the tensor count for initcheck.
        const size_t inside = addressable_prefix(off, n);
        if (inside == 0 || n > 16 || (n & (n - 1)) != 0 || off % n != 0) {
          report_global(*b, off, n, write, pc);
          return;
        }
        n = inside;
        break;
      }
      p += take;
    }
  }
  if (b->modes & kInitcheck) {
    for (uintptr_t p = off, end = off + n; p < end;) {
      const unsigned in = p & 7;
      const size_t take = std::min<size_t>(8 - in, end - p);
      const uint8_t mask = static_cast<uint8_t>(((1u << take) - 1u) << in);
      uint8_t* w = g_written + (p >> 3);
      if ((__atomic_load_n(w, __ATOMIC_RELAXED) & mask) != mask) {
        if (!write || atomic) {
          uninitialised_read(*b, off, n, pc);
          if (!atomic) return;
        }
        __atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
      }
      p += take;
    }
  }
}

void race(BlockState& b, const char* kind, uintptr_t a, const char* space, unsigned me, bool write, size_t n,
          unsigned other, const char* other_did, void* pc) {
  if (b.findings++) return;
  b.report = "foo sim racecheck: " + std::string(kind) + " hazard on " + space + " at " + hex(a) + " in kernel " +
             b.launch->name + ", block " + triple(blockIdx.x, blockIdx.y, blockIdx.z) + ": " + thread_name(me) +
             " " + (write ? "writes " : "reads ") + std::to_string(n) + " bytes that " + thread_name(other) + " " +
             other_did + ", with no __syncthreads between them" +
             ((me >> 5) == (other >> 5) ? " (same warp, and no __syncwarp or warp collective either)" : "") +
             code_at(pc);
}

void shared_access(BlockState& b, uintptr_t a, size_t n, bool write, bool atomic, void* pc) {
  RaceRecord* rec = nullptr;
  const char* space = "shared memory";
  if (a >= b.dyn_lo && a < b.dyn_max) {
    if (a + n > b.dyn_hi) {
      if ((b.modes & kMemcheck) && !b.findings++) {
        b.report = "foo sim memcheck: invalid " + std::string(verb(write)) + " of " + std::to_string(n) +
                   " bytes of shared memory at " + hex(a) + " in " + where(b, linear_tid()) + ": byte offset " +
                   std::to_string(a - b.dyn_lo) + " of the launch's " + std::to_string(b.dyn_hi - b.dyn_lo) +
                   " bytes of dynamic shared memory" + code_at(pc);
      }
      return;
    }
    rec = b.dyn_shadow.get() + (a - b.dyn_lo);
    space = "dynamic shared memory";
  } else if (TlsRange* t = b.tls) {
    if (a - t->lo >= t->size || a + n > t->lo + t->size) return;
    rec = t->shadow + (a - t->lo);
    space = "__shared__ memory";
  } else {
    return;
  }
  if (atomic || !(b.modes & kRacecheck)) return;
  const unsigned me = linear_tid(), warp = me >> 5;
  const uint32_t S = b.stamp, ws = b.warp_stamp[warp & 31];
  auto unordered = [&](uint32_t stamp, uint32_t wstamp, unsigned other) {
    return stamp == S && other != me && !((other >> 5) == warp && wstamp != ws);
  };
  for (size_t i = 0; i < n; ++i) {
    RaceRecord& r = rec[i];
    if (write) {
      if (unordered(r.w_stamp, r.w_wstamp, r.w_tid)) {
        race(b, "write-after-write", a + i, space, me, true, n, r.w_tid, "wrote", pc);
      } else if (r.r_stamp == S && unordered(r.r_stamp, r.r_wstamp, r.r_tid)) {
        race(b, "write-after-read", a + i, space, me, true, n, r.r_tid, "read", pc);
      } else if (r.r2_stamp == S && unordered(r.r2_stamp, r.r2_wstamp, r.r2_tid)) {
        race(b, "write-after-read", a + i, space, me, true, n, r.r2_tid, "read", pc);
      }
      r.w_stamp = S;
      r.w_wstamp = ws;
      r.w_tid = static_cast<uint16_t>(me);
    } else {
      if (unordered(r.w_stamp, r.w_wstamp, r.w_tid)) {
        race(b, "read-after-write", a + i, space, me, false, n, r.w_tid, "wrote", pc);
      }
      if (r.r_stamp != S || r.r_tid == me) {
        r.r_stamp = S;
        r.r_wstamp = ws;
        r.r_tid = static_cast<uint16_t>(me);
      } else {
        r.r2_stamp = S;
        r.r2_wstamp = ws;
        r.r2_tid = static_cast<uint16_t>(me);
      }
    }
  }
}

// Whether any check is on: instrumented kernels in an unchecked process pay one load and branch.
// Read only by kernels, which run after the library's static initialisation.
const bool g_hooks_on = setting().modes != 0;

inline void on_access(uintptr_t a, size_t n, bool write, bool atomic, void* pc) {
  if (!g_hooks_on) return;
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  if (a - lo < g_span.load(std::memory_order_relaxed)) {
    global_access(a - lo, n, write, atomic, pc);
    return;
  }
  if (BlockState* b = t_block) shared_access(*b, a, n, write, atomic, pc);
}

}  // namespace

unsigned modes() { return setting().modes; }

void validate_setting() {
  if (!setting().error.empty()) throw std::invalid_argument(setting().error);
}

bool arena_active() { return (setting().modes & (kMemcheck | kInitcheck)) != 0; }

void* arena_allocate(size_t bytes) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!init_arena()) return nullptr;
  const size_t start = (g_cursor + kRedzone + kAlign - 1) / kAlign * kAlign;
  const size_t end = start + bytes;
  if (end + kRedzone > kArenaBytes || !commit(end + kRedzone)) return nullptr;
  g_cursor = end;
  unpoison(start, bytes, bytes);
  g_allocs[start] = Allocation{bytes, bytes, true, false, g_unchecked_blocks.load(std::memory_order_relaxed)};
  return reinterpret_cast<void*>(g_lo.load(std::memory_order_relaxed) + start);
}

void arena_release(void* p) {
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  const uintptr_t off = reinterpret_cast<uintptr_t>(p) - lo;
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = g_allocs.find(off);
  if (it == g_allocs.end()) return;
  Allocation& a = it->second;
  a.live = false;
  a.released = true;
  zero_range(g_shadow + off / 8, (a.bytes + 7) / 8);
  zero_range(g_written + off / 8, (a.bytes + 7) / 8);
  zero_range(static_cast<uint8_t*>(p), a.bytes);  // the memory itself goes back to the system
}

bool in_arena(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - g_lo.load(std::memory_order_relaxed) < g_span.load(std::memory_order_relaxed);
}

void on_hand_out(void* p, size_t requested) {
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  const uintptr_t off = reinterpret_cast<uintptr_t>(p) - lo;
  if (!p || off >= g_span.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = g_allocs.find(off);
  if (it == g_allocs.end()) return;
  Allocation& a = it->second;
  a.requested = std::min(requested, a.bytes);
  a.live = true;
  a.unchecked = g_unchecked_blocks.load(std::memory_order_relaxed);
  unpoison(off, a.requested, a.bytes);
  zero_range(g_written + off / 8, (a.bytes + 7) / 8);
}

void on_take_back(void* p) {
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  const uintptr_t off = reinterpret_cast<uintptr_t>(p) - lo;
  if (!p || off >= g_span.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = g_allocs.find(off);
  if (it == g_allocs.end()) return;
  it->second.live = false;
  zero_range(g_shadow + off / 8, (it->second.bytes + 7) / 8);
}

void mark_written(void* p, size_t bytes) {
  if (!(setting().modes & kInitcheck)) return;
  const uintptr_t lo = g_lo.load(std::memory_order_relaxed);
  const uintptr_t off = reinterpret_cast<uintptr_t>(p) - lo;
  if (off >= g_span.load(std::memory_order_relaxed)) return;
  size_t i = off;
  const size_t end = off + bytes;
  for (; i < end && i % 8; ++i) __atomic_fetch_or(&g_written[i / 8], static_cast<uint8_t>(1u << (i % 8)), __ATOMIC_RELAXED);
  if (end / 8 > i / 8) {
    std::memset(g_written + i / 8, 0xff, end / 8 - i / 8);
    i = end / 8 * 8;
  }
  for (; i < end; ++i) __atomic_fetch_or(&g_written[i / 8], static_cast<uint8_t>(1u << (i % 8)), __ATOMIC_RELAXED);
}

void block_begin(const KernelLaunch& launch, unsigned char* dynamic_shared) {
  if (!launch.checked) {
    g_unchecked_blocks.fetch_add(1, std::memory_order_relaxed);
    t_block = nullptr;
    return;
  }
  BlockState& b = state();
  b.launch = &launch;
  b.modes = setting().modes;
  b.findings = 0;
  b.report.clear();
  b.stamp = ++b.counter;
  for (uint32_t& w : b.warp_stamp) w = b.stamp;
  b.dyn_lo = b.dyn_hi = b.dyn_max = 0;
  b.tls = nullptr;
  if (setting().modes & (kMemcheck | kRacecheck)) {
    if (dynamic_shared) {
      b.dyn_lo = reinterpret_cast<uintptr_t>(dynamic_shared);
      b.dyn_hi = b.dyn_lo + launch.shared_bytes;
      b.dyn_max = b.dyn_lo + kMaxSharedMemoryPerBlock;
      if (!b.dyn_shadow) b.dyn_shadow.reset(new RaceRecord[kMaxSharedMemoryPerBlock]());
    }
    const void* key = reinterpret_cast<const void*>(launch.run_thread);
    auto it = b.kernels.find(key);
    if (it == b.kernels.end()) {
      Dl_info info{};
      void* extra = nullptr;
      struct link_map* module = nullptr;
      if (dladdr1(key, &info, &extra, RTLD_DL_LINKMAP) && extra) module = static_cast<struct link_map*>(extra);
      auto& range = b.modules[module];
      if (!range) {
        range = std::make_unique<TlsRange>();
        range->module = module;
        range->size = module ? tls_size(module) : 0;
        locate_tls(*range);
      }
      it = b.kernels.emplace(key, range.get()).first;
    }
    b.tls = it->second->lo ? it->second : nullptr;
  }
  t_block = &b;
}

void block_end() {
  BlockState* b = t_block;
  t_block = nullptr;
  if (!b || !b->findings) return;
  std::string report = std::move(b->report);
  if (b->findings > 1) report += " (and " + std::to_string(b->findings - 1) + " more findings in this block)";
  b->findings = 0;
  throw std::runtime_error(report);
}

void block_abandon() {
  if (BlockState* b = t_block) b->findings = 0;
  t_block = nullptr;
}

void barrier_completed() {
  if (BlockState* b = t_block) b->stamp = ++b->counter;
}

void warp_synchronised(unsigned warp) {
  if (BlockState* b = t_block) b->warp_stamp[warp & 31] = ++b->counter;
}

}  // namespace foo::sim::checked

using foo::sim::checked::on_access;

#define FOO_SIM_CHECK_EXPORT extern "C" __attribute__((visibility("default")))

FOO_SIM_CHECK_EXPORT void foo_sim_check_atomic(const void* p, size_t bytes) {
  on_access(reinterpret_cast<uintptr_t>(p), bytes, true, true, __builtin_return_address(0));
}

// The entry points of GCC's -fsanitize=kernel-address instrumentation (out-of-line form), which
// checked kernels call before each load and store. Not defined when torch_foo itself is built
// with ASan, whose runtime defines them.
#if !defined(__SANITIZE_ADDRESS__)
#define FOO_SIM_CHECK_HOOKS(n)                                                                               \
  FOO_SIM_CHECK_EXPORT void __asan_load##n##_noabort(uintptr_t a) {                                       \
    on_access(a, n, false, false, __builtin_return_address(0));                                              \
  }                                                                                                          \
  FOO_SIM_CHECK_EXPORT void __asan_store##n##_noabort(uintptr_t a) {                                      \
    on_access(a, n, true, false, __builtin_return_address(0));                                               \
  }
FOO_SIM_CHECK_HOOKS(1)
FOO_SIM_CHECK_HOOKS(2)
FOO_SIM_CHECK_HOOKS(4)
FOO_SIM_CHECK_HOOKS(8)
FOO_SIM_CHECK_HOOKS(16)
#undef FOO_SIM_CHECK_HOOKS
FOO_SIM_CHECK_EXPORT void __asan_loadN_noabort(uintptr_t a, size_t n) {
  on_access(a, n, false, false, __builtin_return_address(0));
}
FOO_SIM_CHECK_EXPORT void __asan_storeN_noabort(uintptr_t a, size_t n) {
  on_access(a, n, true, false, __builtin_return_address(0));
}
// Called by instrumented code around noreturn calls and dynamic initialisers: nothing to do here.
FOO_SIM_CHECK_EXPORT void __asan_handle_no_return() {}
FOO_SIM_CHECK_EXPORT void __asan_before_dynamic_init(const char*) {}
FOO_SIM_CHECK_EXPORT void __asan_after_dynamic_init() {}
#endif
