#pragma once
// The kernel-side helper of device_error.h, for both targets.
#include <cstdint>

#include "kernels/core/device_error.h"
#include "kernels/core/kernel.h"

namespace foo::kernels {

// Records (kind, value, dim, size) unless the device already holds an error (first error wins).
// The fields are written before the state turns complete, so the host never reads half of one.
__device__ __forceinline__ void report_device_error(const DeviceErrorSite& site, DeviceErrorKind kind,
                                                    int64_t value, int64_t dim, int64_t size) {
  unsigned long long* w = site.word;
  if (atomicCAS(w, 0ull, 1ull) != 0ull) return;
  w[1] = static_cast<unsigned long long>(site.op);
  w[2] = static_cast<unsigned long long>(static_cast<int32_t>(kind));
  w[3] = static_cast<unsigned long long>(value);
  w[4] = static_cast<unsigned long long>(site.dim >= 0 ? site.dim : dim);
  w[5] = static_cast<unsigned long long>(size);
  __threadfence();
  atomicExch(w, 2ull);
}

}  // namespace foo::kernels
