#pragma once
// Pinned host memory for foo: tensor.pin_memory(), DataLoader(pin_memory=True), the host side of
// non_blocking copies. torch's caching host allocator (ATen/core/CachingHostAllocator.h, what
// CUDA's is built on) over driver().malloc_host: a block freed while a copy from or to it may
// still be in flight returns to the cache only once the copy's stream has passed an event.
#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/Stream.h>

namespace foo::runtime {

// The registered allocator (REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, ...)).
at::HostAllocator& host_allocator();

// Keeps the pinned block of `storage_ptr` (a storage's DataPtr) from reuse until `stream` has
// passed the work queued so far. False when the memory does not come from this allocator.
bool record_host_use(const c10::DataPtr& storage_ptr, const c10::Stream& stream);

}  // namespace foo::runtime
