#include "runtime/host_allocator.h"

#include <cstring>
#include <optional>
#include <vector>

#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/fork.h"
#include "runtime/stream.h"

namespace foo::runtime {
namespace {

using PinnedBlock = at::HostBlock<c10::Stream>;

// The device-specific half of torch's caching host allocator: how to pin, unpin and track use.
struct FooHostAllocatorImpl final : public at::CachingHostAllocatorImpl<c10::Stream, Event> {
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);  // pinned memory is host memory
  }

 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    lazy_init();  // pinning starts the driver, as cudaHostAlloc creates a CUDA context
    try {
      *ptr = driver().malloc_host(size);
    } catch (const DriverError& e) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "foo: cannot pin ", size, " bytes of host memory: ",
                       e.what());
    }
  }
  void free_block(PinnedBlock* block) override {
    if (!in_bad_fork()) driver().free_host(block->ptr_);
  }
  void record_stream(std::optional<std::vector<Event>>& events, c10::Stream stream) override {
    events->emplace_back(stream);
  }
  bool query_event(Event& event) override { return event.query(); }
  c10::Stream get_current_stream() const override { return current_stream(-1); }
  bool stream_is_capturing(c10::Stream /*stream*/) const override { return false; }  // no graphs
};

void free_pinned(void* ctx);

struct FooHostAllocator final : public at::CachingHostAllocatorInterface<FooHostAllocatorImpl, &free_pinned> {};

// Leaked like the device allocator: pinned tensors may die during interpreter shutdown.
FooHostAllocator* the_host_allocator = new FooHostAllocator();

void free_pinned(void* ctx) {
  // A forked child holds the parent's pinned tensors but cannot record events: leak them.
  if (!in_bad_fork()) the_host_allocator->free(ctx);
}

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, the_host_allocator)

}  // namespace

at::HostAllocator& host_allocator() { return *the_host_allocator; }

bool record_host_use(const c10::DataPtr& storage_ptr, const c10::Stream& stream) {
  if (storage_ptr.get_deleter() != &free_pinned) return false;
  return the_host_allocator->record_event(storage_ptr.get(), storage_ptr.get_context(), stream);
}

}  // namespace foo::runtime
