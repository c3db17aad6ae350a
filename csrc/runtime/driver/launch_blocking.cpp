// TORCH_FOO_LAUNCH_BLOCKING (kernels/core/launch_blocking.h): the flag and the launch API's wait.
#include "kernels/core/launch_blocking.h"

#include "runtime/driver/driver.h"

namespace foo::kernels::launch_blocking::detail {

std::atomic<bool> g_blocking{false};

void wait(void* stream) { foo::runtime::driver().synchronize_stream(stream); }

}  // namespace foo::kernels::launch_blocking::detail
