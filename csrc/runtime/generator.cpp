#include "runtime/generator.h"

#include <cstring>
#include <deque>
#include <mutex>

#include <ATen/Utils.h>
#include <ATen/ops/empty.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/graph.h"

namespace foo::runtime {
namespace {
constexpr size_t kStateBytes = 2 * sizeof(uint64_t);  // seed, offset
}

FooGeneratorImpl::FooGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void FooGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t FooGeneratorImpl::seed() {
  const auto random = c10::detail::getNonDeterministicRandom(/*is_cuda=*/true);
  set_current_seed(random);
  return random;
}

void FooGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.numel() == static_cast<int64_t>(kStateBytes) &&
                  new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
              "foo generator: expected a ByteTensor of ", kStateBytes, " bytes as RNG state, got ",
              new_state.numel(), " elements of ", new_state.dtype());
  uint64_t words[2];
  std::memcpy(words, new_state.data(), kStateBytes);
  seed_ = words[0];
  offset_ = words[1];
}

c10::intrusive_ptr<c10::TensorImpl> FooGeneratorImpl::get_state() const {
  auto state = at::empty({static_cast<int64_t>(kStateBytes)}, at::TensorOptions().dtype(at::kByte));
  const uint64_t words[2] = {seed_, offset_};
  std::memcpy(state.data_ptr(), words, kStateBytes);
  return state.getIntrusivePtr();
}

PhiloxState FooGeneratorImpl::reserve(uint64_t increment) {
  // A captured kernel keeps the (seed, offset) it was launched with, so every replay would draw the
  // same numbers; CUDA's graph-safe generator reads the offset from device memory instead, which
  // foo's random kernels do not do yet. Refused rather than silently repeating.
  TORCH_CHECK(!current_stream_capturing(device().index()),
              "foo: random number generation (dropout, rand, randn, bernoulli, ...) while capturing a graph is "
              "not supported yet: each replay would repeat the captured numbers. Draw them outside the captured "
              "region (e.g. pass a mask in as a static input) or use dropout p=0 in the captured step");
  // Offsets advance in multiples of 4: one Philox call yields four 32-bit numbers.
  const PhiloxState state{seed_, offset_};
  offset_ += (increment + 3) / 4 * 4;
  return state;
}

FooGeneratorImpl* FooGeneratorImpl::clone_impl() const {
  auto* copy = new FooGeneratorImpl(device().index(), seed_);
  copy->offset_ = offset_;
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  check_device_index(device);
  // Leaked with the process: generators outlive interpreter shutdown.
  static auto* generators = new std::deque<at::Generator>();
  static std::once_flag once;
  std::call_once(once, [] {
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      generators->push_back(at::make_generator<FooGeneratorImpl>(d));
    }
  });
  return (*generators)[device];
}

at::Generator new_generator(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  check_device_index(device);
  return at::make_generator<FooGeneratorImpl>(device);
}

}  // namespace foo::runtime
