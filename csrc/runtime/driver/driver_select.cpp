// Picks the process-wide driver from TORCH_FOO_DRIVER on first use. That driver hosts the
// emulator (csrc/sim): sim kernels run as host tasks on its streams.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "driver.h"
#include "kernels/core/launch_blocking.h"
#include "sim/launch.h"

namespace foo::runtime {
namespace {
// The singleton is leaked on purpose: its stream workers may still be running
// (or blocked waiting for work) at process exit, and destroying a static
// driver then would join or free under them while static destructors and the
// Python interpreter tear down — the classic exit-time crash or hang. Leaked,
// the workers only ever touch heap state that stays valid until _exit.
std::atomic<Driver*> g_driver{nullptr};
// A mutex rather than std::call_once: a failed selection (bad env value) must
// be retryable, and libstdc++'s call_once can hang after an exception
// (GCC bug 66146).
std::mutex g_select_mu;

void enqueue_on_driver(void* stream, foo::sim::StreamTask task, void* arg) {
  driver().enqueue_host_fn(stream, task, arg);
}
}  // namespace

bool built_with_cuda() {
#ifdef FOO_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Driver> make_driver(const std::string& choice) {
  if (choice == "sim") return make_sim_driver();
  if (choice == "cuda") {
#ifdef FOO_WITH_CUDA
    std::string why;
    if (cuda_probe_device_count(&why) < 1)
      throw DriverError("TORCH_FOO_DRIVER=cuda but no GPU is usable: " + why);
    return make_cuda_driver();
#else
    throw DriverError("TORCH_FOO_DRIVER=cuda but torch_foo was built without "
                      "CUDA (FOO_WITH_CUDA); use auto or sim");
#endif
  }
  if (choice == "auto" || choice.empty()) {
#ifdef FOO_WITH_CUDA
    std::string why;
    if (cuda_probe_device_count(&why) >= 1) return make_cuda_driver();
#endif
    return make_sim_driver();
  }
  throw DriverError("TORCH_FOO_DRIVER='" + choice +
                    "' is invalid: expected one of auto, sim, cuda");
}

Driver& driver() {
  if (Driver* d = g_driver.load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lk(g_select_mu);
  if (Driver* d = g_driver.load(std::memory_order_relaxed)) return *d;
  const char* env = std::getenv("TORCH_FOO_DRIVER");
  Driver* d = make_driver(env ? env : "auto").release();  // leaked, see above
  // Read once, here, as CUDA reads CUDA_LAUNCH_BLOCKING when it creates its context.
  const char* blocking = std::getenv("TORCH_FOO_LAUNCH_BLOCKING");
  foo::kernels::launch_blocking::detail::g_blocking.store(blocking != nullptr && std::strcmp(blocking, "1") == 0,
                                                          std::memory_order_relaxed);
  g_driver.store(d, std::memory_order_release);
  foo::sim::set_stream_queue(&enqueue_on_driver);
  return *d;
}

bool driver_selected() {
  return g_driver.load(std::memory_order_acquire) != nullptr;
}

}  // namespace foo::runtime

namespace foo::kernels {

// Declared in kernels/core/dispatch.h, which FOO_CALL_KERNEL uses to pick the kernel target: the
// driver decides, and the kernels' headers stay free of the driver's.
bool on_cuda() {
  static const bool cuda = std::strcmp(foo::runtime::driver().name(), "cuda") == 0;
  return cuda;
}

}  // namespace foo::kernels
