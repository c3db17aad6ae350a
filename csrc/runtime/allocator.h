#pragma once
// The foo device allocator: a caching allocator over the driver, with torch's memory statistics.
#include <vector>

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

namespace foo::runtime {

// The registered allocator (REGISTER_ALLOCATOR(PrivateUse1, ...)).
c10::DeviceAllocator& allocator();

// The allocator's counters for `device`, in torch's structure (what torch.accelerator.memory_stats
// flattens): allocation / segment / active / *_bytes with all, small_pool (< 1 MiB) and large_pool.
c10::CachingDeviceAllocator::DeviceStats device_stats(c10::DeviceIndex device);

// Every block the allocator holds on `device`, live or cached, as torch.cuda.memory_snapshot
// reports segments (blocks are never split, so each segment holds one block).
std::vector<c10::CachingDeviceAllocator::SegmentInfo> memory_snapshot(c10::DeviceIndex device);

// Gives a foo storage `new_bytes` of fresh memory, keeping the bytes both sizes share
// (storage.resize_() and tensor.resize_() growth).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace foo::runtime
