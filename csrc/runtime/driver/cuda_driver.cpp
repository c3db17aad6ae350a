// The cuda driver: the Driver interface over the CUDA runtime API. Built only
// with FOO_WITH_CUDA, so CMake can always list this file. Plain C++ (no
// kernels): the host compiler builds it against <cuda_runtime.h>.
#ifdef FOO_WITH_CUDA

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver.h"

namespace foo::runtime {
namespace {

void check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls aren't blamed
  throw DriverError(std::string("foo cuda: ") + call + ": " +
                    cudaGetErrorString(err));
}
#define FOO_CUDA_CHECK(expr) check((expr), #expr)

// Makes `device` current for one call and restores the caller's device, so
// driver calls never change the device the torch layer thinks is current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    FOO_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device) {
      FOO_CUDA_CHECK(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
  bool changed_ = false;
};

cudaStream_t S(StreamHandle h) { return static_cast<cudaStream_t>(h); }
cudaEvent_t E(EventHandle h) { return static_cast<cudaEvent_t>(h); }

class CudaDriver final : public Driver {
 public:
  CudaDriver() : defaults_(count()), props_(defaults_.size()) {}
  // Leaked as the singleton; destroying a CUDA driver at exit would race the
  // CUDA runtime's own teardown, so nothing is released here.
  ~CudaDriver() override = default;

  const char* name() const override { return "cuda"; }
  int device_count() const noexcept override { return count(); }

  void set_device(int device) override {
    FOO_CUDA_CHECK(cudaSetDevice(device));
  }

  void* malloc(int device, size_t bytes) override {
    if (bytes == 0) return nullptr;
    DeviceGuard g(device);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw DriverError("foo cuda: out of memory on device " +
                        std::to_string(device) + ": tried to allocate " +
                        std::to_string(bytes) + " bytes; " +
                        std::to_string(free_b) + " of " +
                        std::to_string(total_b) + " bytes free");
    }
    check(err, "cudaMalloc");
    return p;
  }

  void free(int device, void* ptr) override {
    if (!ptr) return;
    DeviceGuard g(device);
    FOO_CUDA_CHECK(cudaFree(ptr));
  }

  int device_of(const void* ptr) const override {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    return a.type == cudaMemoryTypeDevice ? a.device : -1;
  }

  size_t total_memory(int device) override {
    return properties(device).total_memory;
  }

  std::pair<size_t, size_t> mem_get_info(int device) override {
    check_index(device);
    DeviceGuard g(device);
    size_t free_b = 0, total_b = 0;
    FOO_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return {free_b, total_b};
  }

  // Portable: pinned for every device of the process, not only the current.
  void* malloc_host(size_t bytes) override {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw DriverError("foo cuda: out of memory: cudaHostAlloc of " +
                        std::to_string(bytes) + " bytes of pinned memory");
    }
    check(err, "cudaHostAlloc");
    return p;
  }

  void free_host(void* ptr) override {
    if (ptr) FOO_CUDA_CHECK(cudaFreeHost(ptr));
  }

  bool is_pinned(const void* ptr) const override {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  }

  // A blocking stream per device (created lazily) rather than the legacy
  // stream 0: a handle must name its device, and 0 means "current device".
  StreamHandle default_stream(int device) override {
    check_index(device);
    std::lock_guard<std::mutex> lk(mu_);
    if (!defaults_[device]) {
      DeviceGuard g(device);
      cudaStream_t s;
      FOO_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
      defaults_[device] = s;
      stream_device_[s] = device;
    }
    return defaults_[device];
  }

  StreamHandle create_stream(int device, int priority) override {
    DeviceGuard g(device);
    cudaStream_t s;
    // CUDA clamps priority into the device's range (lower = higher priority).
    FOO_CUDA_CHECK(
        cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    std::lock_guard<std::mutex> lk(mu_);
    stream_device_[s] = device;
    return s;
  }

  void destroy_stream(StreamHandle h) override {
    int d = stream_device(h);
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (defaults_[d] == S(h))
        throw DriverError("foo cuda: the default stream cannot be destroyed");
      stream_device_.erase(h);
      host_errors_.erase(h);
    }
    DeviceGuard g(d);
    FOO_CUDA_CHECK(cudaStreamDestroy(S(h)));
  }

  int stream_device(StreamHandle h) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = stream_device_.find(h);
    if (it == stream_device_.end())
      throw DriverError("foo cuda: invalid or destroyed stream handle");
    return it->second;
  }

  void adopt_stream(StreamHandle h, int device) override {
    check_index(device);
    if (!h) throw DriverError("foo cuda: null stream handle");
#if CUDART_VERSION >= 12080
    int owner = -1;
    FOO_CUDA_CHECK(cudaStreamGetDevice(S(h), &owner));
    if (owner != device)
      throw DriverError("foo cuda: stream of device " + std::to_string(owner) +
                        " adopted as a stream of device " +
                        std::to_string(device));
#endif
    std::lock_guard<std::mutex> lk(mu_);
    stream_device_.emplace(h, device);  // kept if already known (ours)
  }

  bool query_stream(StreamHandle h) override {
    DeviceGuard g(stream_device(h));
    throw_host_error(h);
    cudaError_t err = cudaStreamQuery(S(h));
    if (err == cudaErrorNotReady) return false;
    check(err, "cudaStreamQuery");
    return true;
  }

  void synchronize_stream(StreamHandle h) override {
    DeviceGuard g(stream_device(h));
    FOO_CUDA_CHECK(cudaStreamSynchronize(S(h)));
    throw_host_error(h);
  }

  void synchronize_device(int device) override {
    DeviceGuard g(device);
    FOO_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<StreamHandle> mine;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (auto& [s, d] : stream_device_)
        if (d == device) mine.push_back(s);
    }
    for (StreamHandle s : mine) throw_host_error(s);
  }

  void memcpy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                    StreamHandle h) override {
    if (bytes == 0) return;
    cudaMemcpyKind k = kind == CopyKind::HostToDevice ? cudaMemcpyHostToDevice
                       : kind == CopyKind::DeviceToHost
                           ? cudaMemcpyDeviceToHost
                           : cudaMemcpyDeviceToDevice;
    DeviceGuard g(stream_device(h));
    FOO_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, k, S(h)));
  }

  void memset_async(void* dst, int value, size_t bytes,
                    StreamHandle h) override {
    if (bytes == 0) return;
    DeviceGuard g(stream_device(h));
    FOO_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, S(h)));
  }

  EventHandle create_event(int device, bool enable_timing) override {
    DeviceGuard g(device);
    cudaEvent_t e;
    FOO_CUDA_CHECK(cudaEventCreateWithFlags(
        &e, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
    std::lock_guard<std::mutex> lk(mu_);
    event_device_[e] = device;
    return e;
  }

  void destroy_event(EventHandle h) override {
    DeviceGuard g(event_device(h));
    {
      std::lock_guard<std::mutex> lk(mu_);
      event_device_.erase(h);
    }
    FOO_CUDA_CHECK(cudaEventDestroy(E(h)));
  }

  void record_event(EventHandle e, StreamHandle s) override {
    DeviceGuard g(stream_device(s));
    FOO_CUDA_CHECK(cudaEventRecord(E(e), S(s)));
  }

  void stream_wait_event(StreamHandle s, EventHandle e) override {
    DeviceGuard g(stream_device(s));
    FOO_CUDA_CHECK(cudaStreamWaitEvent(S(s), E(e), 0));
  }

  bool query_event(EventHandle e) override {
    DeviceGuard g(event_device(e));
    cudaError_t err = cudaEventQuery(E(e));
    if (err == cudaErrorNotReady) return false;
    check(err, "cudaEventQuery");
    return true;
  }

  void synchronize_event(EventHandle e) override {
    DeviceGuard g(event_device(e));
    FOO_CUDA_CHECK(cudaEventSynchronize(E(e)));
  }

  double elapsed_ms(EventHandle start, EventHandle end) override {
    DeviceGuard g(event_device(start));
    float ms = 0;
    FOO_CUDA_CHECK(cudaEventElapsedTime(&ms, E(start), E(end)));
    return ms;
  }

  // Not the cuda launch path (kernels launch with <<<>>> directly): the pair
  // fits a std::function's inline storage.
  void enqueue_host_fn(StreamHandle h, HostFn fn, void* arg) override {
    try {
      enqueue_host_task(h, [fn, arg] { fn(arg, true); });
    } catch (...) {
      fn(arg, false);
      throw;
    }
  }

  // Not the cuda launch path either; a host task cannot be captured here (it frees itself after
  // one run), so both refuse a capturing stream.
  void enqueue_replayable(StreamHandle h, HostFn fn, void* arg) override {
    try {
      enqueue_host_task(h, [fn, arg] {
        struct Release {
          HostFn fn;
          void* arg;
          ~Release() { fn(arg, false); }
        } const release{fn, arg};
        fn(arg, true);
      });
    } catch (...) {
      fn(arg, false);
      throw;
    }
  }

  void enqueue_host_task(StreamHandle h, std::function<void()> fn) override {
    DeviceGuard g(stream_device(h));
    if (is_capturing(h))
      throw DriverError("foo cuda: operation not permitted when stream is capturing: a host task (foo's cuda "
                        "driver does not capture host tasks)");
    auto* task = new HostTask{this, h, std::move(fn)};
    cudaError_t err = cudaLaunchHostFunc(S(h), &run_host_task, task);
    if (err != cudaSuccess) delete task;
    check(err, "cudaLaunchHostFunc");
  }

  // Stream capture: CUDA records the kernels launched with <<<>>> on the stream, copies and
  // memsets; the graph is instantiated once and launched per replay.
  void begin_capture(StreamHandle h, CaptureMode mode) override {
    DeviceGuard g(stream_device(h));
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (defaults_[stream_device_.at(h)] == S(h))
        throw DriverError("foo cuda: graphs must be captured on a non-default stream");
    }
    const cudaStreamCaptureMode m = mode == CaptureMode::Global        ? cudaStreamCaptureModeGlobal
                                    : mode == CaptureMode::ThreadLocal ? cudaStreamCaptureModeThreadLocal
                                                                       : cudaStreamCaptureModeRelaxed;
    FOO_CUDA_CHECK(cudaStreamBeginCapture(S(h), m));
  }

  GraphHandle end_capture(StreamHandle h) override {
    DeviceGuard g(stream_device(h));
    cudaGraph_t graph = nullptr;
    FOO_CUDA_CHECK(cudaStreamEndCapture(S(h), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t err = cudaGraphInstantiateWithFlags(&exec, graph, 0);
    size_t nodes = 0;
    if (err == cudaSuccess) cudaGraphGetNodes(graph, nullptr, &nodes);
    cudaGraphDestroy(graph);  // the executable graph keeps what it needs
    check(err, "cudaGraphInstantiateWithFlags");
    std::lock_guard<std::mutex> lk(mu_);
    graph_nodes_[exec] = nodes;
    return exec;
  }

  bool is_capturing(StreamHandle h) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    FOO_CUDA_CHECK(cudaStreamIsCapturing(S(h), &status));
    return status != cudaStreamCaptureStatusNone;
  }

  void launch_graph(GraphHandle graph, StreamHandle h) override {
    DeviceGuard g(stream_device(h));
    FOO_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), S(h)));
  }

  void destroy_graph(GraphHandle graph) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      graph_nodes_.erase(graph);
    }
    FOO_CUDA_CHECK(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)));
  }

  size_t graph_size(GraphHandle graph) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = graph_nodes_.find(graph);
    if (it == graph_nodes_.end()) throw DriverError("foo cuda: invalid or destroyed graph handle");
    return it->second;
  }

  DeviceProperties properties(int device) override {
    check_index(device);
    std::lock_guard<std::mutex> lk(mu_);  // cached: the query is slow
    if (!props_[device]) {
      cudaDeviceProp p{};
      FOO_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
      DeviceProperties d;
      d.name = p.name;
      d.uuid = format_uuid(p.uuid);
      d.total_memory = p.totalGlobalMem;
      d.multi_processor_count = p.multiProcessorCount;
      d.major = p.major;
      d.minor = p.minor;
      d.max_threads_per_block = p.maxThreadsPerBlock;
      d.max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
      d.max_shared_memory_per_block = static_cast<int>(p.sharedMemPerBlock);
      d.shared_memory_per_block_optin =
          static_cast<int>(p.sharedMemPerBlockOptin);
      d.shared_memory_per_multiprocessor =
          static_cast<int>(p.sharedMemPerMultiprocessor);
      d.regs_per_multiprocessor = p.regsPerMultiprocessor;
      d.warp_size = p.warpSize;
      d.l2_cache_size = p.l2CacheSize;
      d.is_integrated = p.integrated != 0;
      d.is_multi_gpu_board = p.isMultiGpuBoard != 0;
      props_[device] = d;
    }
    return *props_[device];
  }

 private:
  // A host task's exception cannot cross the CUDA callback; it is kept per
  // stream, later host tasks of the stream are skipped (as on sim), and the
  // next query/synchronize of the stream throws it.
  struct HostTask {
    CudaDriver* self;
    StreamHandle stream;
    std::function<void()> fn;
  };
  static void CUDART_CB run_host_task(void* p) {
    std::unique_ptr<HostTask> t(static_cast<HostTask*>(p));
    {
      std::lock_guard<std::mutex> lk(t->self->mu_);
      if (t->self->host_errors_.count(t->stream)) return;
    }
    std::string err;
    try {
      t->fn();
      return;
    } catch (const std::exception& e) {
      err = e.what();
    } catch (...) {
      err = "unknown exception";
    }
    std::lock_guard<std::mutex> lk(t->self->mu_);
    t->self->host_errors_.emplace(
        t->stream, "foo cuda: asynchronous error in a host task: " + err);
  }

  void throw_host_error(StreamHandle h) {
    std::string msg;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = host_errors_.find(h);
      if (it == host_errors_.end()) return;
      msg = std::move(it->second);
      host_errors_.erase(it);
    }
    throw DriverError(msg);
  }

  // As nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
  static std::string format_uuid(const cudaUUID_t& u) {
    static const char* hex = "0123456789abcdef";
    std::string s = "GPU-";
    for (int i = 0; i < 16; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
      const auto b = static_cast<unsigned char>(u.bytes[i]);
      s += hex[b >> 4];
      s += hex[b & 15];
    }
    return s;
  }

  static int count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }

  void check_index(int device) const {
    if (device < 0 || device >= static_cast<int>(defaults_.size()))
      throw DriverError("foo cuda: invalid device index " +
                        std::to_string(device) + " (" +
                        std::to_string(defaults_.size()) + " devices)");
  }

  int event_device(EventHandle h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = event_device_.find(h);
    if (it == event_device_.end())
      throw DriverError("foo cuda: invalid or destroyed event handle");
    return it->second;
  }

  std::mutex mu_;
  std::vector<cudaStream_t> defaults_;
  std::vector<std::optional<DeviceProperties>> props_;
  std::unordered_map<void*, int> stream_device_;
  std::unordered_map<void*, int> event_device_;
  std::unordered_map<void*, std::string> host_errors_;
  std::unordered_map<void*, size_t> graph_nodes_;  // per executable graph: its node count
};

}  // namespace

int cuda_probe_device_count(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
    return 0;
  }
  if (n < 1 && why) *why = "cudaGetDeviceCount reports no devices";
  return n;
}

std::unique_ptr<Driver> make_cuda_driver() {
  return std::make_unique<CudaDriver>();
}

}  // namespace foo::runtime

#endif  // FOO_WITH_CUDA
