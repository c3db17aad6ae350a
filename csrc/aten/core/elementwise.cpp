#include "aten/core/elementwise.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <c10/core/DynamicCast.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/stream.h"

namespace foo::native {
namespace {

// A host scalar operand (a Python number: x * 0.3) as kernels read it: in their compute type
// (opmath: float for the 16-bit floats; kernels/elementwise.cuh). Rounded to the operand's dtype
// first, as TensorIterator's promotion converted it, unless the op reads it unrounded
// (`wrapped_numbers: {other: compute}` in the manifest: the CPU's mul and div kernels take
// original_scalar_value<opmath_t>). An unchecked cast, as the CPU (which casts the 0-dim tensor)
// and CUDA (fetch_and_cast) read it: int8 + 1000 wraps there rather than raising an overflow error.
void write_scalar(unsigned char (&bytes)[16], const at::TensorIteratorBase& iter, int k, at::ScalarType dtype,
                  bool unrounded) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "foo elementwise scalar", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    static_assert(sizeof(opmath_t) <= 16);
    const at::TensorBase& value = iter.tensor_base(k);
    // original_scalar_value only reads; it is not declared const
    const opmath_t converted =
        unrounded ? const_cast<at::TensorIteratorBase&>(iter).original_scalar_value<opmath_t>(k)
                  : static_cast<opmath_t>(c10::fetch_and_cast<scalar_t>(value.scalar_type(), value.const_data_ptr()));
    std::memcpy(bytes, &converted, sizeof(opmath_t));
  });
}

// `scalars_from` is the iterator the op built (its scalar operands keep their original values);
// `iter` may be the casting iterator of run_elementwise's slow path, with the same operand order.
foo::kernels::ElementwiseGeometry geometry_of(const at::TensorIteratorBase& iter,
                                              c10::ArrayRef<at::ScalarType> operand_dtypes,
                                              const at::TensorIteratorBase& scalars_from, uint32_t unrounded_inputs) {
  foo::kernels::ElementwiseGeometry g;
  g.numel = iter.numel();
  g.ndim = static_cast<int32_t>(iter.ndim());
  TORCH_INTERNAL_ASSERT(g.ndim <= foo::kernels::kMaxDims && iter.ntensors() <= foo::kernels::kMaxOperands);
  for (int d = 0; d < g.ndim; ++d) g.sizes[d] = iter.shape()[d];
  g.contiguous = g.ndim <= 1;
  for (int k = 0; k < iter.ntensors(); ++k) {
    if (k >= iter.noutputs() && iter.is_cpu_scalar(k)) {
      const bool unrounded = (unrounded_inputs >> (k - iter.noutputs())) & 1u;
      write_scalar(g.scalars[k], scalars_from, k, operand_dtypes[k], unrounded);
      continue;  // data stays null: the kernel reads the scalar
    }
    g.data[k] = static_cast<char*>(iter.data_ptr(k));
    for (int d = 0; d < g.ndim; ++d) g.strides[k][d] = iter.strides(k)[d];
    if (g.ndim == 1 && iter.strides(k)[0] != iter.element_size(k)) g.contiguous = false;
  }
  g.index32 = !force_64bit_indexing() && iter.can_use_32bit_indexing();
  if (force_64bit_indexing()) g.contiguous = false;
  if (g.index32) {
    for (int d = 0; d < g.ndim; ++d) g.dividers[d] = foo::kernels::IntDivider32(static_cast<uint32_t>(g.sizes[d]));
  }
  return g;
}

bool operands_match(const at::TensorIteratorBase& iter, at::ScalarType output_dtype,
                    c10::ArrayRef<at::ScalarType> input_dtypes) {
  if (iter.dtype(0) != output_dtype || iter.ndim() > foo::kernels::kMaxDims) return false;
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    const int k = iter.noutputs() + static_cast<int>(i);
    if (!iter.is_cpu_scalar(k) && iter.dtype(k) != input_dtypes[i]) return false;
  }
  return true;
}

}  // namespace

bool force_64bit_indexing() {
  static const bool forced = [] {
    const char* value = std::getenv("TORCH_FOO_FORCE_64BIT_INDEXING");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return forced;
}

void run_elementwise(const at::TensorIteratorBase& iter, at::ScalarType output_dtype,
                     c10::ArrayRef<at::ScalarType> input_dtypes, ElementwiseLaunch launch, uint32_t unrounded_inputs) {
  TORCH_INTERNAL_ASSERT(iter.noutputs() == 1 && iter.ninputs() == static_cast<int>(input_dtypes.size()));
  if (iter.numel() == 0) return;
  c10::SmallVector<at::ScalarType, foo::kernels::kMaxOperands> dtypes{output_dtype};  // on the stack
  dtypes.append(input_dtypes.begin(), input_dtypes.end());
  const auto stream = foo::runtime::current_native_stream(iter.tensor(0).device().index());
  if (operands_match(iter, output_dtype, input_dtypes)) {
    launch(stream, geometry_of(iter, dtypes, iter, unrounded_inputs));
    return;
  }
  // Slow path, for mixed dtypes or too many dims: cast inputs on the device, compute into a
  // temporary of the kernel's output dtype, cast that into the real output.
  const at::Tensor& out = iter.tensor(0);
  const bool too_many_dims = iter.ndim() > foo::kernels::kMaxDims;
  at::Tensor result = out;
  if (out.scalar_type() != output_dtype || too_many_dims) {
    result = at::empty(out.sizes(), out.options().dtype(output_dtype));
  }
  auto config = at::TensorIteratorConfig();
  config.check_all_same_dtype(false).resize_outputs(false).set_check_mem_overlap(false).allow_cpu_scalars(true);
  config.add_output(result);
  std::vector<at::Tensor> inputs;
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    const int k = iter.noutputs() + static_cast<int>(i);
    at::Tensor input = iter.tensor(k);
    if (!iter.is_cpu_scalar(k)) {
      if (too_many_dims) input = input.expand(out.sizes()).contiguous();
      if (input.scalar_type() != input_dtypes[i]) input = input.to(input_dtypes[i]);
    }
    inputs.push_back(input);
    config.add_const_input(inputs.back());
  }
  auto cast_iter = config.build();
  launch(stream, geometry_of(cast_iter, dtypes, iter, unrounded_inputs));
  if (!result.is_same(out)) out.copy_(result);
}

void run_elementwise(const at::TensorIteratorBase& iter, ElementwiseLaunch launch) {
  // A plain array: GCC 12 warned about the SmallVector it replaced, once inlined (-Wmaybe-uninitialized).
  std::array<at::ScalarType, foo::kernels::kMaxOperands> inputs;
  inputs.fill(iter.common_dtype());
  TORCH_INTERNAL_ASSERT(iter.ninputs() < foo::kernels::kMaxOperands);
  run_elementwise(iter, iter.common_dtype(), c10::ArrayRef<at::ScalarType>(inputs.data(), iter.ninputs()), launch);
}

}  // namespace foo::native
