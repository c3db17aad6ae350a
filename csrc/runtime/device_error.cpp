#include "runtime/device_error.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include "kernels/core/launch_blocking.h"
#include "runtime/device.h"

namespace foo::runtime {
namespace {

using foo::kernels::DeviceErrorKind;
using foo::kernels::kDeviceErrorWords;
using Word = unsigned long long;

constexpr Word kComplete = 2;  // the record's state once its fields are written
constexpr int kMaxDevices = 64;

struct DeviceState {
  std::mutex mu;
  Word* word = nullptr;                // kDeviceErrorWords of device memory, never freed
  StreamHandle read_stream = nullptr;  // an otherwise idle stream for reading and clearing the word
  // Armed: a site was handed out since the last clean read that covered every launch with one.
  std::atomic<bool> armed{false};
  uint64_t epoch = 0;                   // sites handed out
  StreamHandle armed_stream = nullptr;  // the one stream they were all for, unless `many`
  bool many = false;
};

std::array<DeviceState, kMaxDevices>& states() {
  static std::array<DeviceState, kMaxDevices> s;
  return s;
}

DeviceState& state(c10::DeviceIndex device) {
  TORCH_INTERNAL_ASSERT(device >= 0 && device < kMaxDevices, "foo: device index ", static_cast<int>(device));
  return states()[static_cast<size_t>(device)];
}

// Op names, numbered in order of first use; 0 is not an op.
std::mutex g_ops_mu;
std::vector<const char*> g_ops{"an op"};

int32_t op_number(const char* op) {
  thread_local const char* last = nullptr;
  thread_local int32_t last_number = 0;
  if (op == last) return last_number;
  std::lock_guard<std::mutex> lock(g_ops_mu);
  int32_t number = -1;
  for (size_t i = 1; i < g_ops.size(); ++i) {
    if (g_ops[i] == op || std::strcmp(g_ops[i], op) == 0) {
      number = static_cast<int32_t>(i);
      break;
    }
  }
  if (number < 0) {
    number = static_cast<int32_t>(g_ops.size());
    g_ops.push_back(op);
  }
  last = op;
  last_number = number;
  return number;
}

std::string op_name(Word number) {
  std::lock_guard<std::mutex> lock(g_ops_mu);
  return number < g_ops.size() ? g_ops[number] : "an op";
}

// The word is zeroed once, with a wait: every kernel launched after this returns sees it zero.
void ensure_word(DeviceState& s, c10::DeviceIndex device) {
  if (s.word != nullptr) return;
  Driver& d = driver();
  auto* word = static_cast<Word*>(d.malloc(device, kDeviceErrorWords * sizeof(Word)));
  StreamHandle stream = d.create_stream(device, 0);
  d.memset_async(word, 0, kDeviceErrorWords * sizeof(Word), stream);
  d.synchronize_stream(stream);
  s.read_stream = stream;
  s.word = word;
}

// The CPU's exception type and message for the record, then which op found it.
void raise(const Word (&w)[kDeviceErrorWords], bool at_the_op) {
  const std::string op = op_name(w[1]);
  const auto value = static_cast<int64_t>(w[3]), dim = static_cast<int64_t>(w[4]), size = static_cast<int64_t>(w[5]);
  const std::string where =
      at_the_op ? "\n(found on the device by a kernel of foo's " + op + ", at the op: TORCH_FOO_LAUNCH_BLOCKING=1)"
                : "\n(found on the device by a kernel of foo's " + op +
                      "; foo reports such errors at the next synchronisation, so the stack trace may point past "
                      "the op: TORCH_FOO_LAUNCH_BLOCKING=1 reports them at the op)";
  std::string message;
  bool index_error = true;  // Python IndexError, else RuntimeError
  switch (static_cast<DeviceErrorKind>(static_cast<int32_t>(w[2]))) {
    case DeviceErrorKind::IndexOutOfRangeInSelf:
      message = "index out of range in self";
      break;
    case DeviceErrorKind::IndexOutOfBoundsDim:
      index_error = false;
      message = c10::str("index ", value, " is out of bounds for dimension ", dim, " with size ", size);
      break;
    case DeviceErrorKind::IndexOutOfBoundsIndex:
      message = c10::str("index ", value, " is out of bounds for dimension ", dim, " with size ", size);
      break;
    case DeviceErrorKind::EmbeddingBackwardIndex:
      message = c10::str("embedding_dense_backward: index ", value, " is out of range for ", size, " embeddings");
      break;
    case DeviceErrorKind::TargetOutOfBounds:
      message = c10::str("Target ", value, " is out of bounds.");
      break;
    case DeviceErrorKind::BceInputRange:
      index_error = false;
      message = "all elements of input should be between 0 and 1";
      break;
    case DeviceErrorKind::BceTargetRange:
      index_error = false;
      message = "all elements of target should be between 0 and 1";
      break;
    case DeviceErrorKind::BernoulliProbability:
      index_error = false;
      message = "Expected p_in >= 0 && p_in <= 1 to be true, but got false.";
      break;
    case DeviceErrorKind::MultiMarginTarget:
      index_error = false;
      message = "target out of range";
      break;
    case DeviceErrorKind::MultilabelMarginTarget:
      index_error = false;
      message = "argument #2 'target' is out of range";
      break;
    case DeviceErrorKind::None:
      index_error = false;
      message = c10::str("foo: a kernel reported an unknown device error (kind ", w[2], ")");
      break;
  }
  TORCH_CHECK_INDEX(!index_error, message, where);
  TORCH_CHECK(false, message, where);
}

// Reads the device's word if armed; raises (and clears it) when it holds an error. `covered`: the
// caller waited for every launch that had a site (so a clean read disarms).
void check(c10::DeviceIndex device, StreamHandle waited, bool whole_device, bool at_the_op) {
  DeviceState& s = state(device);
  if (!s.armed.load(std::memory_order_acquire)) return;
  uint64_t epoch = 0;
  bool covered = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.armed.load(std::memory_order_relaxed) || s.word == nullptr) return;
    epoch = s.epoch;
    covered = !at_the_op && (whole_device || (!s.many && s.armed_stream == waited));
  }
  Driver& d = driver();
  Word w[kDeviceErrorWords] = {};
  d.memcpy_async(w, s.word, sizeof w, CopyKind::DeviceToHost, s.read_stream);
  d.synchronize_stream(s.read_stream);
  if (w[0] != kComplete) {
    if (w[0] == 0 && covered) {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.epoch == epoch) {  // no site handed out meanwhile
        s.armed.store(false, std::memory_order_relaxed);
        s.armed_stream = nullptr;
        s.many = false;
      }
    }
    return;  // none, or one still being written by a kernel the wait did not cover
  }
  // Cleared before raising, so the device stays usable; kernels launched after the raise see 0.
  d.memset_async(s.word, 0, sizeof w, s.read_stream);
  d.synchronize_stream(s.read_stream);
  raise(w, at_the_op);
}

}  // namespace

bool launch_blocking() { return foo::kernels::launch_blocking::enabled(); }

foo::kernels::DeviceErrorSite device_error_site(c10::DeviceIndex device, StreamHandle stream, const char* op,
                                                DeviceErrorKind kind, int64_t dim) {
  DeviceState& s = state(device);
  foo::kernels::DeviceErrorSite site;
  site.op = op_number(op);
  site.kind = kind;
  site.dim = dim;
  std::lock_guard<std::mutex> lock(s.mu);
  ensure_word(s, device);
  if (!s.armed.load(std::memory_order_relaxed)) {
    s.armed_stream = stream;
    s.many = false;
  } else if (s.armed_stream != stream) {
    s.many = true;
  }
  ++s.epoch;
  s.armed.store(true, std::memory_order_release);
  site.word = s.word;
  return site;
}

void raise_device_error_if_blocking(c10::DeviceIndex device) {
  if (launch_blocking()) check(device, nullptr, /*whole_device=*/false, /*at_the_op=*/true);
}

void raise_device_error_after_wait(c10::DeviceIndex device, StreamHandle stream) {
  check(device, stream, /*whole_device=*/false, /*at_the_op=*/false);
}

void raise_device_error_after_device_wait(c10::DeviceIndex device) {
  check(device, nullptr, /*whole_device=*/true, /*at_the_op=*/false);
}

void raise_device_errors_after_event_wait() {
  const int n = std::min<int>(device_count(), kMaxDevices);
  for (int d = 0; d < n; ++d) check(static_cast<c10::DeviceIndex>(d), nullptr, /*whole_device=*/false, false);
}

}  // namespace foo::runtime
