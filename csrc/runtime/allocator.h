#pragma once
// The foo device allocator: a caching allocator over the driver, with torch's memory statistics.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include "runtime/driver/driver.h"

namespace foo::runtime {

// The registered allocator (REGISTER_ALLOCATOR(PrivateUse1, ...)).
c10::DeviceAllocator& allocator();

// The allocator's counters for `device`, in torch's structure (what torch.accelerator.memory_stats
// flattens): allocation / segment / active / *_bytes with all, small_pool (< 1 MiB) and large_pool.
c10::CachingDeviceAllocator::DeviceStats device_stats(c10::DeviceIndex device);

// One allocator event of the recorded history (torch.cuda.memory._snapshot()'s "device_traces").
struct TraceEntry {
  enum Action { ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, OOM };
  Action action;
  uintptr_t addr;  // OOM: the device's free bytes (the visualiser's "device_free")
  size_t size;  // alloc/free events: the size asked for; segment events: the segment's
  uintptr_t stream;
  int64_t time_us;  // microseconds since the epoch
  std::shared_ptr<c10::GatheredContext> context;  // null: no stack recorded
};

// What gets a stack (torch.cuda.memory._record_memory_history's `context`): NEVER; STATE: the
// blocks live now; ALLOC: also alloc events of the history; ALL: also free events.
enum class RecordContext { NEVER = 0, STATE = 1, ALLOC = 2, ALL = 3 };

// Starts (enabled) or stops recording allocation stacks and events on every device. `gather` makes
// a stack (called outside the allocator's locks; it may take the GIL, so it is only called while
// recording). `max_entries` bounds each device's event ring (0: keep no events, only the stacks of
// live blocks). Stopping keeps what was recorded; clear drops it.
void record_history(bool enabled, c10::CachingDeviceAllocator::CreateContextFn gather,
                    RecordContext when, size_t max_entries, bool clear);

// Every block the allocator holds on `device`, live or cached, as torch.cuda.memory_snapshot
// reports segments (blocks are never split, so each segment holds one block), with the stacks
// recorded for them; with `trace`, also the recorded events, oldest first (taken together, so
// the two agree).
std::vector<c10::CachingDeviceAllocator::SegmentInfo> memory_snapshot(
    c10::DeviceIndex device, std::vector<TraceEntry>* trace = nullptr);

// torch.cuda.set_per_process_memory_fraction: an allocation that would take the memory the
// allocator reserves on `device` past fraction * total memory raises OutOfMemoryError (after
// freeing the cache and retrying). 1.0 (the default) caps at the device's total memory.
void set_memory_fraction(double fraction, c10::DeviceIndex device);
double memory_fraction(c10::DeviceIndex device);

// torch.cuda.caching_allocator_alloc/delete: a block of the caching allocator on `device`, cached
// for `stream` (the current stream when not given) once freed by raw_delete.
void* raw_alloc(size_t nbytes, c10::DeviceIndex device, std::optional<uintptr_t> stream);
void raw_delete(void* ptr);

// torch.foo.MemPool: private pools of the caching allocator, by id (MempoolId_t {0, id}). A new
// pool has use count 1 (its MemPool); release_pool drops one use, and the last frees the pool's
// cached blocks on every device (blocks still live go back to the driver at a later empty_cache).
// use_mem_pool routes the calling thread's allocations on `device` to the pool (nested blocks:
// the innermost), each block one use of it.
uint64_t create_pool(int initial_uses = 1);
int pool_use_count(uint64_t id);
void retain_pool(uint64_t id);  // one more use; throws for a released pool
void release_pool(uint64_t id);
void begin_allocate_to_pool(c10::DeviceIndex device, uint64_t id);
void end_allocate_to_pool(c10::DeviceIndex device, uint64_t id);

// Graph capture (runtime/graph.cpp): while `stream` of `device` captures, every allocation on it,
// from any thread (autograd's backward threads too), takes blocks of pool `id`, which the caller
// holds a use of. A block freed during the capture goes back to the pool, so later allocations of
// the same capture reuse it in stream order and nothing outside the pool ever does: a replay
// writes the addresses the capture saw.
void begin_capture_to_pool(c10::DeviceIndex device, StreamHandle stream, uint64_t id);
void end_capture_to_pool(c10::DeviceIndex device, StreamHandle stream);

// Gives a foo storage `new_bytes` of fresh memory, keeping the bytes both sizes share
// (storage.resize_() and tensor.resize_() growth).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace foo::runtime
