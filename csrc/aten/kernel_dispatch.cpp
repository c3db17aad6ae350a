#include <cstring>

#include "kernels/dispatch.h"

namespace foo::kernels {

bool on_cuda() {
  static const bool cuda = std::strcmp(foo::runtime::driver().name(), "cuda") == 0;
  return cuda;
}

}  // namespace foo::kernels
