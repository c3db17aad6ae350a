// Caching allocator. Blocks are sized in 512-byte steps and cached per (device, stream, size):
// a freed block is reused only by allocations on the stream it was allocated on, whose queued
// work runs in order, so reuse needs no synchronisation. A block recorded on other streams
// (recordStream) waits for events on those streams before it returns to the cache.
// Allocation and free never take the GIL.
#include "runtime/allocator.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace foo::runtime {
namespace {

constexpr size_t kRound = 512;
constexpr int kMaxDevices = 64;

struct Block {
  size_t size = 0;
  StreamHandle stream = nullptr;
  std::vector<c10::Stream> used_on;  // extra streams from recordStream
};

struct PendingFree {
  void* ptr;
  std::vector<EventHandle> events;
};

struct DevicePool {
  std::mutex mutex;
  std::unordered_map<void*, Block> live;                            // handed out
  std::unordered_map<void*, Block> cached_blocks;                   // owned, free
  std::map<std::pair<StreamHandle, size_t>, std::vector<void*>> cached;  // free, by stream+size
  std::vector<PendingFree> pending;  // freed, waiting on other streams' events
  MemoryStats stats;
};

void update_peaks(MemoryStats& s) {
  s.peak_allocated = std::max(s.peak_allocated, s.allocated);
  s.peak_reserved = std::max(s.peak_reserved, s.reserved);
}

class FooCachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    const auto device = current_device();
    if (nbytes == 0) return {nullptr, nullptr, &raw_free, c10::Device(c10::DeviceType::PrivateUse1, device)};
    void* ptr = malloc_block(device, (nbytes + kRound - 1) / kRound * kRound);
    return {ptr, ptr, &raw_free, c10::Device(c10::DeviceType::PrivateUse1, device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &raw_free; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    const auto device = driver().device_of(dest);
    auto stream = current_native_stream(static_cast<c10::DeviceIndex>(device < 0 ? 0 : device));
    driver().memcpy_async(dest, src, count, CopyKind::DeviceToDevice, stream);
    driver().synchronize_stream(stream);
  }

  bool initialized() override { return is_initialized(); }

  void emptyCache(c10::MempoolId_t /*unused*/) override {
    if (!is_initialized()) return;
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      driver().synchronize_device(d);
      auto& pool = pools_[d];
      std::lock_guard<std::mutex> lock(pool.mutex);
      collect_pending(pool);
      for (auto& pending : pool.pending) {  // the device is idle: their streams are done
        for (auto e : pending.events) driver().destroy_event(e);
      }
      pool.pending.clear();
      for (auto& [ptr, block] : pool.cached_blocks) {
        driver().free(d, ptr);
        pool.stats.reserved -= static_cast<int64_t>(block.size);
        pool.stats.num_device_frees++;
      }
      pool.cached_blocks.clear();
      pool.cached.clear();
    }
  }

  void recordStream(const c10::DataPtr& data_ptr, c10::Stream stream) override {
    if (!data_ptr.get()) return;
    auto& pool = pools_[data_ptr.device().index()];
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.live.find(data_ptr.get());
    if (it == pool.live.end() || native_stream(stream) == it->second.stream) return;
    it->second.used_on.push_back(stream);
  }

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    const auto s = memory_stats(device);
    c10::CachingDeviceAllocator::DeviceStats out;
    auto fill = [](c10::CachingAllocator::StatArray& a, int64_t current, int64_t peak) {
      auto& agg = a[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
      agg.current = current;
      agg.peak = peak;
    };
    fill(out.allocated_bytes, s.allocated, s.peak_allocated);
    fill(out.active_bytes, s.allocated, s.peak_allocated);
    fill(out.reserved_bytes, s.reserved, s.peak_reserved);
    out.allocation[0].allocated = s.num_allocs;
    out.allocation[0].freed = s.num_frees;
    out.num_device_alloc = s.num_device_allocs;
    out.num_device_free = s.num_device_frees;
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.stats.num_allocs = pool.stats.num_frees = 0;
    pool.stats.num_device_allocs = pool.stats.num_device_frees = 0;
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.stats.peak_allocated = pool.stats.allocated;
    pool.stats.peak_reserved = pool.stats.reserved;
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_device_index(device);
    const size_t total = driver().properties(device).total_memory;
    const size_t used = static_cast<size_t>(memory_stats(device).reserved);
    return {total > used ? total - used : 0, total};
  }

  MemoryStats stats(c10::DeviceIndex device) {
    check_device_index(device);
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    return pool.stats;
  }

 private:
  void* malloc_block(c10::DeviceIndex device, size_t size) {
    const auto stream = current_native_stream(device);
    auto& pool = pools_[device];
    std::unique_lock<std::mutex> lock(pool.mutex);
    collect_pending(pool);
    auto& stats = pool.stats;
    auto hit = pool.cached.find({stream, size});
    void* ptr = nullptr;
    if (hit != pool.cached.end() && !hit->second.empty()) {
      ptr = hit->second.back();
      hit->second.pop_back();
      pool.cached_blocks.erase(ptr);
    } else {
      lock.unlock();
      ptr = device_malloc(device, size);
      lock.lock();
      stats.reserved += static_cast<int64_t>(size);
      stats.num_device_allocs++;
    }
    pool.live[ptr] = Block{size, stream, {}};
    stats.allocated += static_cast<int64_t>(size);
    stats.num_allocs++;
    update_peaks(stats);
    return ptr;
  }

  // Asks the driver; on out-of-memory frees the cache once and retries, as torch.cuda does.
  void* device_malloc(c10::DeviceIndex device, size_t size) {
    try {
      return driver().malloc(device, size);
    } catch (const DriverError&) {
      emptyCache({0, 0});
    }
    try {
      return driver().malloc(device, size);
    } catch (const DriverError& e) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "foo: out of memory on device ",
                       static_cast<int>(device), " allocating ", size, " bytes (",
                       memory_stats(device).allocated, " bytes allocated): ", e.what());
    }
    return nullptr;  // unreachable
  }

  void free_block(void* ptr) {
    const int device = driver().device_of(ptr);
    TORCH_INTERNAL_ASSERT(device >= 0, "foo allocator: freeing a pointer it does not own");
    auto& pool = pools_[device];
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.live.find(ptr);
    TORCH_INTERNAL_ASSERT(it != pool.live.end(), "foo allocator: double free");
    Block block = std::move(it->second);
    pool.live.erase(it);
    pool.stats.allocated -= static_cast<int64_t>(block.size);
    pool.stats.num_frees++;
    if (!block.used_on.empty()) {
      PendingFree pending{ptr, {}};
      for (const auto& s : block.used_on) {
        auto event = driver().create_event(s.device_index(), /*enable_timing=*/false);
        driver().record_event(event, native_stream(s));
        pending.events.push_back(event);
      }
      block.used_on.clear();
      pool.cached_blocks[ptr] = block;
      pool.pending.push_back(std::move(pending));
      return;
    }
    pool.cached[{block.stream, block.size}].push_back(ptr);
    pool.cached_blocks[ptr] = block;
  }

  // Moves blocks whose other-stream work has finished into the cache. Caller holds the lock.
  void collect_pending(DevicePool& pool) {
    for (auto it = pool.pending.begin(); it != pool.pending.end();) {
      bool done = true;
      for (auto e : it->events) done = done && driver().query_event(e);
      if (!done) {
        ++it;
        continue;
      }
      for (auto e : it->events) driver().destroy_event(e);
      const auto& block = pool.cached_blocks.at(it->ptr);
      pool.cached[{block.stream, block.size}].push_back(it->ptr);
      it = pool.pending.erase(it);
    }
  }

  static void raw_free(void* ptr) {
    if (ptr) static_cast<FooCachingAllocator&>(allocator()).free_block(ptr);
  }

  std::array<DevicePool, kMaxDevices> pools_;
};

// Leaked: tensors may be freed during interpreter shutdown, after static destructors run.
FooCachingAllocator* the_allocator = new FooCachingAllocator();
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, the_allocator)

}  // namespace

c10::DeviceAllocator& allocator() { return *the_allocator; }

MemoryStats memory_stats(c10::DeviceIndex device) { return the_allocator->stats(device); }

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
