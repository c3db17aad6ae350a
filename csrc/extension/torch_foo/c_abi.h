/* torch_foo/c_abi.h — torch_foo's C ABI for extensions that must not depend on torch's C++ ABI
 * (the limited_api / stable-ABI route, docs/extensions.md "Stable ABI and Limited API").
 *
 * Plain C, versioned: TORCH_FOO_C_ABI_VERSION only grows; a function, once here, keeps its
 * signature and meaning. An extension checks torch_foo_c_abi_version() >= the version it was
 * written for. Every function returns 0 on success, nonzero on failure, with the message in
 * torch_foo_last_error() (per thread); none throws across the boundary. */
#ifndef TORCH_FOO_C_ABI_H
#define TORCH_FOO_C_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TORCH_FOO_C_ABI_VERSION 1

/* The C ABI version libtorch_foo implements. */
uint32_t torch_foo_c_abi_version(void);

/* The message of the calling thread's last failed call ("" when none). */
const char* torch_foo_last_error(void);

/* 1 when the cuda driver backs the foo device (kernels must run their cuda build), else 0. */
int32_t torch_foo_on_cuda(void);

/* The driver stream (cudaStream_t on cuda) of foo stream `stream_id` of `device`, as
 * torch::stable::accelerator::getCurrentStream(device).id() names it. */
int32_t torch_foo_native_stream(int32_t device, int64_t stream_id, void** stream);

/* The driver stream of the calling thread's current stream on `device`. */
int32_t torch_foo_current_stream(int32_t device, void** stream);

/* Device memory from the foo caching allocator (counted in torch.foo.memory_allocated), e.g. a
 * kernel's workspace. torch_foo_free: only pointers torch_foo_malloc returned; null is a no-op. */
int32_t torch_foo_malloc(int32_t device, size_t bytes, void** ptr);
int32_t torch_foo_free(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* TORCH_FOO_C_ABI_H */
