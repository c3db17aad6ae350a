#pragma once
// Device bookkeeping shared by the guard, hooks and Python module: lazy driver start-up, the
// device count and each thread's current device.
#include <c10/core/Device.h>

namespace foo::runtime {

// Number of foo devices; 0 when the driver cannot start (never throws: torch asks this in
// noexcept contexts, e.g. while printing a device).
c10::DeviceIndex device_count() noexcept;

// Selects the driver on first use (TORCH_FOO_DRIVER) and throws its error if it cannot start.
void lazy_init();
bool is_initialized() noexcept;

// The calling thread's current device (0 until set), as torch.cuda.current_device().
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);

// Throws a clear error unless 0 <= index < device_count().
void check_device_index(c10::DeviceIndex index);

}  // namespace foo::runtime
