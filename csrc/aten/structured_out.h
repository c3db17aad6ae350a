#pragma once
// Runs an ATen structured meta function (at::meta::structured_<op>, exported in
// ATen/ops/<op>_meta.h) on the host to check arguments and shape the outputs, the way ATen's own
// structured wrappers do: outputs the caller passed undefined (functional calls) are allocated
// with the sizes, strides and options the meta function asks for; given ones (out=) have their
// dtype checked and are resized, and restrided only if resized. The op's kernel then writes the
// outputs through their strides, so no proxy output is ever needed.
//
//   StructuredOutputs<at::meta::structured_avg_pool2d, 1> meta({&out});
//   meta.meta(self, kernel_size, ...);   // out is now allocated / resized
//
// Generated wrappers (codegen) may replace this; an op's host code then keeps only its kernel call.
#include <array>

#include <ATen/ATen.h>
#include <ATen/TensorMeta.h>
#include <ATen/native/Resize.h>

namespace foo::native {

template <class Meta, size_t N>
class StructuredOutputs final : public Meta {
 public:
  explicit StructuredOutputs(std::array<at::Tensor*, N> outputs) : outputs_(outputs) {}

  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    set(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    set(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return *outputs_.at(i); }

 private:
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    at::Tensor& out = *outputs_.at(i);
    if (!out.defined()) {
      out = strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
      return;
    }
    TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                out.dtype(), " instead");
    TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
                ", but got ", out.device(), " instead");
    if (at::native::resize_output(out, sizes)) {
      if (!strides.empty()) {
        out.as_strided_(sizes, strides);
      } else if (options.memory_format_opt().has_value()) {
        out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
      }
    }
  }

  std::array<at::Tensor*, N> outputs_;
};

}  // namespace foo::native
