#pragma once
// Device-side errors, the host half (kernels/core/device_error.h is the record and the kernel side).
//
// Each device has one error word in device memory, allocated on first use. An op whose kernels
// check their input asks for a site (the word, the op's name, what kind of error) and launches
// without waiting. The host reads the word at points that wait for the device anyway and, when a
// kernel recorded an error, clears the word and raises the CPU's exception (IndexError,
// RuntimeError) with the CPU's message, naming the op. Unlike CUDA's device asserts the device
// stays usable. Reading costs a small device-to-host copy, and only while the device is "armed":
// some site was handed out since the last clean read that covered it, so programs that never
// launch a checking kernel never read the word.
//
// Under TORCH_FOO_LAUNCH_BLOCKING=1 every launch waits (kernels/core/launch_blocking.h) and the op
// checks the word right after its launch (raise_device_error_if_blocking), as CUDA_LAUNCH_BLOCKING
// makes a device assert fail at the op.
#include <c10/core/Device.h>

#include "kernels/core/device_error.h"
#include "runtime/driver/driver.h"

namespace foo::runtime {

// The site for a kernel launched on `stream` of `device` by the op `op` (a string with static
// storage: a literal; numbered once). `dim` >= 0 is reported as the error's dimension instead of
// the kernel's own (gather/scatter's dim). Arms the device.
foo::kernels::DeviceErrorSite device_error_site(c10::DeviceIndex device, StreamHandle stream, const char* op,
                                                foo::kernels::DeviceErrorKind kind, int64_t dim = -1);

// After an op's launches with a site: under TORCH_FOO_LAUNCH_BLOCKING reads the word now and
// raises at the op. Otherwise nothing (one relaxed load).
void raise_device_error_if_blocking(c10::DeviceIndex device);

// Called right after the host waited for `stream` (a stream synchronize, a blocking copy, a scalar
// read), for the whole device (synchronize_device), or for something on any device (an event):
// raises the device's recorded error, if any, and clears it.
void raise_device_error_after_wait(c10::DeviceIndex device, StreamHandle stream);
void raise_device_error_after_device_wait(c10::DeviceIndex device);
void raise_device_errors_after_event_wait();

// True when the launch API waits after every launch (TORCH_FOO_LAUNCH_BLOCKING=1).
bool launch_blocking();

}  // namespace foo::runtime
