#pragma once
// torch.histc (histc.cu): counts of `n` contiguous elements of `dtype` in `bins` equal bins over
// [lo, hi], each element's bin computed as CUDA's and the CPU's histc kernels compute it.
#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

// range: null for a range the host knows (lo < hi, finite); else the device address of the
// data's [min, max] as two elements of `dtype` (aminmax), which the kernel reads and widens by 1
// on each side when they are equal, as histc does, without the host ever reading them.
// counts: `bins` int64 on the device, zeroed. nonfinite: one int64 on the device, set to 1 when
// the data's range is not finite (only possible with `range`; histc raises on the CPU).
FOO_DECLARE_KERNEL(void, histc, (Stream stream, DType dtype, const void* x, int64_t n, int64_t bins, double lo, double hi,
                                 const void* range, int64_t* counts, int64_t* nonfinite))
