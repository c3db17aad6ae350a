#pragma once
// Copies that move elements by coordinates (shape_copy.cu): flip, roll, repeat, tril/triu,
// reflection and replication padding; the sums of unfold's and padding's backward;
// tril_indices/triu_indices.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"
#include "kernels/core/geometry.h"

namespace foo::kernels {

// map_copy: out[c] = in[m(c)] for every coordinate c of the output, m dim by dim:
enum class CoordMap : int8_t {
  Same,  // m(c) = c
  Flip,  // size - 1 - c
  Roll,  // (c - shift) mod size: the element `shift` places before, cyclically
  Wrap,  // c mod in_size (repeat: the output tiles the input)
  // Padding: x = c - shift (shift = the padding before the input, negative crops) mapped into
  // [0, in_size). Reflect mirrors about the edge elements (-x, 2 (in_size - 1) - x; the callers
  // check |padding| < in_size, so one reflection lands inside); Clamp repeats them.
  Reflect,
  Clamp,
};

struct MapDim {
  int64_t size = 1;      // of the output
  int64_t in_size = 1;   // Wrap
  int64_t shift = 0;     // Roll, in [0, size); Reflect/Clamp: the padding before the input
  int64_t out_stride = 0, in_stride = 0;  // in elements
  CoordMap map = CoordMap::Same;
};

constexpr int kMaxPaddedDims = 3;  // pad_backward_sum: reflection/replication pad 1-d to 3-d

enum class Triangle : int8_t { None, Lower, Upper };

struct MapCopy {
  int32_t ndim = 0;  // outermost dim first
  MapDim dims[kMaxDims];
  int64_t numel = 0;
  int32_t element_size = 0;
  // tril/triu: elements off the kept triangle of the last two dims are written as zero
  // (col - row <= diagonal kept by Lower, >= diagonal by Upper).
  Triangle triangle = Triangle::None;
  int64_t diagonal = 0;
};

// unfold_backward: grad_input (contiguous, input_sizes) = the sum of the windows of grad_in that
// cover each element. grad_in has the input's dims with `dim` cut into `windows` windows, plus a
// last dim of `size`; its strides are in elements.
struct UnfoldBackward {
  int32_t ndim = 0;                      // of the input
  int64_t sizes[kMaxDims] = {};          // input sizes
  int64_t grad_strides[kMaxDims + 1] = {};  // grad_in strides, the window position last
  int32_t dim = 0;
  int64_t size = 0, step = 1, windows = 0;
};

// How many elements rows 0..r-1 of the lower (or upper) triangle of an r x col matrix hold, with
// diagonal `offset` (host and device: the size of tril_indices's result, and each row's start).
FOO_HD int64_t triangle_elements_before(int64_t r, int64_t col, int64_t offset, bool upper) {
  // sum over i < r of clamp(i + a, 0, col): row i keeps the columns below i + a.
  auto kept = [col](int64_t rows, int64_t a) {
    const int64_t first = 1 - a > 0 ? 1 - a : 0;            // first row keeping anything
    const int64_t full = col - a > first ? col - a : first;  // first row keeping every column
    const int64_t mid = rows < first ? first : (rows > full ? full : rows);
    const int64_t partial = (mid - first) * (2 * a + first + mid - 1) / 2;  // sum of i + a over [first, mid)
    return partial + (rows > full ? rows - full : 0) * col;
  };
  return upper ? r * col - kept(r, offset) : kept(r, offset + 1);
}

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, map_copy, (Stream stream, const MapCopy& m, const void* in, void* out))
// The transpose of a padding map_copy (dims Same, Reflect or Clamp, at most kMaxPaddedDims of them
// not Same; a Same dim has in_size == size): every element of grad_input (in_size, in_stride)
// is the sum of the grad_output elements (size, out_stride) that the copy reads from it, added in
// increasing output order in opmath_t and rounded once. A gather: no atomics, deterministic.
FOO_DECLARE_KERNEL(void, pad_backward_sum, (Stream stream, DType dtype, const MapCopy& m, const void* grad_output,
                                            void* grad_input, int64_t numel))
FOO_DECLARE_KERNEL(void, unfold_backward_sum, (Stream stream, DType dtype, const UnfoldBackward& u,
                                               const void* grad_in, void* grad_input, int64_t numel))
// The `count` (row, col) pairs of the lower (or upper) triangle of a row x col matrix with
// diagonal `offset`, row-major, as out[0][k] = row, out[1][k] = col (int32 or int64 `dtype`).
FOO_DECLARE_KERNEL(void, triangle_indices, (Stream stream, DType dtype, void* out, int64_t count, int64_t row,
                                            int64_t col, int64_t offset, bool upper))
