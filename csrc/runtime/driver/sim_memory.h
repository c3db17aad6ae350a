// Device memory of the sim driver: host memory the driver owns (never torch's
// CPU memory), tracked per allocation so device_of, free and copies can tell a
// device pointer from a host one and catch out-of-range or foreign pointers.
// The sim driver's pinned host memory is a second instance with one "device"
// (kind "pinned host memory"): the same bookkeeping answers is_pinned.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace foo::runtime::sim {

class SimMemory {
 public:
  // `kind` names the memory in errors ("device", "pinned host memory").
  SimMemory(int devices, size_t limit_per_device, std::string kind = "device");
  ~SimMemory();  // frees whatever is still allocated
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  void* allocate(int device, size_t bytes);  // throws "out of memory"
  void release(int device, void* ptr);       // throws on unknown pointer
  // Device owning the allocation containing p (interior pointers too), or -1.
  int device_of(const void* p) const;
  // Throws unless [p, p+bytes) lies inside one device allocation.
  void check_device_range(const void* p, size_t bytes, const char* what) const;
  // Throws if [p, p+bytes) overlaps device memory (a host pointer was expected).
  void check_host_range(const void* p, size_t bytes, const char* what) const;
  size_t limit() const { return limit_; }
  size_t used(int device) const;

 private:
  // bytes as requested (range checks are exact); rounded counts to the limit.
  struct Block { int device; size_t bytes; size_t rounded; };
  // Allocation containing p, or end(). Caller holds mu_.
  std::map<const char*, Block>::const_iterator find(const void* p) const;
  std::string where(int device) const;  // "device 1", "pinned host memory"
  void release_memory(void* p) const;   // back to the host (or the checked mode's arena)

  const size_t limit_;
  const std::string kind_;
  mutable std::mutex mu_;
  std::map<const char*, Block> blocks_;  // ordered: interior-pointer lookup
  std::vector<size_t> used_;
  const bool checked_;  // device memory from the checked mode's arena (sim/checked.h)
};

}  // namespace foo::runtime::sim
