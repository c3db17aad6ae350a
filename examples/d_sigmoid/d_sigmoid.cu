// sigmoid and its derivative, for every floating dtype: the forward and backward kernels of an
// autograd function. Dtype dispatch is torch_foo::dispatch, the analogue of AT_DISPATCH_FLOATING_TYPES;
// 16-bit floats compute in float (opmath_t), as PyTorch's CUDA kernels do.
#include <torch_foo/kernel.h>

namespace d_sigmoid::FOO_TARGET {

template <typename T>
__device__ __forceinline__ torch_foo::opmath_t<T> sigmoid(torch_foo::opmath_t<T> x) {
  using acc_t = torch_foo::opmath_t<T>;
  return acc_t(1) / (acc_t(1) + torch_foo::math::exp(-x));
}

template <typename T>
__global__ void forward_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(sigmoid<T>(static_cast<torch_foo::opmath_t<T>>(x[i])));
}

// d/dx sigmoid(x) = s * (1 - s), times the incoming gradient.
template <typename T>
__global__ void backward_kernel(const T* grad, const T* x, T* grad_x, int64_t n) {
  using acc_t = torch_foo::opmath_t<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const acc_t s = sigmoid<T>(static_cast<acc_t>(x[i]));
    grad_x[i] = T(static_cast<acc_t>(grad[i]) * s * (acc_t(1) - s));
  }
}

void forward(torch_foo::Stream stream, torch_foo::DType dtype, const void* x, void* y, int64_t n) {
  if (n == 0) return;
  torch_foo::dispatch<torch_foo::kFloatingTypes>(dtype, "d_sigmoid.forward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    torch_foo::launch_independent("d_sigmoid::forward", forward_kernel<T>, torch_foo::blocks_for(n), dim3(256),
                                  stream, static_cast<const T*>(x), static_cast<T*>(y), n);
  });
}

void backward(torch_foo::Stream stream, torch_foo::DType dtype, const void* grad, const void* x, void* grad_x,
              int64_t n) {
  if (n == 0) return;
  torch_foo::dispatch<torch_foo::kFloatingTypes>(dtype, "d_sigmoid.backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    torch_foo::launch_independent("d_sigmoid::backward", backward_kernel<T>, torch_foo::blocks_for(n), dim3(256),
                                  stream, static_cast<const T*>(grad), static_cast<const T*>(x),
                                  static_cast<T*>(grad_x), n);
  });
}

}  // namespace d_sigmoid::FOO_TARGET
