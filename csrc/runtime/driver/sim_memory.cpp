#include "sim_memory.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "driver.h"
#include "sim/checked.h"

namespace foo::runtime::sim {
namespace {
// 256 bytes like cudaMalloc, so vectorised kernels see the same alignment.
constexpr size_t kAlign = 256;
}  // namespace

SimMemory::SimMemory(int devices, size_t limit_per_device, std::string kind)
    : limit_(limit_per_device), kind_(std::move(kind)), used_(devices, 0),
      checked_(kind_ == "device" && foo::sim::checked::arena_active()) {}

SimMemory::~SimMemory() {
  for (auto& [p, b] : blocks_) release_memory(const_cast<char*>(p));
}

void SimMemory::release_memory(void* p) const {
  if (checked_) {
    foo::sim::checked::arena_release(p);
  } else {
    std::free(p);
  }
}

void* SimMemory::allocate(int device, size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  std::lock_guard<std::mutex> lk(mu_);
  auto oom = [&](const char* why) {
    return DriverError(
        "foo sim: out of memory on " + where(device) + ": tried to allocate " +
        std::to_string(bytes) + " bytes; " + std::to_string(used_[device]) + " of " + std::to_string(limit_) +
        " bytes in use (" + why + ")");
  };
  if (rounded > limit_ || used_[device] > limit_ - rounded)
    throw oom("per-device limit, set with TORCH_FOO_SIM_MEMORY_MB");
  // Checked mode (sim/checked.h): from the arena, with redzones, exact size.
  void* p = checked_ ? foo::sim::checked::arena_allocate(bytes) : std::aligned_alloc(kAlign, rounded);
  if (!p) throw oom(checked_ ? "the checked mode's arena is exhausted" : "host allocation failed");
  blocks_.emplace(static_cast<const char*>(p), Block{device, bytes, rounded});
  used_[device] += rounded;
  return p;
}

void SimMemory::release(int device, void* ptr) {
  if (!ptr) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = blocks_.find(static_cast<const char*>(ptr));
    if (it == blocks_.end())
      throw DriverError("foo sim: free of a pointer that is not the start of a "
                        "sim " + kind_ + " allocation");
    if (it->second.device != device)
      throw DriverError("foo sim: free on device " + std::to_string(device) +
                        " of memory allocated on device " +
                        std::to_string(it->second.device));
    used_[device] -= it->second.rounded;
    blocks_.erase(it);
  }
  release_memory(ptr);
}

std::map<const char*, SimMemory::Block>::const_iterator SimMemory::find(
    const void* p) const {
  const char* c = static_cast<const char*>(p);
  auto it = blocks_.upper_bound(c);  // first block starting after p
  if (it == blocks_.begin()) return blocks_.end();
  --it;
  return c < it->first + it->second.bytes ? it : blocks_.end();
}

int SimMemory::device_of(const void* p) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = find(p);
  return it == blocks_.end() ? -1 : it->second.device;
}

void SimMemory::check_device_range(const void* p, size_t bytes,
                                   const char* what) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = find(p);
  const char* c = static_cast<const char*>(p);
  if (it == blocks_.end())
    throw DriverError(std::string("foo sim: ") + what +
                      " is not device memory");
  if (bytes > static_cast<size_t>(it->first + it->second.bytes - c))
    throw DriverError(std::string("foo sim: ") + what + " range of " +
                      std::to_string(bytes) +
                      " bytes runs past the end of its device allocation");
}

void SimMemory::check_host_range(const void* p, size_t bytes,
                                 const char* what) const {
  std::lock_guard<std::mutex> lk(mu_);
  const char* c = static_cast<const char*>(p);
  auto it = blocks_.lower_bound(c);  // a block starting inside the range?
  bool overlaps = find(p) != blocks_.end() ||
                  (it != blocks_.end() && it->first < c + bytes);
  if (overlaps)
    throw DriverError(std::string("foo sim: ") + what +
                      " is device memory, but the copy kind expects host "
                      "memory");
}

std::string SimMemory::where(int device) const {
  return kind_ == "device" ? "device " + std::to_string(device) : kind_;
}

size_t SimMemory::used(int device) const {
  std::lock_guard<std::mutex> lk(mu_);
  return used_[device];
}

}  // namespace foo::runtime::sim
