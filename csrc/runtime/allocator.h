#pragma once
// The foo device allocator: a caching allocator over the driver, with torch's memory statistics.
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

namespace foo::runtime {

class CachingAllocator;
// The registered allocator (REGISTER_ALLOCATOR(PrivateUse1, ...)).
c10::DeviceAllocator& allocator();

struct MemoryStats {
  int64_t allocated = 0, reserved = 0, peak_allocated = 0, peak_reserved = 0;
  int64_t num_allocs = 0, num_frees = 0, num_device_allocs = 0, num_device_frees = 0;
};
MemoryStats memory_stats(c10::DeviceIndex device);

// Gives a foo storage `new_bytes` of fresh memory, keeping the bytes both sizes share
// (storage.resize_() and tensor.resize_() growth).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace foo::runtime
