#include "sim_graph.h"

#include <algorithm>

namespace foo::runtime::sim {

std::string not_permitted_while_capturing(const std::string& what) {
  return "operation not permitted when stream is capturing: " + what +
         " (a graph capture records the stream's work without running it, so nothing may wait for it, read "
         "its results or depend on host memory the graph cannot replay; the capture is invalidated)";
}

SimGraph::~SimGraph() {
  for (const GraphNode& n : nodes_) n.fn(n.arg, false);
}

void SimGraph::run() const {
  for (const GraphNode& n : nodes_) n.fn(n.arg, true);
}

SimCapture::~SimCapture() {
  for (const GraphNode& n : nodes_) n.fn(n.arg, false);
}

void SimCapture::add(HostFn fn, void* arg, SimStream* from) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (invalid_.empty()) {
      try {
        nodes_.push_back(GraphNode{fn, arg});
      } catch (...) {
        invalid_ = "out of host memory recording a task";
        fn(arg, false);
        throw;
      }
      last_node_[from] = nodes_.size();
      return;
    }
  }
  fn(arg, false);  // an invalidated capture keeps nothing
}

void SimCapture::invalidate(const std::string& why) {
  std::lock_guard<std::mutex> lk(mu_);
  if (invalid_.empty()) invalid_ = why;
}

std::string SimCapture::invalid_reason() {
  std::lock_guard<std::mutex> lk(mu_);
  return invalid_;
}

size_t SimCapture::position() {
  std::lock_guard<std::mutex> lk(mu_);
  return nodes_.size();
}

void SimCapture::joined(SimStream* s) {
  std::lock_guard<std::mutex> lk(mu_);
  if (std::find(joined_.begin(), joined_.end(), s) == joined_.end()) joined_.push_back(s);
}

void SimCapture::waited_on(SimStream* on, size_t position) {
  std::lock_guard<std::mutex> lk(mu_);
  size_t& up_to = joined_up_to_[on];
  up_to = std::max(up_to, position);
}

std::vector<SimStream*> SimCapture::joined_streams() {
  std::lock_guard<std::mutex> lk(mu_);
  return joined_;
}

std::unique_ptr<SimGraph> SimCapture::finish() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!invalid_.empty()) throw DriverError("foo sim: the graph capture was invalidated: " + invalid_);
  for (SimStream* s : joined_) {
    const auto last = last_node_.find(s);
    const auto up_to = joined_up_to_.find(s);
    if (last != last_node_.end() && (up_to == joined_up_to_.end() || up_to->second < last->second)) {
      throw DriverError(
          "foo sim: capture unjoined: a stream that joined the capture has work the capturing stream never "
          "waited for (record an event on it and wait on that event from the capturing stream before "
          "ending the capture; cudaErrorStreamCaptureUnjoined)");
    }
  }
  auto graph = std::make_unique<SimGraph>(std::move(nodes_));
  nodes_.clear();
  return graph;
}

}  // namespace foo::runtime::sim
