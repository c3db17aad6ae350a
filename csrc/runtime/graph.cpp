#include "runtime/graph.h"

#include <c10/util/Exception.h>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/device_error.h"
#include "runtime/stream.h"
#include "runtime/sync_debug.h"

namespace foo::runtime {

Graph::~Graph() {
  try {
    reset();
  } catch (...) {  // a destructor never throws; reset only fails when the driver does
  }
}

void Graph::capture_begin(std::optional<uint64_t> pool, CaptureMode mode) {
  TORCH_CHECK(!capturing_, "FooGraph.capture_begin: the graph is already capturing");
  TORCH_CHECK(exec_ == nullptr, "FooGraph.capture_begin: the graph holds a capture already; call reset() first");
  const c10::DeviceIndex device = current_device();
  const StreamHandle stream = current_native_stream(device);
  TORCH_CHECK(stream != native_stream(default_stream(device)),
              "FooGraph.capture_begin: graphs must be captured on a non-default stream (with "
              "torch.foo.stream(torch.foo.Stream()): ...); replaying them on the default stream is fine");
  uint64_t id = 0;
  if (pool) {
    retain_pool(*pool);
    id = *pool;
  } else {
    id = create_pool();
  }
  try {
    begin_capture_to_pool(device, stream, id);
    try {
      driver().begin_capture(stream, mode);
    } catch (...) {
      end_capture_to_pool(device, stream);
      throw;
    }
  } catch (const DriverError& e) {
    release_pool(id);
    TORCH_CHECK(false, "FooGraph.capture_begin: ", e.what());
  } catch (...) {
    release_pool(id);
    throw;
  }
  device_ = device;
  stream_ = stream;
  pool_ = id;
  capturing_ = true;
  detail::captures_underway.fetch_add(1, std::memory_order_relaxed);
}

void Graph::capture_end() {
  TORCH_CHECK(capturing_, "FooGraph.capture_end: the graph is not capturing (capture_begin first)");
  capturing_ = false;
  detail::captures_underway.fetch_sub(1, std::memory_order_relaxed);
  end_capture_to_pool(device_, stream_);
  try {
    exec_ = driver().end_capture(stream_);
  } catch (const DriverError& e) {
    reset();
    TORCH_CHECK(false, "FooGraph.capture_end: ", e.what());
  }
}

void Graph::replay() {
  TORCH_CHECK(exec_ != nullptr, "FooGraph.replay: nothing to replay (capture_begin and capture_end first)");
  arm_device_errors_for_replay(device_);
  driver().launch_graph(exec_, current_native_stream(device_));
}

void Graph::reset() {
  if (capturing_) {  // abandoned: end it and drop what it recorded
    capturing_ = false;
    detail::captures_underway.fetch_sub(1, std::memory_order_relaxed);
    end_capture_to_pool(device_, stream_);
    try {
      driver().destroy_graph(driver().end_capture(stream_));
    } catch (const DriverError&) {  // an invalidated capture: ended all the same
    }
  }
  if (exec_ != nullptr) {
    const GraphHandle exec = exec_;
    exec_ = nullptr;
    driver().destroy_graph(exec);
  }
  if (pool_ != 0) {
    const uint64_t id = pool_;
    pool_ = 0;
    release_pool(id);
  }
}

size_t Graph::size() const { return exec_ == nullptr ? 0 : driver().graph_size(exec_); }

bool current_stream_capturing(c10::DeviceIndex device) {
  if (detail::captures_underway.load(std::memory_order_relaxed) == 0) return false;
  return driver().is_capturing(current_native_stream(device));
}

}  // namespace foo::runtime
