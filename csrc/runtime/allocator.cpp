// Caching allocator. Blocks are sized in 512-byte steps and cached per (device, stream, size):
// a freed block is reused only by allocations on the stream it was allocated on, whose queued
// work runs in order, so reuse needs no synchronisation. A block recorded on other streams
// (recordStream) waits for events on those streams before it returns to the cache (it counts as
// "active" until then, as in torch.cuda). Blocks are never split, so a block is a segment.
// Allocation and free never take the GIL, unless memory history with stacks is being recorded
// (torch.foo.memory._record_memory_history): then the stack is gathered (GIL) before the pool's
// lock is taken, as torch.cuda's allocator does. Off, history costs one relaxed atomic load.
// torch.foo.set_per_process_memory_fraction caps each device's reserved memory.
// Private pools (torch.foo.MemPool): while a thread routes a device's allocations to a pool
// (use_mem_pool), its blocks are cached under that pool only, so no other allocation reuses them;
// a released pool's cached blocks go back to the driver, and blocks freed later at the next
// emptyCache (never from inside a free, which may run on a stream's task).
#include "runtime/allocator.h"

#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/device_error.h"
#include "runtime/event.h"
#include "runtime/fork.h"
#include "runtime/stream.h"
#include "runtime/sync_debug.h"
#include "sim/checked.h"

namespace foo::runtime {
namespace {

using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

constexpr size_t kRound = 512;
constexpr size_t kSmallSize = 1 << 20;  // torch.cuda's small/large pool boundary for statistics
constexpr int kMaxDevices = 64;

using Context = std::shared_ptr<c10::GatheredContext>;

struct Block {
  size_t size = 0;       // rounded, what the device holds
  size_t requested = 0;  // what the caller asked for
  StreamHandle stream = nullptr;
  std::vector<c10::Stream> used_on;  // extra streams from recordStream
  Context context;          // stack of the allocation using it (recorded history only)
  Context segment_context;  // stack of the allocation that took it from the driver
  uint64_t pool = 0;        // the private pool it belongs to (MempoolId_t's second id), 0: none
};

// The private pools' registry: their use counts (the MemPool and each use_mem_pool block using
// it), and which were released. Ids are never reused.
struct PoolRegistry {
  std::mutex mutex;
  uint64_t next = 1;
  std::unordered_map<uint64_t, int> use_count;  // live pools only
};
PoolRegistry pool_registry;

// Per thread and device: the pools allocations are routed to, innermost last.
thread_local std::array<std::vector<uint64_t>, kMaxDevices> routed_pools;

// Streams capturing a graph and their pools (begin_capture_to_pool). `active` is all an allocation
// reads while no capture is underway.
struct CaptureRoutes {
  std::atomic<int> active{0};
  std::mutex mutex;
  std::vector<std::tuple<c10::DeviceIndex, StreamHandle, uint64_t>> routes;
};
CaptureRoutes capture_routes;

uint64_t routed_pool(c10::DeviceIndex device, StreamHandle stream) {
  if (capture_routes.active.load(std::memory_order_acquire) != 0) {
    uint64_t on_device = 0;  // a pool of a capture on the device, for a stream that joined one
    {
      std::lock_guard<std::mutex> lock(capture_routes.mutex);
      for (const auto& [d, s, id] : capture_routes.routes) {
        if (d == device && s == stream) return id;
        if (d == device && on_device == 0) on_device = id;
      }
    }
    if (on_device != 0 && driver().is_capturing(stream)) return on_device;
  }
  const auto& stack = routed_pools[static_cast<size_t>(device)];
  return stack.empty() ? 0 : stack.back();
}

// Memory history settings (record_history). `on` is the only thing read when it is off.
struct History {
  std::atomic<bool> on{false};
  std::atomic<c10::CachingDeviceAllocator::CreateContextFn> gather{nullptr};
  std::atomic<int> when{0};  // RecordContext
  std::atomic<size_t> max_entries{0};
};
History history;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The stack for an event, when recording with at least `needed`. Called without any pool lock.
Context gather_if(bool recording, RecordContext needed) {
  if (!recording || history.when.load(std::memory_order_relaxed) < static_cast<int>(needed)) return nullptr;
  auto gather = history.gather.load(std::memory_order_relaxed);
  return gather ? gather() : nullptr;
}

struct PendingFree {
  void* ptr;
  std::vector<Event> events;  // one per stream the block was used on
};

struct DevicePool {
  std::mutex mutex;
  std::unordered_map<void*, Block> live;  // handed out
  std::unordered_map<void*, Block> idle;  // owned, not handed out: cached or pending
  std::map<std::tuple<uint64_t, StreamHandle, size_t>, std::vector<void*>> cached;  // free, by pool+stream+size
  std::vector<PendingFree> pending;  // freed, waiting on other streams' events
  DeviceStats stats;
  double fraction = 1.0;                                     // set_per_process_memory_fraction
  size_t allowed = std::numeric_limits<size_t>::max();       // its cap in bytes, when set
  size_t reserving = 0;  // bytes being taken from the driver now (counted against the cap)
  std::vector<TraceEntry> trace;  // recorded events, a ring of history.max_entries
  size_t trace_next = 0;          // the oldest entry once the ring is full
};

// Appends an event to the pool's ring. Caller holds the pool's lock.
void record(DevicePool& pool, bool recording, TraceEntry::Action action, const void* addr,
            size_t size, StreamHandle stream, Context context) {
  if (!recording) return;
  const size_t max_entries = history.max_entries.load(std::memory_order_relaxed);
  if (max_entries == 0) return;
  TraceEntry e{action, reinterpret_cast<uintptr_t>(addr), size, reinterpret_cast<uintptr_t>(stream),
               now_us(), std::move(context)};
  if (pool.trace.size() < max_entries) {
    pool.trace.push_back(std::move(e));
  } else {
    if (pool.trace_next >= pool.trace.size()) pool.trace_next = 0;  // max_entries shrank
    pool.trace[pool.trace_next++] = std::move(e);
  }
}

// Counts `amount` in the aggregate and in the pool a block of `block_size` bytes belongs to.
void increase(StatArray& stat, size_t block_size, size_t amount) {
  stat[static_cast<size_t>(StatType::AGGREGATE)].increase(amount);
  stat[static_cast<size_t>(block_size < kSmallSize ? StatType::SMALL_POOL : StatType::LARGE_POOL)]
      .increase(amount);
}
void decrease(StatArray& stat, size_t block_size, size_t amount) {
  stat[static_cast<size_t>(StatType::AGGREGATE)].decrease(amount);
  stat[static_cast<size_t>(block_size < kSmallSize ? StatType::SMALL_POOL : StatType::LARGE_POOL)]
      .decrease(amount);
}

template <class F>
void for_each_stat_array(DeviceStats& s, F&& f) {
  for (auto* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                  &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes}) {
    for (auto& stat : *a) f(stat);
  }
}

class FooCachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    const auto device = current_device();
    const c10::Device where(c10::DeviceType::PrivateUse1, device);
    if (nbytes == 0) return {nullptr, nullptr, &raw_free, where};
    void* ptr = malloc_block(device, (nbytes + kRound - 1) / kRound * kRound, nbytes,
                             current_native_stream(device));
    return {ptr, ptr, free_on_device(device), where};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &raw_free; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    const auto device = driver().device_of(dest);
    auto stream = current_native_stream(static_cast<c10::DeviceIndex>(device < 0 ? 0 : device));
    check_sync("a storage copy (Allocator::copy_data)");  // before the copy: nothing left in flight
    driver().memcpy_async(dest, src, count, CopyKind::DeviceToDevice, stream);
    driver().synchronize_stream(stream);
    raise_device_error_after_wait(static_cast<c10::DeviceIndex>(device < 0 ? 0 : device), stream);
  }

  bool initialized() override { return is_initialized() && !in_bad_fork(); }

  // {0, 0}: every cached block; a private pool's id: that pool's cached blocks only.
  void emptyCache(c10::MempoolId_t mempool_id) override {
    if (!initialized()) return;
    const uint64_t only = mempool_id.second;
    const bool recording = history.on.load(std::memory_order_relaxed);
    const Context context = gather_if(recording, RecordContext::ALL);
    // Every device first: a pending block may wait on another device's stream (recordStream).
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) driver().synchronize_device(d);
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      auto& pool = pools_[d];
      std::vector<std::pair<void*, size_t>> to_free;
      {
        std::lock_guard<std::mutex> lock(pool.mutex);
        pool.stats.num_sync_all_streams++;
        collect_pending(pool, recording);  // every stream is idle: all of them return to the cache
        for (auto it = pool.cached.begin(); it != pool.cached.end();) {
          if (only != 0 && std::get<0>(it->first) != only) {
            ++it;
            continue;
          }
          for (void* ptr : it->second) {
            const auto idle = pool.idle.find(ptr);
            to_free.emplace_back(ptr, idle->second.size);
            record(pool, recording, TraceEntry::SEGMENT_FREE, ptr, idle->second.size, idle->second.stream, context);
            pool.idle.erase(idle);
          }
          it = pool.cached.erase(it);
        }
      }
      // Outside the lock: the driver's free waits for the streams, whose tasks may free tensors.
      for (const auto& [ptr, size] : to_free) driver().free(d, ptr);
      std::lock_guard<std::mutex> lock(pool.mutex);
      for (const auto& [ptr, size] : to_free) {
        decrease(pool.stats.segment, size, 1);
        decrease(pool.stats.reserved_bytes, size, size);
        pool.stats.num_device_free++;
      }
    }
  }

  void recordStream(const c10::DataPtr& data_ptr, c10::Stream stream) override {
    if (!data_ptr.get() || in_bad_fork()) return;
    auto& pool = pools_[data_ptr.device().index()];
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.live.find(data_ptr.get());
    if (it == pool.live.end() || native_stream(stream) == it->second.stream) return;
    it->second.used_on.push_back(stream);
  }

  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    return pool.stats;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    for_each_stat_array(pool.stats, [](c10::CachingAllocator::Stat& s) { s.reset_accumulated(); });
    pool.stats.num_alloc_retries = pool.stats.num_ooms = pool.stats.num_sync_all_streams = 0;
    pool.stats.num_device_alloc = pool.stats.num_device_free = 0;
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    for_each_stat_array(pool.stats, [](c10::CachingAllocator::Stat& s) { s.reset_peak(); });
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_device_index(device);
    return driver().mem_get_info(device);
  }

  std::vector<c10::CachingDeviceAllocator::SegmentInfo> snapshot(c10::DeviceIndex device,
                                                                 std::vector<TraceEntry>* trace) {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    collect_pending(pool, history.on.load(std::memory_order_relaxed));
    if (trace) {
      const auto& ring = pool.trace;
      trace->clear();
      trace->reserve(ring.size());
      const size_t start = pool.trace_next < ring.size() ? pool.trace_next : 0;
      for (size_t i = 0; i < ring.size(); ++i) trace->push_back(ring[(start + i) % ring.size()]);
    }
    std::vector<c10::CachingDeviceAllocator::SegmentInfo> segments;
    auto add = [&](void* ptr, const Block& block, bool allocated, bool active) {
      c10::CachingDeviceAllocator::SegmentInfo seg;
      seg.device = device;
      seg.address = reinterpret_cast<size_t>(ptr);
      seg.total_size = block.size;
      seg.requested_size = allocated ? block.requested : 0;
      seg.allocated_size = allocated ? block.size : 0;
      seg.active_size = active ? block.size : 0;
      seg.stream = block.stream;
      seg.is_large = block.size >= kSmallSize;
      seg.context_when_allocated = block.segment_context;
      seg.owner_private_pool_id = {0, block.pool};
      c10::CachingDeviceAllocator::BlockInfo info;
      info.size = block.size;
      info.requested_size = seg.requested_size;
      info.allocated = allocated;
      info.active = active;
      if (allocated) info.context_when_allocated = block.context;
      seg.blocks.push_back(info);
      segments.push_back(std::move(seg));
    };
    for (const auto& [ptr, block] : pool.live) add(ptr, block, true, true);
    for (const auto& pending : pool.pending) add(pending.ptr, pool.idle.at(pending.ptr), false, true);
    for (const auto& [key, ptrs] : pool.cached) {
      for (void* ptr : ptrs) add(ptr, pool.idle.at(ptr), false, false);
    }
    return segments;
  }

 private:
  void* malloc_block(c10::DeviceIndex device, size_t size, size_t requested, StreamHandle stream) {
    const bool recording = history.on.load(std::memory_order_relaxed);
    Context context = gather_if(recording, RecordContext::STATE);
    auto& pool = pools_[device];
    std::unique_lock<std::mutex> lock(pool.mutex);
    collect_pending(pool, recording);
    auto& stats = pool.stats;
    const uint64_t private_pool = routed_pool(device, stream);
    auto hit = pool.cached.find({private_pool, stream, size});
    void* ptr = nullptr;
    Context segment_context;
    if (hit != pool.cached.end() && !hit->second.empty()) {
      ptr = hit->second.back();
      hit->second.pop_back();
      const auto idle = pool.idle.find(ptr);  // one lookup: the cache-hit path is the hot one
      segment_context = std::move(idle->second.segment_context);
      pool.idle.erase(idle);
    } else {
      lock.unlock();
      ptr = device_malloc(device, size, stream, recording);
      lock.lock();
      pool.reserving -= size;
      increase(stats.segment, size, 1);
      increase(stats.reserved_bytes, size, size);
      stats.num_device_alloc++;
      segment_context = context;
      record(pool, recording, TraceEntry::SEGMENT_ALLOC, ptr, size, stream,
             trace_context(recording, context));
    }
    record(pool, recording, TraceEntry::ALLOC, ptr, requested, stream, trace_context(recording, context));
    pool.live[ptr] = Block{size, requested, stream, {}, std::move(context), std::move(segment_context), private_pool};
    increase(stats.allocation, size, 1);
    increase(stats.allocated_bytes, size, size);
    increase(stats.requested_bytes, size, requested);
    increase(stats.active, size, 1);
    increase(stats.active_bytes, size, size);
    // Checked mode (sim/checked.h): the tensor's bytes become addressable, the rest of the block
    // stays a redzone. A no-op for memory outside the checked arena.
    if (checked_mode_) checked_shadow(stream, ptr, requested, true);
    return ptr;
  }

  // The alloc event's stack: only with context "alloc" or "all" (STATE keeps it on the block).
  static Context trace_context(bool recording, const Context& context) {
    return recording && history.when.load(std::memory_order_relaxed) >= static_cast<int>(RecordContext::ALLOC)
               ? context
               : nullptr;
  }

  // Whether `size` more bytes stay within the device's memory fraction; if so, counts them as
  // being reserved (the caller subtracts them once the driver answered).
  static bool reserve_within_cap(DevicePool& pool, size_t size) {
    std::lock_guard<std::mutex> lock(pool.mutex);
    const size_t reserved =
        static_cast<size_t>(pool.stats.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current);
    if (pool.allowed != std::numeric_limits<size_t>::max() &&
        (size > pool.allowed || reserved + pool.reserving > pool.allowed - size)) {
      return false;
    }
    pool.reserving += size;
    return true;
  }

  // Asks the driver, within the memory fraction; on out-of-memory frees the cache once and
  // retries, as torch.cuda does. On success `size` stays counted in pool.reserving.
  void* device_malloc(c10::DeviceIndex device, size_t size, StreamHandle stream, bool recording) {
    auto& pool = pools_[device];
    std::string why;
    bool capped = false;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (attempt == 1) {
        {
          std::lock_guard<std::mutex> lock(pool.mutex);
          pool.stats.num_alloc_retries++;
        }
        emptyCache({0, 0});
      }
      capped = !reserve_within_cap(pool, size);
      if (capped) continue;
      try {
        return driver().malloc(device, size);
      } catch (const DriverError& e) {
        why = e.what();
        std::lock_guard<std::mutex> lock(pool.mutex);
        pool.reserving -= size;
      }
    }
    int64_t allocated = 0, reserved = 0;
    size_t allowed = 0;
    double fraction = 1.0;
    {
      std::lock_guard<std::mutex> lock(pool.mutex);
      pool.stats.num_ooms++;
      allocated = pool.stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].current;
      reserved = pool.stats.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current;
      allowed = pool.allowed;
      fraction = pool.fraction;
      if (recording) {
        const auto free_bytes = driver().mem_get_info(device).first;
        record(pool, recording, TraceEntry::OOM, reinterpret_cast<void*>(free_bytes), size, stream,
               nullptr);
      }
    }
    if (capped) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "foo: out of memory on device ",
                       static_cast<int>(device), " allocating ", size, " bytes: the per-process ",
                       "memory fraction ", fraction, " (set_per_process_memory_fraction) allows ",
                       allowed, " bytes reserved, and ", reserved, " are reserved (", allocated,
                       " bytes allocated)");
    }
    TORCH_CHECK_WITH(OutOfMemoryError, false, "foo: out of memory on device ",
                     static_cast<int>(device), " allocating ", size, " bytes (", allocated,
                     " bytes allocated): ", why);
    return nullptr;  // unreachable
  }

  void free_block(int device, void* ptr) {
    TORCH_INTERNAL_ASSERT(device >= 0, "foo allocator: freeing a pointer it does not own");
    const bool recording = history.on.load(std::memory_order_relaxed);
    const Context context = gather_if(recording, RecordContext::ALL);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.live.find(ptr);
    TORCH_INTERNAL_ASSERT(it != pool.live.end(), "foo allocator: double free");
    Block block = std::move(it->second);
    pool.live.erase(it);
    auto& stats = pool.stats;
    decrease(stats.allocation, block.size, 1);
    decrease(stats.allocated_bytes, block.size, block.size);
    decrease(stats.requested_bytes, block.size, block.requested);
    block.context = nullptr;
    record(pool, recording, TraceEntry::FREE_REQUESTED, ptr, block.requested, block.stream, context);
    if (!block.used_on.empty()) {
      PendingFree pending{ptr, {}};
      for (const auto& s : block.used_on) pending.events.emplace_back(s);
      block.used_on.clear();
      pool.idle[ptr] = block;
      pool.pending.push_back(std::move(pending));
      return;
    }
    decrease(stats.active, block.size, 1);
    decrease(stats.active_bytes, block.size, block.size);
    record(pool, recording, TraceEntry::FREE_COMPLETED, ptr, block.requested, block.stream, context);
    // Poisoned until handed out again (not a block recorded on other streams: their work may
    // still read it when its own stream gets there).
    if (checked_mode_) checked_shadow(block.stream, ptr, 0, false);
    pool.cached[{block.pool, block.stream, block.size}].push_back(ptr);
    pool.idle[ptr] = std::move(block);
  }

  // Checked mode (sim/checked.h): the block's shadow changes in the order of its stream, as its
  // reuse does, so work queued before a free still sees the block as it was. A no-op task for
  // memory outside the checked arena.
  static void checked_shadow(StreamHandle stream, void* ptr, size_t requested, bool hand_out) {
    if (!foo::sim::checked::in_arena(ptr)) return;
    struct Task {
      void* ptr;
      size_t requested;
      bool hand_out;
      static void run(void* arg, bool) {  // also when the stream skips it after an error
        std::unique_ptr<Task> t(static_cast<Task*>(arg));
        if (t->hand_out) {
          foo::sim::checked::on_hand_out(t->ptr, t->requested);
        } else {
          foo::sim::checked::on_take_back(t->ptr);
        }
      }
    };
    driver().enqueue_host_fn(stream, &Task::run, new Task{ptr, requested, hand_out});
  }

  // Moves blocks whose other-stream work has finished into the cache. Caller holds the lock.
  void collect_pending(DevicePool& pool, bool recording) {
    for (auto it = pool.pending.begin(); it != pool.pending.end();) {
      bool done = true;
      for (const auto& e : it->events) done = done && e.query();
      if (!done) {
        ++it;
        continue;
      }
      const auto& block = pool.idle.at(it->ptr);
      decrease(pool.stats.active, block.size, 1);
      decrease(pool.stats.active_bytes, block.size, block.size);
      record(pool, recording, TraceEntry::FREE_COMPLETED, it->ptr, block.requested, block.stream, nullptr);
      pool.cached[{block.pool, block.stream, block.size}].push_back(it->ptr);
      it = pool.pending.erase(it);
    }
  }

  // A forked child holds the parent's tensors but not its device: leak them.
  static void raw_free(void* ptr) {
    if (ptr && !in_bad_fork()) static_cast<FooCachingAllocator&>(allocator()).free_block(driver().device_of(ptr), ptr);
  }
  // The deleter of a tensor's memory knows its device, so freeing needs no driver().device_of
  // (sim: a locked map search; cuda: cudaPointerGetAttributes) on every tensor's death.
  template <int Device>
  static void free_on(void* ptr) {
    if (ptr && !in_bad_fork()) static_cast<FooCachingAllocator&>(allocator()).free_block(Device, ptr);
  }
  template <size_t... D>
  static constexpr std::array<c10::DeleterFnPtr, kMaxDevices> deleters(std::index_sequence<D...>) {
    return {&free_on<static_cast<int>(D)>...};
  }
  static c10::DeleterFnPtr free_on_device(c10::DeviceIndex device) {
    static constexpr auto table = deleters(std::make_index_sequence<kMaxDevices>());
    return table[device];
  }

  std::array<DevicePool, kMaxDevices> pools_;
  const bool checked_mode_ = foo::sim::checked::arena_active();

 public:
  void* raw_alloc(size_t nbytes, c10::DeviceIndex device, StreamHandle stream) {
    check_device_index(device);
    if (nbytes == 0) return nullptr;
    return malloc_block(device, (nbytes + kRound - 1) / kRound * kRound, nbytes, stream);
  }

  void set_fraction(double fraction, c10::DeviceIndex device) {
    check_device_index(device);
    TORCH_CHECK(fraction >= 0 && fraction <= 1, "foo: invalid memory fraction ", fraction,
                ", set it within [0, 1]");
    const auto total = driver().total_memory(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.fraction = fraction;
    pool.allowed = static_cast<size_t>(fraction * static_cast<double>(total));
  }
  double fraction(c10::DeviceIndex device) {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    return pool.fraction;
  }
  void clear_history() {
    for (auto& pool : pools_) {
      std::lock_guard<std::mutex> lock(pool.mutex);
      pool.trace.clear();
      pool.trace_next = 0;
      for (auto& [ptr, block] : pool.live) block.context = nullptr;
    }
  }
};

// Leaked: tensors may be freed during interpreter shutdown, after static destructors run.
FooCachingAllocator* the_allocator = new FooCachingAllocator();
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, the_allocator)

}  // namespace

c10::DeviceAllocator& allocator() { return *the_allocator; }

DeviceStats device_stats(c10::DeviceIndex device) { return the_allocator->getDeviceStats(device); }

std::vector<c10::CachingDeviceAllocator::SegmentInfo> memory_snapshot(c10::DeviceIndex device,
                                                                     std::vector<TraceEntry>* trace) {
  return the_allocator->snapshot(device, trace);
}

void record_history(bool enabled, c10::CachingDeviceAllocator::CreateContextFn gather,
                    RecordContext when, size_t max_entries, bool clear) {
  if (!enabled) {
    history.on.store(false, std::memory_order_relaxed);
    if (clear) the_allocator->clear_history();
    return;
  }
  if (clear) the_allocator->clear_history();
  history.gather.store(gather, std::memory_order_relaxed);
  history.when.store(static_cast<int>(gather ? when : RecordContext::NEVER), std::memory_order_relaxed);
  history.max_entries.store(max_entries, std::memory_order_relaxed);
  history.on.store(true, std::memory_order_release);
}

void set_memory_fraction(double fraction, c10::DeviceIndex device) {
  the_allocator->set_fraction(fraction, device);
}
double memory_fraction(c10::DeviceIndex device) { return the_allocator->fraction(device); }

void* raw_alloc(size_t nbytes, c10::DeviceIndex device, std::optional<uintptr_t> stream) {
  check_device_index(device);
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  const auto handle = stream ? reinterpret_cast<StreamHandle>(*stream) : current_native_stream(device);
  return the_allocator->raw_alloc(nbytes, device, handle);
}

void raw_delete(void* ptr) { allocator().raw_deleter()(ptr); }

uint64_t create_pool(int initial_uses) {
  std::lock_guard<std::mutex> lock(pool_registry.mutex);
  const uint64_t id = pool_registry.next++;
  pool_registry.use_count[id] = initial_uses;
  return id;
}

void retain_pool(uint64_t id) {
  std::lock_guard<std::mutex> lock(pool_registry.mutex);
  const auto it = pool_registry.use_count.find(id);
  TORCH_CHECK(it != pool_registry.use_count.end(), "foo: memory pool ", id, " was released");
  ++it->second;
}

void begin_capture_to_pool(c10::DeviceIndex device, StreamHandle stream, uint64_t id) {
  check_device_index(device);
  std::lock_guard<std::mutex> lock(capture_routes.mutex);
  for (const auto& route : capture_routes.routes) {
    TORCH_CHECK(std::get<0>(route) != device || std::get<1>(route) != stream,
                "foo: the stream is already capturing a graph");
  }
  capture_routes.routes.emplace_back(device, stream, id);
  capture_routes.active.fetch_add(1, std::memory_order_release);
}

void end_capture_to_pool(c10::DeviceIndex device, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(capture_routes.mutex);
  auto& routes = capture_routes.routes;
  for (auto it = routes.begin(); it != routes.end(); ++it) {
    if (std::get<0>(*it) == device && std::get<1>(*it) == stream) {
      routes.erase(it);
      capture_routes.active.fetch_sub(1, std::memory_order_release);
      return;
    }
  }
}

int pool_use_count(uint64_t id) {
  std::lock_guard<std::mutex> lock(pool_registry.mutex);
  const auto it = pool_registry.use_count.find(id);
  return it == pool_registry.use_count.end() ? 0 : it->second;
}

void release_pool(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(pool_registry.mutex);
    const auto it = pool_registry.use_count.find(id);
    if (it == pool_registry.use_count.end() || --it->second > 0) return;  // 0 uses left: released
    pool_registry.use_count.erase(it);
  }
  the_allocator->emptyCache({0, id});
}

void begin_allocate_to_pool(c10::DeviceIndex device, uint64_t id) {
  check_device_index(device);
  {
    std::lock_guard<std::mutex> lock(pool_registry.mutex);
    const auto it = pool_registry.use_count.find(id);
    TORCH_CHECK(it != pool_registry.use_count.end(), "foo: memory pool ", id, " was released");
    ++it->second;
  }
  routed_pools[static_cast<size_t>(device)].push_back(id);
}

void end_allocate_to_pool(c10::DeviceIndex device, uint64_t id) {
  check_device_index(device);
  auto& stack = routed_pools[static_cast<size_t>(device)];
  TORCH_CHECK(!stack.empty() && stack.back() == id, "foo: use_mem_pool blocks must end in the order they began");
  stack.pop_back();
  release_pool(id);  // the block's use
}

}  // namespace foo::runtime

namespace foo::runtime {

void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes) {
  TORCH_CHECK(storage.resizable(), "foo: trying to resize a storage that is not resizable");
  const auto keep = std::min(storage.nbytes(), new_bytes);
  const auto device = storage.device().index();
  c10::DataPtr fresh;
  {
    c10::DeviceGuard guard(storage.device());  // allocate on the storage's own device
    fresh = storage.allocator()->allocate(new_bytes);
  }
  if (keep > 0) {
    // Same stream as the old block's users; the old block is reused only after this copy runs.
    driver().memcpy_async(fresh.get(), storage.data(), keep, CopyKind::DeviceToDevice,
                          current_native_stream(device));
  }
  auto& mutable_storage = const_cast<c10::Storage&>(storage);
  mutable_storage.set_data_ptr_noswap(std::move(fresh));
  mutable_storage.set_nbytes(new_bytes);
}

}  // namespace foo::runtime
