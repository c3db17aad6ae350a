// The device driver interface of torch_foo: everything the torch integration
// needs from a device (memory, streams, events, copies, host tasks), with two
// implementations, `sim` (host threads) and `cuda` (CUDA runtime).
// Deliberately free of torch headers so kernels, the emulator and tests can use
// it without ATen, and so nvcc never sees torch.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace foo::runtime {

// Opaque so callers cannot depend on the backend's types. On cuda a
// StreamHandle is the cudaStream_t and an EventHandle the cudaEvent_t, so the
// kernel launch API may cast them; on sim they point to driver objects.
using StreamHandle = void*;
using EventHandle = void*;
// An executable graph (end_capture's result): cudaGraphExec_t on cuda, a recorded task list on sim.
using GraphHandle = void*;

// As cudaStreamCaptureMode. cuda passes it to cudaStreamBeginCapture; sim applies the same
// per-stream rules in every mode (what is forbidden on a capturing stream:
// docs/torch-foo-vs-cuda.md §15).
enum class CaptureMode { Global = 0, ThreadLocal = 1, Relaxed = 2 };

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

// A host task as a function pointer and its argument (see enqueue_host_fn).
using HostFn = void (*)(void* arg, bool run);

// What torch.cuda.get_device_properties reports, under the same names.
struct DeviceProperties {
  std::string name;
  std::string uuid;
  size_t total_memory = 0;
  int multi_processor_count = 0;
  int major = 0;
  int minor = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multi_processor = 0;
  int max_shared_memory_per_block = 0;       // without opt-in
  int shared_memory_per_block_optin = 0;     // the most a kernel may opt in to
  int shared_memory_per_multiprocessor = 0;
  int regs_per_multiprocessor = 0;
  int warp_size = 0;
  int l2_cache_size = 0;
  bool is_integrated = false;
  bool is_multi_gpu_board = false;
};

// Every driver failure, synchronous or surfaced later from async work.
class DriverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// All methods are thread-safe. Errors throw DriverError.
class Driver {
 public:
  virtual ~Driver() = default;

  virtual const char* name() const = 0;  // "sim" | "cuda"
  virtual int device_count() const noexcept = 0;
  virtual void set_device(int device) = 0;  // sim: validates only

  // Memory. malloc(d, 0) may return nullptr; failure to allocate throws a
  // DriverError whose message contains "out of memory".
  virtual void* malloc(int device, size_t bytes) = 0;
  virtual void free(int device, void* ptr) = 0;  // nullptr: no-op
  virtual int device_of(const void* ptr) const = 0;  // -1: not device memory
  virtual size_t total_memory(int device) = 0;
  // (free, total) bytes of the device, as cudaMemGetInfo.
  virtual std::pair<size_t, size_t> mem_get_info(int device) = 0;

  // Pinned host memory, as cudaHostAlloc: host memory the driver knows, which
  // copies may read or write while the stream runs (see memcpy_async). Usable
  // with every device. malloc_host(0) may return nullptr; failure throws a
  // DriverError containing "out of memory". free_host waits for the device as
  // cudaFreeHost does, so no queued copy can still use the memory.
  virtual void* malloc_host(size_t bytes) = 0;
  virtual void free_host(void* ptr) = 0;  // nullptr: no-op
  virtual bool is_pinned(const void* ptr) const = 0;  // interior pointers too

  // Streams run their work in order, asynchronously to the host.
  virtual StreamHandle default_stream(int device) = 0;
  virtual StreamHandle create_stream(int device, int priority) = 0;
  virtual void destroy_stream(StreamHandle stream) = 0;
  virtual int stream_device(StreamHandle stream) = 0;  // the device it runs on
  // Lets a stream made elsewhere (torch.foo.ExternalStream: another library's
  // cudaStream_t on cuda) be used with this driver; not owned, never destroyed.
  // Throws unless it is a stream of `device`. sim: only its own streams exist.
  virtual void adopt_stream(StreamHandle stream, int device) = 0;
  // query/synchronize rethrow an error raised by earlier async work.
  virtual bool query_stream(StreamHandle stream) = 0;  // true: all work done
  virtual void synchronize_stream(StreamHandle stream) = 0;
  virtual void synchronize_device(int device) = 0;  // all of its streams

  // As cudaMemcpyAsync. HostToDevice from pageable memory has read `src` when
  // it returns (staged); from pinned memory (malloc_host) it reads `src` when
  // the stream reaches the copy, so the caller keeps `src` alive and unchanged
  // until then (an event). DeviceToHost writes `dst` when the stream reaches
  // the copy (synchronize before reading it). DeviceToDevice works across
  // devices.
  virtual void memcpy_async(void* dst, const void* src, size_t bytes,
                            CopyKind kind, StreamHandle stream) = 0;
  virtual void memset_async(void* dst, int value, size_t bytes,
                            StreamHandle stream) = 0;

  // Events, CUDA semantics: waits/queries target the latest record at the
  // time of the call; waiting on a never-recorded event is a no-op.
  virtual EventHandle create_event(int device, bool enable_timing) = 0;
  virtual void destroy_event(EventHandle event) = 0;
  virtual void record_event(EventHandle event, StreamHandle stream) = 0;
  virtual void stream_wait_event(StreamHandle stream, EventHandle event) = 0;
  virtual bool query_event(EventHandle event) = 0;
  virtual void synchronize_event(EventHandle event) = 0;
  // Both recorded, completed and created with timing, else DriverError.
  virtual double elapsed_ms(EventHandle start, EventHandle end) = 0;

  // Runs `fn` on the host when the stream reaches it. sim: on the stream's
  // worker thread (how sim kernels run); an exception becomes the stream's
  // async error. cuda: cudaLaunchHostFunc, so `fn` must not call CUDA.
  virtual void enqueue_host_task(StreamHandle stream,
                                 std::function<void()> fn) = 0;
  // The same without a std::function, for the kernel launch path: queues a
  // fixed-size record, no allocation per call on sim. fn(arg, true) runs the
  // task; fn(arg, false) only releases what `arg` owns, and is what the stream
  // calls for a task it skips (sim: after an async error) and what this call
  // does before it throws, so `arg` is released exactly once in every case.
  virtual void enqueue_host_fn(StreamHandle stream, HostFn fn, void* arg) = 0;
  // A task a graph may replay (the sim kernel launch path): fn(arg, true) runs it and keeps what
  // `arg` owns, fn(arg, false) releases it. Outside a capture: one run, then the release (only the
  // release when the stream skips it). Captured: every replay runs it, and the graph releases it
  // when destroyed. cuda: a host task, refused during capture.
  virtual void enqueue_replayable(StreamHandle stream, HostFn fn, void* arg) = 0;

  // Graph capture, as cudaStreamBeginCapture / cudaStreamEndCapture + cudaGraphInstantiate /
  // cudaGraphLaunch. While `stream` captures, its work is recorded, not run; streams that wait on
  // an event recorded on it join the capture until the origin waits on them again. Forbidden on
  // a capturing stream (DriverError containing "operation not permitted when stream is
  // capturing", and the capture is invalidated): synchronizing it, its device or an event recorded
  // in the capture, querying them, a copy to pageable host memory, a host task that cannot be
  // replayed. (sim records a copy from pageable memory with the bytes it staged; CUDA refuses it.)
  // end_capture returns the executable graph (throws, and ends the capture, if it was
  // invalidated); launch_graph queues one replay on `stream` in its order; destroy_graph frees it
  // once queued replays finished.
  virtual void begin_capture(StreamHandle stream, CaptureMode mode) = 0;
  virtual GraphHandle end_capture(StreamHandle stream) = 0;
  virtual bool is_capturing(StreamHandle stream) = 0;
  virtual void launch_graph(GraphHandle graph, StreamHandle stream) = 0;
  virtual void destroy_graph(GraphHandle graph) = 0;
  // How many tasks (kernels, copies, memsets, host tasks) the graph holds; cuda: its nodes.
  virtual size_t graph_size(GraphHandle graph) = 0;

  virtual DeviceProperties properties(int device) = 0;
};

// The process-wide driver, chosen on first call from TORCH_FOO_DRIVER
// (auto | sim | cuda). Never destroyed: see docs/runtime-driver.md.
Driver& driver();
bool driver_selected();   // has driver() succeeded yet
bool built_with_cuda();   // compiled with FOO_WITH_CUDA

// Factories for tests and for driver(); each call makes a new instance.
// make_driver: "auto" | "sim" | "cuda" ("" = auto), throws on other values.
std::unique_ptr<Driver> make_driver(const std::string& choice);
std::unique_ptr<Driver> make_sim_driver();  // reads TORCH_FOO_SIM_* env
#ifdef FOO_WITH_CUDA
// Number of usable GPUs; on failure 0 and the reason in *why.
int cuda_probe_device_count(std::string* why);
std::unique_ptr<Driver> make_cuda_driver();
#endif

}  // namespace foo::runtime
