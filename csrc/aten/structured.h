#pragma once
// ATen's structured meta functions (at::meta::structured_<op>, exported by libtorch) run for foo:
// they check the arguments and decide every output's shape, dtype and strides exactly as the CPU
// does. StructuredOutputs<Meta, N> supplies the outputs they ask for, as torchgen's generated
// set_output wrappers do for in-tree backends:
// - a functional call (undefined out) gets a new tensor with the strides the meta asked for;
// - an out= (or in-place) call has its tensor checked (dtype, device) and resized (a warning when
//   a non-empty out is resized); if the meta needs exact strides (set_output_strided) and the
//   given tensor has others, the op writes a temporary "proxy" that finish() copies back.
// Usage, the manifest-facing wrapper of a structured op:
//   StructuredOutputs<at::meta::structured_gather> op({&out});
//   op.meta(self, dim, index, sparse_grad);
//   gather_impl(self, dim, index, op.output(0));   // the impl() torchgen would call
//   op.finish();                                   // assigns `out` / copies a proxy back
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>

#include <array>
#include <optional>
#include <type_traits>

namespace foo::native {

template <class Meta, size_t N = 1>
class StructuredOutputs final : public Meta {
 public:
  explicit StructuredOutputs(std::array<at::Tensor*, N> outs) : outs_(outs) {}

  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    set(i, sizes, strides, options, /*exact_strides=*/true);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    set(i, sizes, strides, options, /*exact_strides=*/false);
  }
  const at::Tensor& maybe_get_output(int64_t i) override {
    return proxies_[i].has_value() ? *proxies_[i] : *outs_[i];
  }

  // The tensor the op writes for output i (the proxy when there is one).
  const at::Tensor& output(int64_t i = 0) { return maybe_get_output(i); }

  // After the op wrote its outputs: out= tensors receive their proxies' values.
  void finish() {
    for (size_t i = 0; i < N; ++i) {
      if (proxies_[i].has_value()) outs_[i]->copy_(*proxies_[i]);
    }
  }

 private:
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions options,
           bool exact_strides) {
    at::Tensor& out = *outs_[i];
    if (!out.defined()) {
      out = strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
    } else {
      TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                  out.dtype(), " instead");
      TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
                  ", but got ", out.device(), " instead");
      // Only a resized out is restrided; otherwise its own strides stand (as on the CPU).
      if (at::native::resize_output(out, sizes)) {
        if (!strides.empty()) {
          out.as_strided_(sizes, strides);
        } else if (options.memory_format_opt().has_value()) {
          out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
        }
      }
      if (exact_strides && !strides.empty() && out.strides() != strides) {
        proxies_[i] = at::empty_strided(sizes, strides, options);
      }
    }
    // An iterator-based meta (index.Tensor) registers the output with its iterator last.
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>) {
      Meta::set_output_raw_strided(i, sizes, strides, options);
    }
  }

  std::array<at::Tensor*, N> outs_;
  std::array<std::optional<at::Tensor>, N> proxies_;
};

}  // namespace foo::native
