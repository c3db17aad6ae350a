// Host side of the planted-bug kernels (planted.cu): each function allocates its outputs and
// launches one kernel on the current stream. tests/test_sim_sanitizer.py drives them.
#include <torch/extension.h>
#include <torch_foo/extension.h>

FOO_DECLARE_KERNEL_IN(planted, void, past_end, (torch_foo::Stream, float*, int64_t))
FOO_DECLARE_KERNEL_IN(planted, void, negative_index, (torch_foo::Stream, const float*, float*, int64_t))
FOO_DECLARE_KERNEL_IN(planted, void, read_stale, (torch_foo::Stream, const float*, float*, int64_t))
FOO_DECLARE_KERNEL_IN(planted, void, shared_past_end, (torch_foo::Stream, const float*, float*, int64_t))
FOO_DECLARE_KERNEL_IN(planted, void, block_sum, (torch_foo::Stream, const float*, float*, int64_t, bool))
FOO_DECLARE_KERNEL_IN(planted, void, warp_rotate, (torch_foo::Stream, const float*, float*, bool))
FOO_DECLARE_KERNEL_IN(planted, void, scale, (torch_foo::Stream, const float*, float*, int64_t))
FOO_DECLARE_KERNEL_IN(planted, void, add_one, (torch_foo::Stream, const float*, float*, int64_t, int*))

namespace {
torch::Tensor check(const torch::Tensor& x) {
  TORCH_CHECK(x.device().type() == c10::DeviceType::PrivateUse1, "expected a foo tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "expected a contiguous float tensor");
  return x;
}
}  // namespace

torch::Tensor past_end(int64_t n) {
  auto y = torch::empty({n}, torch::dtype(torch::kFloat).device(c10::Device("foo")));
  FOO_CALL_KERNEL_IN(planted, past_end, torch_foo::current_stream(y), y.mutable_data_ptr<float>(), n);
  return y;
}

torch::Tensor negative_index(const torch::Tensor& x) {
  check(x);
  auto y = torch::empty_like(x);
  FOO_CALL_KERNEL_IN(planted, negative_index, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), x.numel());
  return y;
}

// `address`: the data pointer of a tensor the caller has already freed.
torch::Tensor read_stale(int64_t address, int64_t n) {
  auto out = torch::empty({1}, torch::dtype(torch::kFloat).device(c10::Device("foo")));
  FOO_CALL_KERNEL_IN(planted, read_stale, torch_foo::current_stream(out), reinterpret_cast<const float*>(address),
                     out.mutable_data_ptr<float>(), n);
  return out;
}

torch::Tensor shared_past_end(const torch::Tensor& x) {
  check(x);
  auto y = torch::empty_like(x);
  FOO_CALL_KERNEL_IN(planted, shared_past_end, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), x.numel());
  return y;
}

torch::Tensor block_sum(const torch::Tensor& x, bool barrier) {
  check(x);
  TORCH_CHECK(x.numel() % 256 == 0, "block_sum: a multiple of 256 elements");
  auto out = torch::empty({x.numel() / 256}, x.options());
  FOO_CALL_KERNEL_IN(planted, block_sum, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     out.mutable_data_ptr<float>(), out.numel(), barrier);
  return out;
}

torch::Tensor warp_rotate(const torch::Tensor& x, bool syncwarp) {
  check(x);
  TORCH_CHECK(x.numel() == 32, "warp_rotate: 32 elements");
  auto y = torch::empty_like(x);
  FOO_CALL_KERNEL_IN(planted, warp_rotate, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), syncwarp);
  return y;
}

// Scales a tensor that was never written: torch.empty's contents.
torch::Tensor scale_uninitialised(int64_t n) {
  auto x = torch::empty({n}, torch::dtype(torch::kFloat).device(c10::Device("foo")));
  auto y = torch::empty_like(x);
  FOO_CALL_KERNEL_IN(planted, scale, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), n);
  return y;
}

std::vector<torch::Tensor> add_one(const torch::Tensor& x) {
  check(x);
  auto y = torch::empty_like(x);
  auto count = torch::zeros({1}, x.options().dtype(torch::kInt));
  FOO_CALL_KERNEL_IN(planted, add_one, torch_foo::current_stream(x), x.const_data_ptr<float>(),
                     y.mutable_data_ptr<float>(), x.numel(), count.mutable_data_ptr<int>());
  return {y, count};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("past_end", &past_end);
  m.def("negative_index", &negative_index);
  m.def("read_stale", &read_stale);
  m.def("shared_past_end", &shared_past_end);
  m.def("block_sum", &block_sum);
  m.def("warp_rotate", &warp_rotate);
  m.def("scale_uninitialised", &scale_uninitialised);
  m.def("add_one", &add_one);
}
