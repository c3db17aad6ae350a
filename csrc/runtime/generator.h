#pragma once
// The foo random generator: a counter-based (Philox) state — a seed and an offset — so a kernel
// can draw reproducibly from (seed, offset, element index) on either driver.
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace foo::runtime {

struct PhiloxState {
  uint64_t seed;
  uint64_t offset;
};

class FooGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit FooGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;  // a fresh non-deterministic seed, as torch.cuda's
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // Reserves `increment` counters for one kernel launch (callers hold the generator's mutex_).
  PhiloxState reserve(uint64_t increment);

 private:
  FooGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

}  // namespace foo::runtime
