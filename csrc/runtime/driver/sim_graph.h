// Sim graphs: what a capturing sim stream records instead of running it, and the executable
// graph end_capture makes of it. A recorded task is a replayable host task (driver.h,
// enqueue_replayable): a kernel launch keeps its copied argument pack, grid, block and shared
// bytes; a copy or memset its operands. A replay is one task on the replay stream that runs the
// recorded tasks in the order they were queued, so it costs no dispatcher or host work per op.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver.h"

namespace foo::runtime::sim {

class SimStream;

// One recorded task: fn(arg, true) runs it (any number of times), fn(arg, false) releases it.
struct GraphNode {
  HostFn fn;
  void* arg;
};

class SimGraph {
 public:
  explicit SimGraph(std::vector<GraphNode> nodes) : nodes_(std::move(nodes)) {}
  ~SimGraph();  // releases every node
  SimGraph(const SimGraph&) = delete;
  SimGraph& operator=(const SimGraph&) = delete;
  // Runs the nodes in order on the calling (stream worker) thread; the first exception ends the
  // replay and becomes the stream's asynchronous error, as a failing kernel's does.
  void run() const;
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<GraphNode> nodes_;
};

// A capture in progress, shared by its origin stream and the streams that joined it (by waiting on
// an event recorded in it). Thread-safe.
class SimCapture {
 public:
  explicit SimCapture(SimStream* origin) : origin(origin) {}
  ~SimCapture();  // releases the nodes no graph took
  SimCapture(const SimCapture&) = delete;
  SimCapture& operator=(const SimCapture&) = delete;

  SimStream* const origin;

  // Takes ownership of the task; after an invalidation only releases it.
  void add(HostFn fn, void* arg, SimStream* from);
  // The first reason is kept; end_capture reports it.
  void invalidate(const std::string& why);
  std::string invalid_reason();

  // Where an event recorded on `on` now sits in the capture.
  size_t position();
  void joined(SimStream* s);
  // A capturing stream waited on an event recorded on `on` at `position`: `on`'s work up to there
  // is joined back.
  void waited_on(SimStream* on, size_t position);
  // The streams that joined, to detach at the end.
  std::vector<SimStream*> joined_streams();
  // The graph, or a DriverError for an invalidated or unjoined capture. Only once.
  std::unique_ptr<SimGraph> finish();

 private:
  std::mutex mu_;
  std::vector<GraphNode> nodes_;
  std::string invalid_;
  std::map<SimStream*, size_t> last_node_;     // per stream: its nodes so far end at this position
  std::map<SimStream*, size_t> joined_up_to_;  // per joined stream: its work joined back up to here
  std::vector<SimStream*> joined_;
};

// The message of every forbidden call on a capturing stream, CUDA's wording first.
std::string not_permitted_while_capturing(const std::string& what);

}  // namespace foo::runtime::sim
