#pragma once
// torch.foo.FooGraph's C++ half, as torch.cuda.CUDAGraph: capture the work queued on the current
// stream into a driver graph (runtime/driver/driver.h, begin_capture/end_capture), with every
// allocation on the capturing stream taken from a private pool of the caching allocator that the
// graph keeps, and replay it on the current stream. docs/torch-foo-vs-cuda.md §15.
#include <cstdint>
#include <optional>

#include <c10/core/Device.h>

#include "runtime/driver/driver.h"

namespace foo::runtime {

class Graph {
 public:
  Graph() = default;
  ~Graph();  // reset()
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Begins capturing the current stream of the current device, which must not be the default
  // stream. `pool`: a pool id to share (graph_pool_handle(), another graph's pool()); none: a new
  // private pool.
  void capture_begin(std::optional<uint64_t> pool, CaptureMode mode);
  // Ends the capture and makes the executable graph; on an invalidated capture the graph is left
  // empty (reset) and the driver's error raised.
  void capture_end();
  // Queues one replay on the current stream of the graph's device.
  void replay();
  // Drops the executable graph and the graph's use of its pool; a capture underway is abandoned.
  void reset();
  // The pool id (0 before capture_begin).
  uint64_t pool() const { return pool_; }
  bool capturing() const { return capturing_; }
  // Tasks the graph holds (kernels, copies, memsets); 0 before capture_end.
  size_t size() const;

 private:
  c10::DeviceIndex device_ = -1;
  StreamHandle stream_ = nullptr;  // the capturing stream
  GraphHandle exec_ = nullptr;
  uint64_t pool_ = 0;
  bool capturing_ = false;
};

// Whether the current stream of `device` is capturing a graph (one relaxed load when no capture
// is underway anywhere in the process).
bool current_stream_capturing(c10::DeviceIndex device);

}  // namespace foo::runtime
